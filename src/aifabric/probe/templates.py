"""Ready-to-use job templates that run ``aifabric probe --local`` on every node of a cluster and
merge the per-node archives (``aifabric probe --template slurm|slurm-array|daemonset``).

Every node runs the same step (:func:`node_script`): probe this machine into node-local
scratch under the node's name (``--name``), then copy the single ``NAME.tar.gz`` into
``SHARED/parts/`` under a temporary name and rename it into place, so the shared directory only
ever holds whole archives (one file per node, no tree of small files on a parallel file
system) and a node probed twice leaves its newer archive. The merge then reads
``SHARED/parts/*.tar.gz`` (:mod:`aifabric.probe.merge`).

* ``slurm``: one allocation of N nodes (``#SBATCH --nodes=N --ntasks-per-node=1``) and one
  ``srun`` step with one task per node, so every node of the allocation is probed exactly
  once; the batch step then lists the allocation (``scontrol show hostnames``) as the expected
  hosts and merges. Syntax: sbatch(1) https://slurm.schedmd.com/sbatch.html and srun(1)
  https://slurm.schedmd.com/srun.html; the node name is ``SLURMD_NODENAME``, which both set.
* ``slurm-array``: ``#SBATCH --array=0-(N-1)%C`` with ``--nodes=1 --exclusive``: each task
  probes whatever node it got, C at a time. An array does not choose nodes: some may get two
  tasks and some none; the merge's ``--expect`` names the missed ones to resubmit with
  ``--nodelist``. Syntax: https://slurm.schedmd.com/job_array.html.
* ``daemonset``: a Kubernetes ``apps/v1`` DaemonSet (one pod per node, tolerating every taint,
  optional nodeSelector) with ``hostNetwork: true`` (the node's interfaces), a privileged
  container (``ethtool -m`` module EEPROM reads, RDMA devices), ``/sys`` from the host
  read-only and the output on a hostPath or a ReadWriteMany PVC. The container probes once,
  then sleeps (a DaemonSet pod that exits is restarted); its readiness probe is the archive's
  existence, so ``kubectl rollout status`` waits for every node. Syntax:
  https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/ and
  https://kubernetes.io/docs/concepts/storage/volumes/#hostpath.

Values are checked (:class:`~aifabric.errors.InputError`) and quoted for where they land
(``shlex.quote`` in shell text, YAML by the dumper), so nothing a user passes can add a line
to the script or a key to the manifest.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

import yaml

from aifabric.errors import InputError

__all__ = ["TEMPLATES", "TemplateOptions", "node_script", "render_template"]

TEMPLATES = ("slurm", "slurm-array", "daemonset")

_SLURM_VALUE_RE = re.compile(r"^[A-Za-z0-9_.,:+=@%-]{1,200}$")
"""A value safe on an ``#SBATCH`` line (sbatch reads those itself, no shell quoting)."""
_DNS_LABEL_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
"""A Kubernetes name (RFC 1123 label: namespaces, object and volume names)."""
_LABEL_KEY_RE = re.compile(r"^([a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?/)?[A-Za-z0-9]"
                           r"([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")
_LABEL_VALUE_RE = re.compile(r"^([A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)?$")
_RUN_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_IMAGE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}$")
_TIME_RE = re.compile(r"^[0-9]{1,5}(:[0-9]{2}){0,2}$|^[0-9]{1,3}-[0-9]{1,2}(:[0-9]{2}){0,2}$")

_SLURM_NODE = '"${SLURMD_NODENAME:-$(hostname -s)}"'
"""The node's name in a Slurm step: ``SLURMD_NODENAME`` (sbatch(1), srun(1)), as
``scontrol show hostnames`` and ``sinfo -N`` list it."""

CONTAINER_OUT = "/aifabric-out"
"""Where the DaemonSet container mounts the output volume."""


@dataclass(frozen=True)
class TemplateOptions:
    """What a template is made from. ``shared_dir``: Slurm, a directory on a file system
    every node mounts; DaemonSet, the hostPath directory on each node (ignored with ``pvc``).
    ``nodes``: Slurm node count / array size; ``throttle``: array tasks at once.
    ``aifabric``: the command on the nodes (Slurm); ``image``: the container image
    (DaemonSet). ``probe_args``: extra ``aifabric probe`` arguments (e.g. ``--peer ADDR``)."""

    shared_dir: str | None = None
    nodes: int = 2
    throttle: int = 16
    partition: str | None = None
    time_limit: str = "00:30:00"
    aifabric: str = "aifabric"
    image: str = "aifabric:latest"
    namespace: str = "default"
    name: str = "aifabric-probe"
    pvc: str | None = None
    node_selector: Sequence[str] = field(default_factory=tuple)
    probe_args: Sequence[str] = field(default_factory=tuple)
    run_id: str = "run"


def _check(opts: TemplateOptions, kind: str) -> None:
    shared = opts.shared_dir
    if shared is not None and (not shared.startswith("/") or "\n" in shared or "\x00" in shared
                               or "\r" in shared):
        raise InputError(f"--shared-dir {shared!r}: expected an absolute path")
    if not _RUN_ID_RE.match(opts.run_id):
        raise InputError(f"--run-id {opts.run_id!r}: expected [A-Za-z0-9_.-], 1-64 characters")
    if any("\x00" in a or "\n" in a for a in opts.probe_args):
        raise InputError("--probe-arg: no newlines or NUL characters")
    for arg in opts.probe_args:
        if arg in ("--local", "--name", "--tar", "-o", "--output", "--merge", "--template"):
            raise InputError(f"--probe-arg {arg}: set by the template itself")
    if kind.startswith("slurm"):
        if opts.nodes < 1:
            raise InputError(f"--nodes {opts.nodes}: expected at least 1")
        if opts.throttle < 1:
            raise InputError(f"--concurrency {opts.throttle}: expected at least 1")
        if opts.partition is not None and not _SLURM_VALUE_RE.match(opts.partition):
            raise InputError(f"--partition {opts.partition!r}: not a Slurm partition name")
        if not _TIME_RE.match(opts.time_limit):
            raise InputError(f"--time-limit {opts.time_limit!r}: expected [D-]HH:MM:SS")
        if not _SLURM_VALUE_RE.match(opts.name):
            raise InputError(f"--job-name {opts.name!r}: not a Slurm job name")
        if not opts.aifabric or "\n" in opts.aifabric or "\x00" in opts.aifabric:
            raise InputError(f"--aifabric {opts.aifabric!r}: expected a command path")
    else:
        for what, value in (("--namespace", opts.namespace), ("--job-name", opts.name)):
            if not _DNS_LABEL_RE.match(value):
                raise InputError(f"{what} {value!r}: expected a lowercase RFC 1123 label")
        if opts.pvc is not None and not _DNS_LABEL_RE.match(opts.pvc):
            raise InputError(f"--pvc {opts.pvc!r}: expected a lowercase RFC 1123 name")
        if not _IMAGE_RE.match(opts.image):
            raise InputError(f"--image {opts.image!r}: not an image reference")
        for sel in opts.node_selector:
            key, sep, value = sel.partition("=")
            if not sep or not _LABEL_KEY_RE.match(key) or not _LABEL_VALUE_RE.match(value):
                raise InputError(f"--node-selector {sel!r}: expected KEY=VALUE (label syntax)")


def node_script(aifabric: str, name_expr: str, parts_expr: str,
                probe_args: Sequence[str]) -> str:
    """The per-node shell step: probe this machine into scratch as ``name_expr`` (shell text
    expanding to the node's name), copy ``NAME.tar.gz`` into ``parts_expr`` (shell text naming
    the shared directory) atomically (temporary name, then ``mv``), leave the probe's status
    in ``rc``. ``aifabric`` and ``probe_args`` are quoted here; the two expressions are
    trusted shell text from this module."""
    extra = "".join(" " + shlex.quote(a) for a in probe_args)
    parts = parts_expr
    return (
        f"H={name_expr}\n"
        'SCRATCH="$(mktemp -d)"\n'
        f"{shlex.quote(aifabric)} probe --local --name \"$H\" --tar -o \"$SCRATCH/$H\""
        f"{extra}\n"
        "rc=$?\n"
        f"mkdir -p {parts}\n"
        'if [ -f "$SCRATCH/$H.tar.gz" ]; then\n'
        f"  cp \"$SCRATCH/$H.tar.gz\" {parts}/\".$H.tar.gz.part\" &&\n"
        f"    mv -f {parts}/\".$H.tar.gz.part\" {parts}/\"$H.tar.gz\"\n"
        '  echo "aifabric-probe: $H: archive written (probe exit $rc)"\n'
        "else\n"
        '  echo "aifabric-probe: $H: no archive (probe exit $rc)" >&2\n'
        "  rc=2\n"
        "fi\n"
        'rm -rf "$SCRATCH"\n'
    )


def _slurm_head(opts: TemplateOptions, title: str, lines: list[str], argv: str) -> list[str]:
    out = [
        "#!/bin/bash",
        f"# {title}",
        f"# Made by: {argv}",
        "# Syntax: sbatch(1) https://slurm.schedmd.com/sbatch.html, srun(1)",
        "# https://slurm.schedmd.com/srun.html, job arrays https://slurm.schedmd.com/job_array.html",
        f"#SBATCH --job-name={opts.name}",
        *lines,
        f"#SBATCH --time={opts.time_limit}",
    ]
    if opts.partition:
        out.append(f"#SBATCH --partition={opts.partition}")
    return out


def _shared(opts: TemplateOptions) -> str:
    """The Slurm shared directory as shell text."""
    return shlex.quote(opts.shared_dir) if opts.shared_dir else '"$HOME/aifabric-probe"'


def _slurm(opts: TemplateOptions, argv: str) -> str:
    shared = _shared(opts)
    exe = shlex.quote(opts.aifabric)
    per_node = node_script(opts.aifabric, _SLURM_NODE, '"$RUN/parts"', opts.probe_args)
    head = _slurm_head(opts, "aifabric probe on every node of one allocation, then one merge.", [
        f"#SBATCH --nodes={opts.nodes}",
        "#SBATCH --ntasks-per-node=1",
        "#SBATCH --output=aifabric-probe-%j.out",
    ], argv)
    body = f"""
# One srun step, one task on each node of the allocation: every node exactly once.
# A node whose task fails is listed as missing by the merge (the allocation is --expect).
set -u
RUN={shared}/"$SLURM_JOB_ID"
export RUN
mkdir -p "$RUN/parts"
scontrol show hostnames "$SLURM_JOB_NODELIST" > "$RUN/expected.txt"

read -r -d '' PER_NODE <<'AIFABRIC_NODE_STEP'
{per_node}exit $rc
AIFABRIC_NODE_STEP

srun --nodes="$SLURM_JOB_NUM_NODES" --ntasks="$SLURM_JOB_NUM_NODES" --ntasks-per-node=1 \\
  --kill-on-bad-exit=0 bash -c "$PER_NODE"
echo "aifabric-probe: srun exit $?"

# The batch step merges (exit 1 when a node is missing; the missing ones are in merge.json).
{exe} probe --merge "$RUN"/parts/*.tar.gz --expect "$RUN/expected.txt" \\
  -o "$RUN/merged" --tar -F json > "$RUN/merge.json"
rc=$?
echo "aifabric-probe: merged $RUN/merged (merge exit $rc); next: aifabric diagnose $RUN/merged"
exit $rc
"""
    return "\n".join(head) + "\n" + body


def _slurm_array(opts: TemplateOptions, argv: str) -> str:
    shared = _shared(opts)
    exe = shlex.quote(opts.aifabric)
    per_node = node_script(opts.aifabric, _SLURM_NODE, '"$RUN/parts"', opts.probe_args)
    head = _slurm_head(
        opts, "aifabric probe as a job array: one node per task, then merge separately.", [
            f"#SBATCH --array=0-{opts.nodes - 1}%{opts.throttle}",
            "#SBATCH --nodes=1",
            "#SBATCH --ntasks=1",
            "#SBATCH --exclusive",
            "#SBATCH --output=aifabric-probe-%A_%a.out",
        ], argv)
    body = f"""
# WARNING: an array does not choose nodes. Each task probes the node it was given; a node
# may get two tasks (its newer archive wins) and another none. The array does NOT guarantee
# that every node is covered. After the array, merge with the node list as --expect:
#   sinfo -N -h -o %N | sort -u > nodes.txt        # add -p PARTITION to match this array
#   sbatch --dependency=afterany:<ARRAY_JOB_ID> --wrap \\
#     "{exe} probe --merge {shared}/<ARRAY_JOB_ID>/parts/*.tar.gz --expect nodes.txt \\
#      -o {shared}/<ARRAY_JOB_ID>/merged -F json > {shared}/<ARRAY_JOB_ID>/merge.json"
# The merge's JSON "missing" lists the nodes no task reached; resubmit just those with the
# single-allocation template (aifabric probe --template slurm), one task per listed node:
#   sbatch --nodes=<COUNT> --nodelist=<a,b,c> aifabric-probe.sbatch
# and merge again with the first merged bundle as one more input.
set -u
RUN={shared}/"${{SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID}}"
export RUN
{per_node}exit $rc
"""
    return "\n".join(head) + "\n" + body


def _daemonset(opts: TemplateOptions, argv: str) -> str:
    parts = f"{CONTAINER_OUT}/{opts.run_id}/parts"
    host_dir = opts.shared_dir or "/var/lib/aifabric-probe"
    script = "set -u\n" + node_script(opts.aifabric, '"$NODE_NAME"', parts, opts.probe_args) + (
        "# a DaemonSet pod must keep running: stay up (idle) until the DaemonSet is deleted\n"
        "exec sleep infinity\n"
    )
    def labels() -> dict[str, str]:  # fresh dicts: no YAML anchors in the output
        return {"app.kubernetes.io/name": opts.name}

    out_volume: dict[str, object]
    if opts.pvc:
        out_volume = {"name": "out", "persistentVolumeClaim": {"claimName": opts.pvc}}
    else:
        out_volume = {"name": "out",
                      "hostPath": {"path": host_dir, "type": "DirectoryOrCreate"}}
    pod_spec: dict[str, object] = {
        "hostNetwork": True,
        "dnsPolicy": "ClusterFirstWithHostNet",
        "tolerations": [{"operator": "Exists"}],
        "terminationGracePeriodSeconds": 5,
        "containers": [{
            "name": "probe",
            "image": opts.image,
            "imagePullPolicy": "IfNotPresent",
            "command": ["/bin/sh", "-c", script],
            "env": [{"name": "NODE_NAME",
                     "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
            "securityContext": {"privileged": True},
            "readinessProbe": {
                "exec": {"command": ["/bin/sh", "-c",
                                     f'test -f {parts}/"$NODE_NAME.tar.gz"']},
                "periodSeconds": 10,
            },
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                          "limits": {"memory": "512Mi"}},
            "volumeMounts": [
                {"name": "sys", "mountPath": "/sys", "readOnly": True},
                {"name": "out", "mountPath": CONTAINER_OUT},
            ],
        }],
        "volumes": [
            {"name": "sys", "hostPath": {"path": "/sys", "type": "Directory"}},
            out_volume,
        ],
    }
    if opts.node_selector:
        pod_spec["nodeSelector"] = dict(s.partition("=")[::2] for s in opts.node_selector)
    doc = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": opts.name, "namespace": opts.namespace, "labels": labels()},
        "spec": {
            "selector": {"matchLabels": labels()},
            "template": {"metadata": {"labels": labels()}, "spec": pod_spec},
        },
    }
    ns = opts.namespace
    where = (f"the PVC {opts.pvc} (ReadWriteMany), mounted at {CONTAINER_OUT}" if opts.pvc
             else f"hostPath {host_dir} on each node")
    header = [
        "# aifabric probe on every node (one pod per node), archives in",
        f"# {opts.run_id}/parts/ of {where}.",
        f"# Made by: {argv}",
        "# Syntax: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/ and",
        "# https://kubernetes.io/docs/concepts/storage/volumes/#hostpath",
        "# hostNetwork: the node's own interfaces; privileged: ethtool -m (module EEPROM), RDMA",
        "# devices, /sys; tolerations: every taint, so tainted GPU nodes are probed too.",
        "# Run and wait (a pod is Ready once its node's archive exists):",
        f"#   kubectl apply -f this.yaml && kubectl -n {ns} rollout status ds/{opts.name}",
        "# Collect (hostPath: from each pod; kubectl cp needs tar in the image):",
        f"#   kubectl -n {ns} get pods -l app.kubernetes.io/name={opts.name} \\",
        "#     -o custom-columns=P:.metadata.name,N:.spec.nodeName --no-headers |",
        "#   { mkdir -p parts; while read -r p n; do",
        f"#     kubectl -n {ns} cp \"$p:{parts}/$n.tar.gz\" \"parts/$n.tar.gz\"; done; }}",
        f"# (with a PVC, read {opts.run_id}/parts/ on the volume instead). Then merge, clean up:",
        "#   kubectl get nodes -o name | sed 's,^node/,,' > nodes.txt",
        "#   aifabric probe --merge parts/*.tar.gz --expect nodes.txt -o merged",
        f"#   kubectl -n {ns} delete ds/{opts.name}",
    ]
    body = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)
    return "\n".join(header) + "\n---\n" + body


class _Dumper(yaml.SafeDumper):
    """Safe YAML with multi-line strings (the container's script) as ``|`` blocks."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def render_template(kind: str, opts: TemplateOptions, argv: str = "aifabric probe") -> str:
    """The text of template ``kind`` (one of :data:`TEMPLATES`) for ``opts``; ``argv`` is
    the command line quoted in its header. Bad values raise :class:`InputError`."""
    if kind not in TEMPLATES:
        raise InputError(f"--template {kind!r}: expected one of {', '.join(TEMPLATES)}")
    _check(opts, kind)
    argv = argv.replace("\n", " ").replace("\r", " ")
    if kind == "slurm":
        return _slurm(opts, argv)
    if kind == "slurm-array":
        return _slurm_array(opts, argv)
    return _daemonset(opts, argv)

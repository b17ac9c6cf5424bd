"""Slurm and Kubernetes templates: they parse (``bash -n``, YAML), carry the per-node probe with
the output path and every option substituted, quote hostile values, and refuse bad ones. The
Slurm scripts are also run end to end with stand-in ``srun``/``scontrol`` (real probe, real
merge) and the DaemonSet's container script with its paths moved to a temporary directory."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from aifabric.errors import InputError
from aifabric.probe.bundle import MANIFEST
from aifabric.probe.templates import TEMPLATES, TemplateOptions, render_template
from tests.conftest import run_cli

OPTS = TemplateOptions(
    shared_dir="/lustre/fab team/probe", nodes=128, throttle=8, partition="gpu",
    time_limit="01:00:00", aifabric="/opt/aifabric/bin/aifabric", image="reg.example/aif:1.2",
    namespace="fabric", name="aif-probe", node_selector=("nvidia.com/gpu.present=true",),
    probe_args=("--peer", "10.0.0.1", "$(touch /tmp/pwned)"), run_id="r1",
)


def _bash_n(text: str, tmp_path: Path) -> None:
    script = tmp_path / "job.sh"
    script.write_text(text)
    proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr


def _no_placeholders(text: str) -> None:
    assert "{" not in text.replace("${", "").replace("{ mkdir", "")
    assert "None" not in text and "@@" not in text and "opts." not in text


def test_slurm_allocation_script(tmp_path: Path) -> None:
    text = render_template("slurm", OPTS, "aifabric probe --template slurm")
    _bash_n(text, tmp_path)
    _no_placeholders(text)
    lines = text.splitlines()
    assert lines[0] == "#!/bin/bash"
    sbatch = [ln for ln in lines if ln.startswith("#SBATCH")]
    assert sbatch == ["#SBATCH --job-name=aif-probe", "#SBATCH --nodes=128",
                      "#SBATCH --ntasks-per-node=1", "#SBATCH --output=aifabric-probe-%j.out",
                      "#SBATCH --time=01:00:00", "#SBATCH --partition=gpu"]
    # sbatch stops reading #SBATCH at the first command: all of them come first
    first_cmd = next(i for i, ln in enumerate(lines) if ln and not ln.startswith("#"))
    assert all(i < first_cmd for i, ln in enumerate(lines) if ln.startswith("#SBATCH"))
    assert "RUN='/lustre/fab team/probe'/\"$SLURM_JOB_ID\"" in text
    assert ("/opt/aifabric/bin/aifabric probe --local --name \"$H\" --tar -o \"$SCRATCH/$H\" "
            "--peer 10.0.0.1 '$(touch /tmp/pwned)'") in text
    srun = text[text.index("\nsrun "):]
    assert "--ntasks-per-node=1" in srun.splitlines()[1] + srun.splitlines()[0]
    assert 'scontrol show hostnames "$SLURM_JOB_NODELIST" > "$RUN/expected.txt"' in text
    assert ('probe --merge "$RUN"/parts/*.tar.gz --expect "$RUN/expected.txt"' in text)
    assert "https://slurm.schedmd.com/sbatch.html" in text
    assert "https://slurm.schedmd.com/srun.html" in text


def test_slurm_array_script(tmp_path: Path) -> None:
    text = render_template("slurm-array", OPTS)
    _bash_n(text, tmp_path)
    _no_placeholders(text)
    assert "#SBATCH --array=0-127%8\n" in text
    assert "#SBATCH --nodes=1\n" in text and "#SBATCH --exclusive\n" in text
    assert "does NOT guarantee" in text and "--nodelist" in text and "--expect" in text
    assert 'RUN=\'/lustre/fab team/probe\'/"${SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID}"' in text
    assert "https://slurm.schedmd.com/job_array.html" in text
    default = render_template("slurm-array", TemplateOptions(nodes=1, throttle=1))
    assert "#SBATCH --array=0-0%1\n" in default
    assert 'RUN="$HOME/aifabric-probe"/' in default and "--partition" not in default


def _daemonset(text: str) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    assert len(docs) == 1
    doc: dict[str, Any] = docs[0]
    return doc


def test_daemonset_manifest() -> None:
    text = render_template("daemonset", OPTS)
    _no_placeholders(text.split("\n---\n", 1)[1])
    doc = _daemonset(text)
    assert doc["apiVersion"] == "apps/v1" and doc["kind"] == "DaemonSet"
    assert doc["metadata"] == {"name": "aif-probe", "namespace": "fabric",
                               "labels": {"app.kubernetes.io/name": "aif-probe"}}
    assert doc["spec"]["selector"]["matchLabels"] == doc["spec"]["template"]["metadata"][
        "labels"]
    pod = doc["spec"]["template"]["spec"]
    assert pod["hostNetwork"] is True and pod["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert pod["tolerations"] == [{"operator": "Exists"}]
    assert pod["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    (c,) = pod["containers"]
    assert c["image"] == "reg.example/aif:1.2"
    assert c["securityContext"] == {"privileged": True}
    assert c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
    assert c["command"][:2] == ["/bin/sh", "-c"]
    script = c["command"][2]
    assert ('/opt/aifabric/bin/aifabric probe --local --name "$H" --tar -o "$SCRATCH/$H" '
            "--peer 10.0.0.1 '$(touch /tmp/pwned)'") in script
    assert 'H="$NODE_NAME"' in script and "/aifabric-out/r1/parts" in script
    assert script.rstrip().endswith("exec sleep infinity")
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    assert mounts["sys"] == {"name": "sys", "mountPath": "/sys", "readOnly": True}
    assert mounts["out"]["mountPath"] == "/aifabric-out"
    vols = {v["name"]: v for v in pod["volumes"]}
    assert vols["sys"]["hostPath"] == {"path": "/sys", "type": "Directory"}
    assert vols["out"]["hostPath"] == {"path": "/lustre/fab team/probe",
                                       "type": "DirectoryOrCreate"}
    assert "/aifabric-out/r1/parts/" in c["readinessProbe"]["exec"]["command"][2]
    assert "kubernetes.io/docs/concepts/workloads/controllers/daemonset" in text
    assert "kubernetes.io/docs/concepts/storage/volumes/#hostpath" in text
    assert "kubectl -n fabric cp" in text and "rollout status ds/aif-probe" in text
    pvc = _daemonset(render_template("daemonset", TemplateOptions(pvc="probe-rwx")))
    (out,) = [v for v in pvc["spec"]["template"]["spec"]["volumes"] if v["name"] == "out"]
    assert out == {"name": "out", "persistentVolumeClaim": {"claimName": "probe-rwx"}}
    plain = _daemonset(render_template("daemonset", TemplateOptions()))
    pod = plain["spec"]["template"]["spec"]
    assert "nodeSelector" not in pod
    assert pod["volumes"][1]["hostPath"]["path"] == "/var/lib/aifabric-probe"


@pytest.mark.parametrize(
    ("kind", "opts"),
    [
        ("slurm", TemplateOptions(nodes=0)),
        ("slurm-array", TemplateOptions(throttle=0)),
        ("slurm", TemplateOptions(partition="gpu\n#SBATCH --uid=0")),
        ("slurm", TemplateOptions(time_limit="forever")),
        ("slurm", TemplateOptions(shared_dir="relative/dir")),
        ("slurm", TemplateOptions(shared_dir="/ok\nrm -rf /")),
        ("slurm", TemplateOptions(probe_args=("--tar",))),
        ("slurm", TemplateOptions(probe_args=("a\nb",))),
        ("daemonset", TemplateOptions(namespace="Kube_System")),
        ("daemonset", TemplateOptions(image="img\nkind: Pod")),
        ("daemonset", TemplateOptions(node_selector=("nokey",))),
        ("daemonset", TemplateOptions(node_selector=("a=b c",))),
        ("daemonset", TemplateOptions(pvc="My PVC")),
        ("daemonset", TemplateOptions(run_id="../up")),
        ("k8s", TemplateOptions()),
    ],
)
def test_bad_values_refused(kind: str, opts: TemplateOptions) -> None:
    with pytest.raises(InputError):
        render_template(kind, opts)


def _fake_bin(tmp_path: Path, nodes: list[str]) -> dict[str, str]:
    """srun/scontrol stand-ins and an aifabric wrapper; the environment to run a job with."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "aifabric").write_text(f'#!/bin/sh\nexec {sys.executable} -m aifabric "$@"\n')
    # srun: skip options up to the command, run it once per node (SLURMD_NODENAME set)
    (bin_dir / "srun").write_text(
        '#!/bin/bash\nwhile [ "${1#-}" != "$1" ]; do shift; done\nrc=0\n'
        'for n in $FAKE_NODES; do SLURMD_NODENAME="$n" "$@" || rc=$?; done\nexit $rc\n')
    (bin_dir / "scontrol").write_text('#!/bin/sh\nfor n in $FAKE_NODES; do echo "$n"; done\n')
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", FAKE_NODES=" ".join(nodes),
               SLURM_JOB_ID="4242", SLURM_JOB_NUM_NODES=str(len(nodes)),
               SLURM_JOB_NODELIST="n[1-2]", HOME=str(tmp_path / "home"), COLUMNS="200")
    return env


def test_slurm_script_runs_end_to_end(tmp_path: Path) -> None:
    env = _fake_bin(tmp_path, ["n1", "n2"])
    shared = tmp_path / "shared dir"
    text = render_template("slurm", TemplateOptions(
        shared_dir=str(shared), nodes=2, aifabric=str(tmp_path / "bin" / "aifabric")))
    job = tmp_path / "job.sbatch"
    job.write_text(text)
    proc = subprocess.run(["bash", str(job)], env=env, capture_output=True, text=True,
                          timeout=240, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = shared / "4242"
    assert sorted(p.name for p in (run / "parts").iterdir()) == ["n1.tar.gz", "n2.tar.gz"]
    assert (run / "expected.txt").read_text() == "n1\nn2\n"
    doc = json.loads((run / "merge.json").read_text())
    assert doc["missing"] == [] and [h["host"] for h in doc["hosts"]] == ["n1", "n2"]
    man = json.loads((run / "merged" / MANIFEST).read_text())
    assert sorted(man["hosts"]) == ["n1", "n2"]
    assert (run / "merged" / "n1" / "ip-link.txt").is_file()
    assert (run / "merged.tar.gz").is_file()


def test_slurm_array_tasks_then_merge_lists_missed_node(tmp_path: Path) -> None:
    env = _fake_bin(tmp_path, [])
    text = render_template("slurm-array", TemplateOptions(
        nodes=3, aifabric=str(tmp_path / "bin" / "aifabric")))
    job = tmp_path / "array.sbatch"
    job.write_text(text)
    # three tasks, but the scheduler put two of them on n1: n3 is never probed
    for task, node in enumerate(["n1", "n2", "n1"]):
        proc = subprocess.run(["bash", str(job)], capture_output=True, text=True, timeout=120,
                              env=dict(env, SLURM_ARRAY_JOB_ID="77", SLURM_ARRAY_TASK_ID=str(task),
                                       SLURMD_NODENAME=node), check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    run = tmp_path / "home" / "aifabric-probe" / "77"
    assert sorted(p.name for p in (run / "parts").iterdir()) == ["n1.tar.gz", "n2.tar.gz"]
    nodes = tmp_path / "nodes.txt"
    nodes.write_text("n1\nn2\nn3\n")
    r = run_cli("probe", "--merge", *sorted(str(p) for p in (run / "parts").glob("*.tar.gz")),
                "--expect", str(nodes), "-o", str(run / "merged"), "-F", "json")
    assert r.code == 1 and r.json()["missing"] == ["n3"]


def test_daemonset_container_script_runs(tmp_path: Path) -> None:
    env = _fake_bin(tmp_path, [])
    doc = _daemonset(render_template("daemonset", TemplateOptions(
        run_id="r9", aifabric=str(tmp_path / "bin" / "aifabric"))))
    c = doc["spec"]["template"]["spec"]["containers"][0]
    out = tmp_path / "out"
    script = c["command"][2].replace("/aifabric-out", str(out))
    script = script.replace("exec sleep infinity", "exit $rc")
    proc = subprocess.run(["/bin/sh", "-c", script], env=dict(env, NODE_NAME="gpu-7.example"),
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in (out / "r9" / "parts").iterdir()) == ["gpu-7.example.tar.gz"]
    ready = c["readinessProbe"]["exec"]["command"][2].replace("/aifabric-out", str(out))
    assert subprocess.run(["/bin/sh", "-c", ready], env=dict(env, NODE_NAME="gpu-7.example"),
                          check=False).returncode == 0
    assert subprocess.run(["/bin/sh", "-c", ready], env=dict(env, NODE_NAME="other"),
                          check=False).returncode == 1


def test_cli_template_stdout_and_file(tmp_path: Path) -> None:
    for kind in TEMPLATES:
        r = run_cli("probe", "--template", kind, "--nodes", "4", "--shared-dir", "/shared/p",
                    "--probe-arg=--peer", "--probe-arg=10.1.1.1", "--run-id", "x1")
        assert r.code == 0, r.err
        assert "probe --local --name" in r.out and "--peer 10.1.1.1" in r.out
        assert f"--template {kind}" in r.out  # the command line is in the header
    r = run_cli("probe", "--template", "slurm", "--peer", "10.0.0.9", "--mtu", "4200",
                "--probe-arg=--timeout", "--probe-arg=60")
    assert '-o "$SCRATCH/$H" --peer 10.0.0.9 --mtu 4200 --timeout 60\n' in r.out
    target = tmp_path / "probe.sbatch"
    r = run_cli("probe", "--template", "slurm-array", "--nodes", "10", "--concurrency", "3",
                "-o", str(target))
    assert r.code == 0 and r.out == "" and "wrote" in r.err
    assert "#SBATCH --array=0-9%3" in target.read_text() and os.access(target, os.X_OK)
    r = run_cli("probe", "--template", "daemonset", "--node-selector", "gpu=true",
                "--image", "reg/aif:2", "--pvc", "rwx")
    pod = _daemonset(r.out)["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"gpu": "true"} and pod["containers"][0]["image"] == "reg/aif:2"
    assert re.search(r"/aifabric-out/\d{8}T\d{6}Z/parts", r.out)  # default run id: UTC time
    for bad in (["--template", "pbs"], ["--template", "slurm", "--local"],
                ["--template", "daemonset", "--namespace", "Bad NS"]):
        r = run_cli("probe", *bad)
        assert r.code == 2 and r.err.count("\n") == 1 and r.err.startswith("aifabric: error:")

"""S15: lint an NCCL environment file against NCCL's own variable list and the fabric.

Reads ``ctx.observed.nccl_env`` (name -> :class:`Val` of the value, with file and line); nothing
is checked when no environment file was given. The variable list, types, ranges and defaults are
data (``nccl_vars.yaml``: NCCL 2.30's env.rst plus every ``NCCL_PARAM``/``ncclGetEnv`` name in its
source). Rules, each finding quoting the file line:

* **unknown variable**: not read by any NCCL release. The seed's ``NCCL_IB_ENABLE=1`` is an
  error (it does nothing; IB is on unless ``NCCL_IB_DISABLE=1``); other unknown names are
  warnings with the nearest known names by Levenshtein distance (``NCCL_SCOKET_IFNAME``);
  names that other software reads (PyTorch's ``NCCL_ASYNC_ERROR_HANDLING``) are info.
* **removed / deprecated** variables (``NCCL_IB_CUDA_SUPPORT`` removed in 2.4.0).
* **type and range**: integers are read with ``strtoll(value, NULL, 0)`` (NCCL
  ``src/misc/param.cc``): the leading number counts (``0x6a`` is hex, ``0106`` is octal 70, text
  is 0). ``NCCL_IB_TIMEOUT`` n gives a local-ACK timeout of 4.096 µs x 2^n (IB spec vol. 1
  12.7.34; 20 -> 4.3 s, 22 -> 17.2 s, 23 -> 34.4 s), 0 or >= 32 is infinite; the total wait before
  an error is about timeout x ``NCCL_IB_RETRY_CNT`` (NCCL docs).
* **RoCE marking**: on ``transport: roce`` NCCL must mark RoCE with the fabric's DSCP:
  ``NCCL_IB_TC`` = ``qos.roce_dscp << 2`` (S15), the ToS byte whose top six bits are the DSCP
  and whose low two bits are ECN (RFC 2474, RFC 3168). Unset, NCCL sends ToS 0 (DSCP 0, the
  default lossy class) unless the mlx5 global ``traffic_class`` overrides it.
* **GID index**: ``NCCL_IB_GID_INDEX`` unset is fine from NCCL 2.21 (it then picks an AF_INET
  RoCEv2 GID: NCCL_IB_ROCE_VERSION_NUM=2, NCCL_IB_ADDR_FAMILY=AF_INET); before 2.21 the default
  was index 0. Indices 0 and 1 of an mlx5 port are the MAC-derived link-local GIDs (RoCEv1, then
  RoCEv2), not routable across leaf-spine hops.
* **transport**: ``NCCL_IB_DISABLE=1`` or ``NCCL_NET=Socket`` on an IB/RoCE fabric makes NCCL
  fall back to TCP sockets (S5, S17).
* **device names** (when host state is given): ``NCCL_IB_HCA`` entries must match an RDMA
  device of the fabric's link layer (InfiniBand for ``ib``, Ethernet for ``roce``);
  ``NCCL_SOCKET_IFNAME`` must match an interface on every host. Both take a list with an
  optional ``^`` (exclude) and ``=`` (exact names, otherwise prefixes) in front.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from aifabric.checks.design._util import some
from aifabric.checks.registry import CheckContext, CheckMeta, metadata, register
from aifabric.dialects.observed import Observed, ObservedDevice, Val
from aifabric.findings import EvidenceItem, Finding

__all__ = [
    "VarSpec",
    "ib_timeout_seconds",
    "known_variables",
    "levenshtein",
    "match_list",
    "parse_name_list",
    "strtoll",
]

DOCS = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"
CHECK = "verify.nccl-env"


@dataclass(frozen=True)
class VarSpec:
    """One NCCL variable from ``nccl_vars.yaml``."""

    name: str
    type: str
    source: str
    min: int | None = None
    max: int | None = None
    values: tuple[str, ...] = ()
    default: str | None = None
    since: str | None = None
    deprecated: str | None = None
    removed: str | None = None
    replaced_by: str | None = None
    documented: bool = True
    note: str | None = None


@cache
def _data() -> dict[str, Any]:
    text = resources.files("aifabric.checks.verify").joinpath("nccl_vars.yaml").read_text("utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


_SRC_AT = re.compile(r"NVIDIA/nccl@[0-9a-f]+ (?P<path>\S+):(?P<line>\d+)")


@cache
def _nccl_commit() -> str:
    """The NCCL commit ``nccl_vars.yaml`` was generated from (full SHA, from its header)."""
    m = re.search(r"\b[0-9a-f]{40}\b", str(_data()["nccl_version"]))
    return m.group(0) if m else "master"


def spec_refs(spec: VarSpec) -> list[str]:
    """Public URLs of a variable's ``source``: the documentation anchor as it is, and each
    ``NVIDIA/nccl@<sha> path:line`` as the file at the commit the table was generated from."""
    refs = re.findall(r"https://[^\s;]+", spec.source)
    refs += [
        f"https://github.com/NVIDIA/nccl/blob/{_nccl_commit()}/{m['path']}#L{m['line']}"
        for m in _SRC_AT.finditer(spec.source)
    ]
    return refs or [DOCS]


@cache
def known_variables() -> dict[str, VarSpec]:
    """Every variable NCCL reads or once read, by name."""
    out: dict[str, VarSpec] = {}
    for name, e in _data()["variables"].items():
        out[name] = VarSpec(
            name=name,
            type=str(e["type"]),
            source=str(e["source"]),
            min=e.get("min"),
            max=e.get("max"),
            values=tuple(str(v) for v in e.get("values", ())),
            default=None if e.get("default") is None else str(e["default"]),
            since=None if e.get("since") is None else str(e["since"]),
            deprecated=None if e.get("deprecated") is None else str(e["deprecated"]),
            removed=None if e.get("removed") is None else str(e["removed"]),
            replaced_by=e.get("replaced_by"),
            documented=bool(e.get("documented", True)),
            note=e.get("note"),
        )
    return out


def _foreign() -> dict[str, str]:
    return {str(k): str(v) for k, v in _data().get("foreign", {}).items()}


# --------------------------------------------------------------------------------------------
# small pure helpers (tested on their own)


def strtoll(text: str) -> tuple[int, bool]:
    """C ``strtoll(text, NULL, 0)`` as NCCL reads integer variables: (value, whole text used).

    Leading blanks and a sign are allowed; ``0x`` prefixes hex, a leading ``0`` octal; reading
    stops at the first character that is not a digit of that base; no digits gives 0.
    """
    s = text.lstrip()
    sign = 1
    if s[:1] in "+-" and s:
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s[:2].lower() == "0x" and len(s) > 2 and s[2] in "0123456789abcdefABCDEF":
        base, body = 16, s[2:]
        digits = "0123456789abcdef"
    elif s.startswith("0"):
        base, body, digits = 8, s, "01234567"
    else:
        base, body, digits = 10, s, "0123456789"
    n = 0
    for ch in body:
        if ch.lower() not in digits:
            return sign * n, False
        n = n * base + digits.index(ch.lower())
    return sign * n, bool(body)


def ib_timeout_seconds(n: int) -> float:
    """IB local ACK timeout of ``NCCL_IB_TIMEOUT=n``: 4.096 µs x 2^n (infinite for 0, n >= 32)."""
    if n <= 0 or n >= 32:
        return float("inf")
    return 4.096e-6 * float(1 << n)


def _human_seconds(s: float) -> str:
    if s == float("inf"):
        return "infinite"
    if s < 1:
        return f"{s * 1000:.1f} ms"
    if s < 60:
        return f"{s:.1f} s"
    return f"{s / 60:.1f} min"


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions)."""
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _suggest(name: str, limit: int = 3) -> list[str]:
    known = known_variables()
    cutoff = max(2, len(name) // 5)
    scored = sorted(
        (levenshtein(name, k), not known[k].documented, k)
        for k in known
        if not known[k].removed and abs(len(k) - len(name)) <= cutoff
    )
    return [k for d, _, k in scored if d <= cutoff][:limit]


@dataclass(frozen=True)
class NameList:
    """A parsed NCCL_IB_HCA / NCCL_SOCKET_IFNAME value."""

    exclude: bool
    exact: bool
    entries: tuple[tuple[str, int | None], ...]
    """(name, port or None) per comma-separated entry."""


def parse_name_list(value: str) -> NameList:
    """``^`` (exclude) then ``=`` (exact) prefixes, comma list of ``name[:port[:rail[:plane]]]``."""
    v = value.strip()
    exclude = v.startswith("^")
    if exclude:
        v = v[1:]
    exact = v.startswith("=")
    if exact:
        v = v[1:]
    entries: list[tuple[str, int | None]] = []
    for raw in v.split(","):
        part = raw.strip()
        if not part:
            continue
        name, _, rest = part.partition(":")
        port_text = rest.split(":", 1)[0]
        entries.append((name, int(port_text) if port_text.isdecimal() else None))
    return NameList(exclude, exact, tuple(entries))


def match_list(spec: NameList, names: set[str]) -> set[str]:
    """The names that the list selects (for an exclude list: the names it leaves)."""
    hit = {n for n in names for e, _ in spec.entries if (n == e if spec.exact else n.startswith(e))}
    return names - hit if spec.exclude else hit


# --------------------------------------------------------------------------------------------
# the check


def _is_dynamic(value: str) -> bool:
    return "$" in value or "`" in value or value.startswith("valueFrom")


def _target(val: Val[str], name: str) -> str:
    return f"{val.src.file}:{name}"


def _lint_variable(meta: CheckMeta, name: str, val: Val[str]) -> Iterator[Finding]:
    known = known_variables()
    value = val.value
    ev = [val.src.evidence()]
    spec = known.get(name)
    if spec is None:
        foreign = _foreign().get(name)
        if foreign is not None:
            yield meta.finding(
                target=_target(val, name),
                severity="info",
                message=f"{name} is not an NCCL variable ({foreign})",
                explanation=(
                    f"{name} starts with NCCL_ but NCCL never reads it: {foreign}. It does what "
                    "that program says, nothing in NCCL."
                ),
                fix="keep it if that program needs it; it has no effect on NCCL",
                evidence=ev,
                refs=[DOCS],
            )
            return
        if name == "NCCL_IB_ENABLE":
            yield meta.finding(
                target=_target(val, name),
                severity="error",
                message=(
                    "NCCL_IB_ENABLE does not exist; NCCL ignores it (NCCL_IB_DISABLE=0 is meant)"
                ),
                expected="NCCL_IB_DISABLE=0",
                actual=f"NCCL_IB_ENABLE={value}",
                explanation=(
                    "No NCCL release reads NCCL_IB_ENABLE (not in NCCL's env.rst nor in any "
                    "NCCL_PARAM of its source); the switch is NCCL_IB_DISABLE, whose default 0 "
                    "already enables the IB verbs transport (RoCE included). The seed's S15 list "
                    "carries this mistake: the line is a no-op, and a reader may believe IB is "
                    "forced on while an inherited NCCL_IB_DISABLE=1 still sends NCCL to sockets."
                ),
                fix="delete NCCL_IB_ENABLE; write NCCL_IB_DISABLE=0 if the intent must be explicit",
                evidence=ev,
                refs=[f"{DOCS}#nccl-ib-disable"],
            )
            return
        near = _suggest(name)
        mean = f"; did you mean {' or '.join(near)}?" if near else ""
        yield meta.finding(
            target=_target(val, name),
            severity="warning",
            message=f"{name} is not an NCCL variable{mean}",
            actual=f"{name}={value}",
            expected=near[0] if near else None,
            explanation=(
                f"{name} is neither documented by NCCL nor read by its source (NCCL 2.30: "
                f"{len(known)} known names, env.rst and NCCL_PARAM); NCCL ignores it silently, so "
                "the setting it was meant to make is not made."
                + (f" Nearest known names by edit distance: {', '.join(near)}." if near else "")
            ),
            fix=(f"rename it to {near[0]}" if near else f"remove {name} or find the right name")
            + f" ({DOCS})",
            evidence=ev,
            refs=[DOCS],
        )
        return
    if spec.removed:
        repl = f"; use {spec.replaced_by}" if spec.replaced_by else ""
        yield meta.finding(
            target=_target(val, name),
            message=f"{name} was removed in NCCL {spec.removed} and is ignored{repl}",
            actual=f"{name}={value}",
            expected=spec.replaced_by,
            explanation=(
                f"NCCL's environment documentation marks {name} removed in {spec.removed}; "
                "current releases do not read it, so whatever it was meant to force is left to "
                "NCCL's own choice."
            ),
            fix=f"delete {name}" + (f" and set {spec.replaced_by} if needed" if repl else ""),
            evidence=ev,
            refs=spec_refs(spec),
        )
        return
    if spec.deprecated:
        yield meta.finding(
            target=_target(val, name),
            severity="info",
            message=f"{name} is deprecated since NCCL {spec.deprecated}"
            + (f" (use {spec.replaced_by})" if spec.replaced_by else ""),
            explanation=f"NCCL's environment documentation deprecates {name} in {spec.deprecated}.",
            fix=f"move to {spec.replaced_by}" if spec.replaced_by else f"drop {name}",
            evidence=ev,
            refs=spec_refs(spec),
        )
    if _is_dynamic(value):
        return
    yield from _lint_value(meta, spec, val)


def _lint_value(meta: CheckMeta, spec: VarSpec, val: Val[str]) -> Iterator[Finding]:
    name, value, ev = spec.name, val.value.strip(), [val.src.evidence()]
    if spec.type in {"int", "bool"}:
        n, whole = strtoll(value)
        lo, hi = (0, 1) if spec.type == "bool" else (spec.min, spec.max)
        if not whole:
            yield meta.finding(
                target=_target(val, name),
                message=f"{name}={value} is not an integer; NCCL reads it as {n}",
                actual=value,
                explanation=(
                    "NCCL reads integer variables with strtoll(value, NULL, 0) (src/misc/param.cc"
                    "): the leading number counts and the rest is dropped without a warning "
                    f"(no leading number gives 0), so {name} becomes {n}."
                ),
                fix=f"write {name} as a plain decimal integer",
                evidence=ev,
                refs=spec_refs(spec),
            )
        elif value.startswith("0") and len(value) > 1 and value[1:].isdecimal():
            yield meta.finding(
                target=_target(val, name),
                message=f"{name}={value} has a leading zero: NCCL reads it as octal {n}",
                actual=value,
                expected=str(int(value, 10)),
                explanation=(
                    "NCCL parses integers with strtoll(value, NULL, 0), where a leading 0 means "
                    f"octal: {value} is {n}, not {int(value, 10)}."
                ),
                fix=f"write {name}={int(value, 10)} without the leading zero",
                evidence=ev,
                refs=spec_refs(spec),
            )
        if name == "NCCL_IB_TIMEOUT":
            yield from _ib_timeout(meta, n, val)
        elif (lo is not None and n < lo) or (hi is not None and n > hi):
            yield meta.finding(
                target=_target(val, name),
                message=f"{name}={n} is outside {lo}..{hi}",
                actual=n,
                expected=f"{lo}..{hi}",
                explanation=(
                    f"NCCL documents {name} as "
                    + ("0 or 1" if spec.type == "bool" else f"an integer in {lo}..{hi}")
                    + (f" ({spec.note})" if spec.note else "")
                    + "; values outside that range are not meaningful."
                ),
                fix=f"set {name} within {lo}..{hi}"
                + (f" (default {spec.default})" if spec.default else ""),
                evidence=ev,
                refs=spec_refs(spec),
            )
    elif spec.type == "enum":
        if value.upper() not in {v.upper() for v in spec.values}:
            yield meta.finding(
                target=_target(val, name),
                message=f"{name}={value} is not one of {', '.join(spec.values)}",
                actual=value,
                expected=list(spec.values),
                explanation=(
                    f"NCCL accepts {', '.join(spec.values)} for {name}"
                    + (f" ({spec.note})" if spec.note else "")
                    + "; another value is not applied as intended."
                ),
                fix=f"set {name} to one of {', '.join(spec.values)}",
                evidence=ev,
                refs=spec_refs(spec),
            )
    elif spec.type == "algo-list":
        body = value.lstrip("^")
        allowed = {v.upper() for v in spec.values}
        bad = []
        for part in re.split(r"[;,]", body):
            token = part.split(":", 1)[-1].strip().lstrip("^")
            if token and token.upper() not in allowed:
                bad.append(token)
        if bad:
            yield meta.finding(
                target=_target(val, name),
                message=f"{name}: unknown name(s) {', '.join(bad)}",
                actual=value,
                expected=list(spec.values),
                explanation=f"NCCL knows {', '.join(spec.values)} for {name} (not case sensitive).",
                fix=f"use only {', '.join(spec.values)}",
                evidence=ev,
                refs=spec_refs(spec),
            )


def _ib_timeout(meta: CheckMeta, n: int, val: Val[str]) -> Iterator[Finding]:
    t = ib_timeout_seconds(n)
    rule = (
        f"The IB local ACK timeout is 4.096 µs x 2^{n} = {_human_seconds(t)} per attempt "
        "(IB spec vol. 1 12.7.34, NCCL docs); NCCL gives up after about timeout x "
        "NCCL_IB_RETRY_CNT (default 7). NCCL's default is 20 (4.3 s, about 30 s in all) since "
        "2.23, 18 since 2.14, 14 before. Values 1-31 are valid; 0 and >= 32 mean no timeout."
    )
    if 1 <= n <= 31:
        yield meta.finding(
            target=_target(val, "NCCL_IB_TIMEOUT"),
            severity="info",
            message=(
                f"NCCL_IB_TIMEOUT={n}: {_human_seconds(t)} per retry, about "
                f"{_human_seconds(t * 7)} with 7 retries before NCCL reports a dead peer"
            ),
            actual=n,
            explanation=rule + " S15 uses 22 (17.2 s per attempt).",
            fix="none needed; lower it if failures must surface sooner",
            evidence=[val.src.evidence()],
            refs=[f"{DOCS}#nccl-ib-timeout"],
        )
        return
    yield meta.finding(
        target=_target(val, "NCCL_IB_TIMEOUT"),
        message=f"NCCL_IB_TIMEOUT={n} is outside 1..31: the IB timeout becomes infinite",
        actual=n,
        expected="1..31 (NCCL default 20; S15 uses 22)",
        explanation=rule + " A lost peer then hangs the job instead of failing it.",
        fix="set NCCL_IB_TIMEOUT=20 (NCCL's default) or 22 (S15)",
        evidence=[val.src.evidence()],
        refs=[f"{DOCS}#nccl-ib-timeout"],
    )


def _transport(meta: CheckMeta, ctx: CheckContext, env: dict[str, Val[str]]) -> Iterator[Finding]:
    transport = ctx.fabric.transport
    if transport == "socket":
        return
    name = "InfiniBand" if transport == "ib" else "RoCE"
    dis = env.get("NCCL_IB_DISABLE")
    if dis is not None and not _is_dynamic(dis.value) and strtoll(dis.value)[0] != 0:
        yield meta.finding(
            target=_target(dis, "NCCL_IB_DISABLE"),
            severity="error",
            message=(
                f"NCCL_IB_DISABLE={dis.value} on a {name} fabric: NCCL falls back to TCP sockets"
            ),
            expected="NCCL_IB_DISABLE unset or 0",
            actual=dis.value,
            explanation=(
                "NCCL_IB_DISABLE=1 removes the IB verbs transport (which also carries RoCE); NCCL "
                f"then uses IP sockets over the {name} NICs (NCCL docs). Socket transport costs "
                "CPU copies and reaches a fraction of line rate (S5, S17)."
            ),
            fix="remove NCCL_IB_DISABLE (or set it to 0)",
            evidence=[dis.src.evidence()],
            refs=["S5", "S17", f"{DOCS}#nccl-ib-disable"],
        )
    net = env.get("NCCL_NET")
    if net is not None and net.value.strip().lower() == "socket":
        yield meta.finding(
            target=_target(net, "NCCL_NET"),
            severity="error",
            message=f"NCCL_NET=Socket on a {name} fabric: NCCL uses TCP sockets",
            expected="NCCL_NET unset or IB",
            actual=net.value,
            explanation=(
                'NCCL_NET forces the network module; "Socket" is NCCL\'s TCP transport (NCCL '
                "docs), so the RDMA NICs carry NCCL over TCP (S5, S17)."
            ),
            fix="remove NCCL_NET (or set NCCL_NET=IB)",
            evidence=[net.src.evidence()],
            refs=["S5", "S17", f"{DOCS}#nccl-net"],
        )


def _host_dscp_override(observed: Observed, dscp: int) -> list[EvidenceItem]:
    """Sources of a host-wide mlx5 global traffic class that already marks ``dscp``."""
    out = []
    for host in observed.hosts():
        for v in host.host_dscp:
            if "traffic_class" in v.src.file and v.value == dscp:
                out.append(v.src.evidence())
    return out


def _roce_marking(
    meta: CheckMeta, ctx: CheckContext, env: dict[str, Val[str]]
) -> Iterator[Finding]:
    if ctx.fabric.transport != "roce":
        return
    qos = ctx.fabric.qos
    want = qos.nccl_ib_tc
    tc = env.get("NCCL_IB_TC")
    if tc is None:
        covered = _host_dscp_override(ctx.observed, qos.roce_dscp) if ctx.observed else []
        yield meta.finding(
            target="NCCL_IB_TC",
            severity="info" if covered else "warning",
            message=(
                f"NCCL_IB_TC not set: NCCL marks RoCE with ToS 0 (DSCP 0), the fabric expects "
                f"DSCP {qos.roce_dscp} (NCCL_IB_TC={want})"
                + ("; the host's global traffic_class covers it" if covered else "")
            ),
            expected=want,
            actual=None,
            explanation=(
                f"NCCL_IB_TC is the IP ToS byte of NCCL's RoCEv2 packets (default 0). The fabric "
                f"classifies RoCE by DSCP {qos.roce_dscp} into its lossless priority "
                f"{qos.roce_priority}; DSCP 0 lands in the default class, without PFC. ToS = "
                f"DSCP << 2 = {qos.roce_dscp} x 4 = {want} (S15). An mlx5 global "
                "traffic_class (sysfs) overrides what NCCL asks for."
            ),
            fix=f"export NCCL_IB_TC={want}",
            evidence=covered[:3],
            refs=[f"{DOCS}#nccl-ib-tc"],
        )
    elif not _is_dynamic(tc.value):
        tos, _ = strtoll(tc.value)
        dscp, ecn = tos >> 2, tos & 3
        if not 0 <= tos <= 255:
            return  # the range rule has said it
        if dscp != qos.roce_dscp:
            yield meta.finding(
                target=_target(tc, "NCCL_IB_TC"),
                severity="error",
                message=(
                    f"NCCL_IB_TC={tos} marks DSCP {dscp}; the fabric's RoCE DSCP is "
                    f"{qos.roce_dscp} (NCCL_IB_TC={want})"
                ),
                expected=want,
                actual=tos,
                explanation=(
                    f"NCCL_IB_TC is the ToS byte: DSCP = ToS >> 2 = {tos} >> 2 = {dscp}, ECN = "
                    f"ToS & 3 = {ecn}. The fabric maps DSCP {qos.roce_dscp} to lossless priority "
                    f"{qos.roce_priority}; DSCP {dscp} goes to traffic class "
                    f"{qos.dscp_to_tc.get(dscp, 0)}, so NCCL's traffic misses PFC/ECN (S13-S15). "
                    f"The right value is {qos.roce_dscp} << 2 = {want}."
                ),
                fix=f"export NCCL_IB_TC={want}",
                evidence=[tc.src.evidence()],
                refs=["S13", "S14", f"{DOCS}#nccl-ib-tc"],
            )
        elif ecn:
            names = {1: "ECT(1)", 2: "ECT(0)", 3: "CE"}
            yield meta.finding(
                target=_target(tc, "NCCL_IB_TC"),
                severity="error" if ecn == 3 else "info",
                message=(
                    f"NCCL_IB_TC={tos} sets the ECN bits to {ecn} ({names[ecn]}); the DSCP "
                    f"({dscp}) is right, the value should be {want}"
                ),
                expected=want,
                actual=tos,
                explanation=(
                    f"{tos} = DSCP {dscp} << 2 | ECN {ecn}. The low two ToS bits are the ECN field "
                    "(RFC 3168), which the NIC's congestion control owns; the S15 rule is "
                    "NCCL_IB_TC = DSCP << 2. "
                    + (
                        "CE (3) marks every packet as already congested: receivers answer each "
                        "with CNPs and DCQCN throttles the senders to a crawl."
                        if ecn == 3
                        else "An ECT codepoint is commonly copied from cma_roce_tos 106 examples; "
                        "it is harmless where the NIC sets ECT itself, but it is not the "
                        "fabric's value and hides the intent."
                    )
                ),
                fix=f"export NCCL_IB_TC={want}",
                evidence=[tc.src.evidence()],
                refs=["S13", "S15", "https://www.rfc-editor.org/rfc/rfc3168"],
            )
    gid = env.get("NCCL_IB_GID_INDEX")
    if gid is None:
        yield meta.finding(
            target="NCCL_IB_GID_INDEX",
            severity="warning",
            message=(
                "NCCL_IB_GID_INDEX not set: NCCL >= 2.21 picks an IPv4 RoCEv2 GID itself, older "
                "releases use GID 0 (link-local RoCEv1)"
            ),
            explanation=(
                "Since NCCL 2.21 the default -1 selects the GID by NCCL_IB_ADDR_FAMILY (AF_INET), "
                "NCCL_IB_ADDR_RANGE and NCCL_IB_ROCE_VERSION_NUM (2) (NCCL docs); releases before "
                "2.21 default to index 0, the MAC-derived link-local RoCEv1 GID, which does not "
                "cross routed leaf-spine hops and carries no DSCP."
            ),
            fix=(
                "on NCCL < 2.21 set NCCL_IB_GID_INDEX to the RoCEv2 IPv4 GID (show_gids: the v2 "
                "row with an IPv4 address, usually 3); on >= 2.21 leaving it unset is fine"
            ),
            refs=[f"{DOCS}#nccl-ib-gid-index", f"{DOCS}#nccl-ib-roce-version-num"],
        )
    elif not _is_dynamic(gid.value):
        idx, _ = strtoll(gid.value)
        if idx in (0, 1):
            yield meta.finding(
                target=_target(gid, "NCCL_IB_GID_INDEX"),
                severity="warning",
                message=(
                    f"NCCL_IB_GID_INDEX={idx} is a link-local GID "
                    f"({'RoCEv1' if idx == 0 else 'RoCEv2'} fe80::), not routable on a leaf-spine "
                    "fabric"
                ),
                expected="the IPv4 RoCEv2 GID (show_gids, usually 3), or unset on NCCL >= 2.21",
                actual=idx,
                explanation=(
                    "On mlx5 ports GID indices 0 and 1 are derived from the MAC (fe80::, RoCEv1 "
                    "then RoCEv2); the IPv4-mapped GIDs of the port's address follow (v1, v2: "
                    "usually 2 and 3; see show_gids). RoCEv1 is not IP at all and a link-local "
                    "RoCEv2 GID does not route, so traffic between racks fails or never gets "
                    "the DSCP the fabric classifies on."
                ),
                fix="set NCCL_IB_GID_INDEX=3 after checking show_gids, or unset it on NCCL >= 2.21",
                evidence=[gid.src.evidence()],
                refs=[f"{DOCS}#nccl-ib-gid-index"],
            )


def _layer_srcs(hosts: list[ObservedDevice], devs: list[str]) -> list[EvidenceItem]:
    out = [h.link_layers[d].src.evidence() for h in hosts for d in devs if d in h.link_layers]
    return out[:3]


def _devices(meta: CheckMeta, ctx: CheckContext, env: dict[str, Val[str]]) -> Iterator[Finding]:
    observed = ctx.observed
    if observed is None:
        return
    hosts = observed.hosts()
    hca = env.get("NCCL_IB_HCA")
    layered = [h for h in hosts if h.link_layers]
    if (
        hca is not None
        and layered
        and not _is_dynamic(hca.value)
        and ctx.fabric.transport != "socket"
    ):
        want = "InfiniBand" if ctx.fabric.transport == "ib" else "Ethernet"
        spec = parse_name_list(hca.value)
        layer: dict[str, str] = {}
        for h in layered:
            for dev, v in h.link_layers.items():
                layer.setdefault(dev.split(":")[0], v.value)
        devs = set(layer)
        if not spec.exclude:
            missing = [
                e
                for e, _ in spec.entries
                if not match_list(NameList(False, spec.exact, ((e, None),)), devs)
            ]
            if missing:
                yield meta.finding(
                    target=_target(hca, "NCCL_IB_HCA"),
                    message=f"NCCL_IB_HCA names {some(missing)}, which no host has",
                    actual=hca.value,
                    expected=", ".join(sorted(devs)[:16]),
                    explanation=(
                        "NCCL_IB_HCA filters the RDMA devices NCCL may use ("
                        + ("exact names" if spec.exact else "name prefixes")
                        + f"); these entries match none of the {len(devs)} devices the hosts "
                        "report (ibv_devinfo), so they select nothing."
                    ),
                    fix=f"use device names the hosts have: {some(sorted(devs), 8)}",
                    evidence=[hca.src.evidence()],
                    refs=[f"{DOCS}#nccl-ib-hca"],
                )
        chosen = match_list(spec, devs)
        wrong = sorted(d for d in chosen if layer[d] != want)
        if wrong:
            right = sorted(d for d in devs if layer[d] == want)
            yield meta.finding(
                target=_target(hca, "NCCL_IB_HCA"),
                severity="error",
                message=(
                    f"NCCL_IB_HCA selects {some(wrong)} with link layer "
                    f"{layer[wrong[0]]}; the fabric is {ctx.fabric.transport} ({want})"
                ),
                expected=", ".join(right[:16]),
                actual=", ".join(wrong[:16]),
                explanation=(
                    f"The fabric carries NCCL over {want} ports; the selected devices report link "
                    f"layer {', '.join(sorted({layer[d] for d in wrong}))} (ibv_devinfo), e.g. a "
                    "front-end or storage NIC, so NCCL would use a port outside the fabric."
                ),
                fix=(
                    f"NCCL_IB_HCA={'=' if spec.exact else ''}{','.join(right)}"
                    if right
                    else f"name only {want} devices in NCCL_IB_HCA"
                ),
                evidence=[hca.src.evidence(), *_layer_srcs(layered, wrong)],
                refs=[f"{DOCS}#nccl-ib-hca"],
            )
    ifn = env.get("NCCL_SOCKET_IFNAME")
    with_ifs = [h for h in hosts if h.host_interfaces]
    if ifn is not None and with_ifs and not _is_dynamic(ifn.value):
        spec = parse_name_list(ifn.value)
        bad = []
        for h in with_ifs:
            names = set(h.host_interfaces) - set(h.link_layers) - {"lo"}
            if not match_list(spec, names):
                bad.append(h.name)
        if bad:
            sample = with_ifs[[h.name for h in with_ifs].index(bad[0])]
            have = sorted(set(sample.host_interfaces) - set(sample.link_layers))
            yield meta.finding(
                target=_target(ifn, "NCCL_SOCKET_IFNAME"),
                severity="error",
                message=(
                    f"NCCL_SOCKET_IFNAME={ifn.value} matches no interface on {some(bad)} "
                    f"({len(bad)} of {len(with_ifs)} hosts)"
                ),
                expected=", ".join(have[:16]),
                actual=ifn.value,
                explanation=(
                    "NCCL_SOCKET_IFNAME selects the IP interfaces NCCL bootstraps over (and uses "
                    "for socket transport): a comma list of prefixes, exact names after '=', an "
                    "exclude list after '^' (NCCL docs). With no match NCCL finds no interface "
                    f"and init fails. {bad[0]} has: {', '.join(have[:8])}."
                ),
                fix=f"set NCCL_SOCKET_IFNAME to an interface every host has (e.g. ={have[0]})"
                if have
                else "set NCCL_SOCKET_IFNAME to the hosts' bootstrap interface",
                evidence=[ifn.src.evidence()],
                refs=[f"{DOCS}#nccl-socket-ifname"],
            )


@register(CHECK)
def check(ctx: CheckContext) -> Iterator[Finding]:
    observed = ctx.observed
    if observed is None or observed.nccl_env is None:
        return
    meta = metadata()[CHECK]
    env = observed.nccl_env
    for name, val in sorted(env.items(), key=lambda kv: (kv[1].src.file, kv[1].src.line or 0)):
        if name.startswith("NCCL_"):
            yield from _lint_variable(meta, name, val)
    yield from _transport(meta, ctx, env)
    yield from _roce_marking(meta, ctx, env)
    yield from _devices(meta, ctx, env)

"""Host RoCE marking state: the mlx5 ``traffic_class`` sysfs file and rdma_cm's default ToS.

Two small files decide the IP ToS byte that a GPU server's RoCEv2 packets carry, hence the
DSCP the switches classify them by (S13-S15; the DSCP chain check follows it to the queue):

* **``rdma-traffic-class``**: ``/sys/class/infiniband/<dev>/tc/<port>/traffic_class`` (MLNX_OFED
  mlx5_ib). Reading it prints ``Global tclass=<n>`` when a global ToS is set, then one line per
  match rule (``tclass=<n>,dst_ip=...``), and nothing at all when neither is set. Writing a bare
  number sets the global value, which the driver applies to every RoCE QP (it programs the QP's
  DSCP field as ``tclass >> 2``), overriding what the application asked for (NCCL_IB_TC).
  Sources: mlx5_ib ``traffic_class_show`` (``"Global tclass=%d\\n"``); the read-back
  ``Global tclass=106`` quoted in openucx/ucx#11105.
* **``cma-roce-tos``**: rdma_cm's configfs ``/sys/kernel/config/rdma_cm/<dev>/ports/<port>/
  default_roce_tos``: the ToS of connections made through rdma_cm that set none themselves.
  The ``cma_roce_tos -d <dev> [-p <port>] [-t <tos>]`` script (mlx-tools) writes it when ``-t`` is
  given and then ``cat``\\ s it, so its output is a bare number; a capture is recognised by the
  command line (shell prompt or ``set -x`` trace) followed by that number.

Each record carries the ToS byte and its two fields: ``dscp = tos >> 2`` (RFC 2474) and
``ecn = tos & 3`` (RFC 3168: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE). 106 = DSCP 26 with ECT(0).

Weak markers: a bare number (the configfs file itself, or a ``traffic_class`` value as a probe
bundle stores it) has no marker at all; it is parsed only when the kind is given explicitly, and
detection never claims it. ``Global tclass=`` is unique to the mlx5 file (0.95); a
``cma_roce_tos``/``default_roce_tos`` command followed by a bare number line scores 0.9.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = ["ECN_NAMES", "RoceTos", "TrafficClass", "parse_cma_roce_tos", "parse_traffic_class"]

ECN_NAMES = ("Not-ECT", "ECT(1)", "ECT(0)", "CE")
"""RFC 3168 names of the two ECN bits, by value."""


@dataclass(slots=True, kw_only=True)
class _TosRecord(Record):
    tos: int
    """The whole ToS / traffic-class byte (0-255)."""
    dscp: int
    """``tos >> 2``."""
    ecn: int
    """``tos & 3``."""
    ecn_name: str
    device: str | None = None
    """RDMA device (``mlx5_0``) when the capture names it (a ``cat`` path, ``-d`` option)."""
    port: int | None = None


@dataclass(slots=True, kw_only=True)
class TrafficClass(_TosRecord):
    """One value of the mlx5 ``traffic_class`` file: the global ToS, or a match rule's."""

    record_type: ClassVar[str] = "traffic_class"

    scope: str = "global"
    """``global`` (applies to every RoCE QP of the port) or ``rule`` (only matching addresses)."""
    match: str | None = None
    """The rule's match part (``dst_ip=10.0.0.0/8``), for ``scope == "rule"``."""


@dataclass(slots=True, kw_only=True)
class RoceTos(_TosRecord):
    """rdma_cm's default RoCE ToS of one device port."""

    record_type: ClassVar[str] = "cma_roce_tos"


def _tclass(
    line: int,
    tos: int,
    device: str | None,
    port: int | None,
    scope: str = "global",
    match: str | None = None,
) -> TrafficClass:
    return TrafficClass(
        line=line, tos=tos, dscp=tos >> 2, ecn=tos & 3, ecn_name=ECN_NAMES[tos & 3],
        device=device, port=port, scope=scope, match=match,
    )  # fmt: skip


def _roce_tos(line: int, tos: int, device: str | None, port: int | None) -> RoceTos:
    return RoceTos(
        line=line, tos=tos, dscp=tos >> 2, ecn=tos & 3, ecn_name=ECN_NAMES[tos & 3],
        device=device, port=port,
    )  # fmt: skip


_GLOBAL_RE = re.compile(r"^\s*Global tclass\s*=\s*(-?\d+)\s*$")
_RULE_RE = re.compile(r"^\s*tclass\s*=\s*(\d+)\s*,\s*(\S(?:.*\S)?)\s*$")  # linear: no lazy .*?
_BARE_RE = re.compile(r"^\s*(\d{1,3})\s*$")
_TC_PATH_RE = re.compile(r"/sys/class/infiniband/([\w.-]+)/tc/(\d+)/traffic_class")
_CMA_CMD_RE = re.compile(r"\bcma_roce_tos\b(.*)$")
_CONFIGFS_RE = re.compile(r"rdma_cm/([\w.-]+)/ports/(\d+)/default_roce_tos")
_OPT_RE = re.compile(r"-([dpt])\s*(\S+)")
_PROMPT_RE = re.compile(r"^\s*(?:\+|\S*[$#]|\[[^\]]*\][$#])\s")


def _is_command(line: str) -> bool:
    return bool(_PROMPT_RE.match(line)) or "cat " in line or "echo " in line


def _detect_traffic_class(text: str) -> float:
    return 0.95 if "Global tclass=" in text else 0.0


def _detect_cma(text: str) -> float:
    lines = text.splitlines()
    for i, line in enumerate(lines[:-1]):
        if ("cma_roce_tos" in line or "default_roce_tos" in line) and _BARE_RE.match(lines[i + 1]):
            return 0.9
    return 0.0


@register(
    "rdma-traffic-class",
    summary="cat /sys/class/infiniband/DEV/tc/PORT/traffic_class (mlx5 global RoCE ToS)",
    detect=_detect_traffic_class,
    refs=("S13", "S14", "S15"),
)
def parse_traffic_class(text: str) -> ParseResult:
    """Parse ``traffic_class`` read-backs (with or without the ``cat`` command line)."""
    res = ParseResult("rdma-traffic-class")
    device: str | None = None
    port: int | None = None
    lines = text.splitlines()
    bare_only = sum(1 for ln in lines if ln.strip()) == 1
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        path = _TC_PATH_RE.search(line)
        if path and _is_command(line):
            # a command reading (or writing) the file names the device of what follows
            device, port = path.group(1), int(path.group(2))
            continue
        m = _GLOBAL_RE.match(line)
        if m:
            tos = int(m.group(1))
            if not 0 <= tos <= 255:
                res.warn(no, f"traffic class {tos} outside 0-255", line)
                continue
            res.records.append(_tclass(no, tos, device, port))
            continue
        m = _RULE_RE.match(line)
        if m and int(m.group(1)) <= 255:
            res.records.append(_tclass(no, int(m.group(1)), device, port, "rule", m.group(2)))
            continue
        m = _BARE_RE.match(line)
        if m and bare_only:
            # the value as written (``echo 106 > traffic_class``), how a probe bundle keeps it
            tos = int(m.group(1))
            if tos <= 255:
                res.records.append(_tclass(no, tos, device, port))
                continue
        if _is_command(line):
            continue
        res.warn(no, "not a traffic_class line (expected 'Global tclass=N')", line)
    return res


@register(
    "cma-roce-tos",
    summary="cma_roce_tos -d DEV [-t TOS] / cat .../rdma_cm/DEV/ports/PORT/default_roce_tos",
    detect=_detect_cma,
    refs=("S13", "S14", "S15"),
)
def parse_cma_roce_tos(text: str) -> ParseResult:
    """Parse ``cma_roce_tos`` output or a ``default_roce_tos`` read-back.

    A bare number line is a value; the command line before it (``cma_roce_tos -d mlx5_2 -t
    106``, ``cat /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos``) names the device
    and port (``cma_roce_tos`` defaults: mlx5_0, port 1). Other lines of a session are ignored;
    a bare number with no command before it is taken as the file's content.
    """
    res = ParseResult("cma-roce-tos")
    device: str | None = None
    port: int | None = None
    pending = False
    lines = text.splitlines()
    nonblank = [ln for ln in lines if ln.strip()]
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        cmd = _CMA_CMD_RE.search(line)
        if cmd and not _BARE_RE.match(line):
            opts = dict(_OPT_RE.findall(cmd.group(1)))
            device = opts.get("d", "mlx5_0")
            port = int(opts["p"]) if opts.get("p", "").isdecimal() else 1
            pending = True
            continue
        cfs = _CONFIGFS_RE.search(line)
        if cfs:
            device, port, pending = cfs.group(1), int(cfs.group(2)), True
            continue
        m = _BARE_RE.match(line)
        if m and (pending or len(nonblank) == 1):
            tos = int(m.group(1))
            if tos > 255:
                res.warn(no, f"ToS {tos} outside 0-255", line)
            else:
                res.records.append(_roce_tos(no, tos, device, port))
            pending = False
            continue
        if pending and line.strip():
            # the script's own error lines ("You must be root to run this") end the command
            res.warn(no, "cma_roce_tos did not print a ToS", line)
            pending = False
    return res

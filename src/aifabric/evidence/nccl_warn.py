"""NCCL's WARN lines: the network failures of an NCCL log, classified.

``NCCL WARN`` messages (and the NCCL failures that PyTorch or a launcher quote without NCCL's
prefix) become :class:`~aifabric.evidence.nccl_log_base.NcclProblem` records with a
``category`` and, for the failures that matter to a network engineer (S20 row 1, S22: NCCL
timeouts and retries in logs), a richer subclass: :class:`IbCompletionError` (IB completion
errors with the ``ibv_wc_status`` name, with or without the peer address: ``with error 12,
opcode 0, len 0, vendor err 129 (Recv)`` up to NCCL 2.18, ``with status=12 opcode=129 len=65536
vendor err 129 (Recv) localGid .. remoteGids..`` from 2.19 and in the HPC-X plugin),
:class:`IbVerbsCallError` (``ibv_*`` call failures with errno, without one before NCCL 2.9) and
:class:`SocketError` (socket connect/close errors and ``Call to connect returned Connection timed
out, retrying``). Plugin errors, ``unhandled system error`` and remote errors keep the base
class with their category.

Sources: NCCL src/transport/net_ib.cc and src/misc/socket.cc at https://github.com/NVIDIA/nccl;
the ``ibv_wc_status`` enumeration of rdma-core
https://github.com/linux-rdma/rdma-core/blob/master/libibverbs/verbs.h; glibc ``strerror()``
texts of Linux errno values; the captures under tests/fixtures/evidence/nccl-log/.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aifabric.evidence.nccl_log_base import (
    LineFields,
    NcclProblem,
    ProblemFields,
    Unreadable,
    opt_int,
)

__all__ = [
    "IBV_WC_STATUS",
    "IbCompletionError",
    "IbVerbsCallError",
    "SocketError",
    "classify_problem",
    "errno_of",
]

IBV_WC_STATUS: dict[int, str] = {
    0: "IBV_WC_SUCCESS",
    1: "IBV_WC_LOC_LEN_ERR",
    2: "IBV_WC_LOC_QP_OP_ERR",
    3: "IBV_WC_LOC_EEC_OP_ERR",
    4: "IBV_WC_LOC_PROT_ERR",
    5: "IBV_WC_WR_FLUSH_ERR",
    6: "IBV_WC_MW_BIND_ERR",
    7: "IBV_WC_BAD_RESP_ERR",
    8: "IBV_WC_LOC_ACCESS_ERR",
    9: "IBV_WC_REM_INV_REQ_ERR",
    10: "IBV_WC_REM_ACCESS_ERR",
    11: "IBV_WC_REM_OP_ERR",
    12: "IBV_WC_RETRY_EXC_ERR",
    13: "IBV_WC_RNR_RETRY_EXC_ERR",
    14: "IBV_WC_LOC_RDD_VIOL_ERR",
    15: "IBV_WC_REM_INV_RD_REQ_ERR",
    16: "IBV_WC_REM_ABORT_ERR",
    17: "IBV_WC_INV_EECN_ERR",
    18: "IBV_WC_INV_EEC_STATE_ERR",
    19: "IBV_WC_FATAL_ERR",
    20: "IBV_WC_RESP_TIMEOUT_ERR",
    21: "IBV_WC_GENERAL_ERR",
    22: "IBV_WC_TM_ERR",
    23: "IBV_WC_TM_RNDV_INCOMPLETE",
}
"""``enum ibv_wc_status`` of rdma-core libibverbs/verbs.h, by value (what NCCL prints)."""

_WC_MEANING: dict[int, str] = {
    4: "local protection error: the HCA could not access the registered buffer "
    "(GPUDirect RDMA / IOMMU / ACS / peer-memory problem)",
    5: "work request flushed: the QP was already in the error state (follows a first error)",
    10: "remote access error: the peer rejected the RDMA access (rkey / registration)",
    12: "transport retry counter exceeded: no ACK from the peer after NCCL_IB_RETRY_CNT "
    "retries of NCCL_IB_TIMEOUT (packet loss, link down, wrong GID/route, PFC/ECN problems)",
    13: "RNR retry counter exceeded: the receiver had no receive buffer posted",
}

# errno names for the texts strerror() gives (glibc, Linux).
_ERRNO_BY_TEXT: dict[str, int] = {
    "Operation not permitted": 1,
    "No such file or directory": 2,
    "Interrupted system call": 4,
    "Input/output error": 5,
    "Cannot allocate memory": 12,
    "Permission denied": 13,
    "Bad address": 14,
    "Device or resource busy": 16,
    "No such device": 19,
    "Invalid argument": 22,
    "Operation not supported": 95,
    "Protocol not available": 92,
    "Address already in use": 98,
    "Cannot assign requested address": 99,
    "Network is down": 100,
    "Network is unreachable": 101,
    "Software caused connection abort": 103,
    "Connection reset by peer": 104,
    "Connection timed out": 110,
    "Connection refused": 111,
    "No route to host": 113,
    "Operation now in progress": 115,
}


@dataclass(slots=True, kw_only=True)
class IbCompletionError(NcclProblem):
    """``NET/IB : Got completion from peer 10.0.0.2<1234> with error 12, opcode 0, len 0, vendor
    err 129 (Recv)`` and the ``status=12 opcode=.. len=.. .. localGid .. remoteGids..`` form."""

    status: int
    status_name: str | None = None
    """``IBV_WC_RETRY_EXC_ERR`` for 12 (rdma-core verbs.h)."""
    opcode: int | None = None
    length_bytes: int | None = None
    vendor_err: int | None = None
    direction: str | None = None
    """``Send`` / ``Recv``."""
    peer_address: str | None = None
    peer_port: int | None = None
    local_gid: str | None = None
    remote_gid: str | None = None


@dataclass(slots=True, kw_only=True)
class IbVerbsCallError(NcclProblem):
    """``Call to ibv_modify_qp failed with error Connection timed out`` / ``with 110 ..., on dev
    mlx5_0:1, curr state INIT, next state RTR, local GID index 3 ...`` /
    ``ibv_reg_mr_iova2 failed with error Cannot allocate memory``."""

    call: str
    errno: int | None = None
    error_text: str | None = None
    device: str | None = None
    qp_state_from: str | None = None
    qp_state_to: str | None = None
    gid_index: int | None = None
    local_gid: str | None = None
    remote_gid: str | None = None


@dataclass(slots=True, kw_only=True)
class SocketError(NcclProblem):
    """``socketStartConnect: Connect to 10.0.0.2<45763> failed : Connection timed out``,
    ``socketProgress: Connection closed by remote peer node1<57557>``."""

    peer_address: str | None = None
    peer_port: int | None = None
    errno: int | None = None
    error_text: str | None = None


_COMPLETION_RE = re.compile(
    r"Got completion(?: from peer(?: (?P<peer>[^\s<]+)(?:<(?P<port>\d+)>)?)?)?"
    r" with (?:error |status=)(?:\w+\()?(?P<status>\d+)\)?,? opcode[ =](?:\w+\()?(?P<op>\d+)\)?,?"
    r"(?: len[ =](?P<len>\d+),?)? vendor[ _]err[ =](?P<verr>\d+)(?: \((?P<dir>\w+)\))?"
)
"""Up to 2.20 ``with error 12, opcode 0, len 0, vendor err 129 (Recv)``; 2.21-2.26 ``with
status=12 opcode=0 len=0 vendor err 129 (Recv)``; 2.27+ (net_ib/p2p.cc) ``with
status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RDMA_WRITE(1) vendor_err=129`` (no length). The
peer is ``addr<port>``; a paste may drop the port."""
_LGID_RE = re.compile(r"localGid\s*(\S+)")
_RGID_RE = re.compile(r"remoteGids?\s*(\S+)")
_IBV_RE = re.compile(
    r"(?:Call to )?(?P<call>ibv_\w+|mlx5dv_\w+|wrap_ibv_\w+)(?:\([^)]*\))? failed"
    r"(?P<with> with (?:error )?(?:(?P<num>\d+) )?)?"
)
"""The call and what follows ``failed``; the error text (up to the first comma) and its trailing
`` errno N`` are cut in Python (:func:`_ibv_text`): a lazy text group before an optional errno
and an end-of-line anchor after blanks is quadratic over a run of blanks (issue 16)."""
_ERRNO_TAIL_RE = re.compile(r" errno (\d+)$")


def _ibv_text(msg: str, m: re.Match[str]) -> tuple[str, int | None] | None:
    """(error text, errno) after an :data:`_IBV_RE` match; ``None`` when ``failed`` is followed
    by neither `` with ...`` nor a comma or the end of the line (not this message)."""
    tail = msg[m.end() :]
    if m["with"] is None:
        return ("", None) if not tail.strip() or tail.startswith(",") else None
    text = tail.split(",", 1)[0].rstrip()
    e = _ERRNO_TAIL_RE.search(text)
    if e is not None:
        return text[: e.start()].rstrip(), int(e[1])
    return text, None
_IBV_DEV_RE = re.compile(r"on dev (\S+?),")
_IBV_STATE_RE = re.compile(r"curr state (\w+), next state (\w+)")
_IBV_GIDX_RE = re.compile(r"local GID index (\d+)")
_IBV_LGID_RE = re.compile(r"local GID (\S+?),")
_IBV_RGID_RE = re.compile(r"remote GID (\S+)")
_CONNECT_RE = re.compile(
    r"Connect to (?P<peer>[^\s<]+)<(?P<port>\d+)> failed[ \t]*+:[ \t]*+(?P<text>\S(?:.*\S)?)\s*$"
)  # peer up to its '<', text greedy to the last non-blank: linear (issue 16)
_CLOSED_RE = re.compile(r"Connection closed by remote peer (?P<peer>\S+?)<(?P<port>\d+)>")


def errno_of(text: str) -> int | None:
    """The errno of a ``strerror()`` text (``Connection timed out`` → 110), ``None`` if unknown."""
    return _ERRNO_BY_TEXT.get(text.strip().rstrip(".").strip())


def classify_problem(msg: str, common: LineFields, source: str | None) -> NcclProblem:
    """A WARN message (the text after ``NCCL WARN``) as the most specific problem record.

    Raises :class:`Unreadable` for a ``Got completion`` message that does not parse.
    """
    base = ProblemFields(**common, message=msg.strip(), source=source)
    if "Got completion" in msg:
        m = _COMPLETION_RE.search(msg)
        if m is None:
            raise Unreadable("expected 'Got completion ... with error N, opcode N, len N, ...'")
        status = int(m["status"])
        lg = _LGID_RE.search(msg)
        rg = _RGID_RE.search(msg)
        return IbCompletionError(
            category="ib_completion",
            hint=_WC_MEANING.get(status),
            status=status,
            status_name=IBV_WC_STATUS.get(status),
            opcode=int(m["op"]),
            length_bytes=opt_int(m["len"]),
            vendor_err=int(m["verr"]),
            direction=m["dir"],
            peer_address=m["peer"],
            peer_port=opt_int(m["port"]),
            local_gid=lg[1] if lg else None,
            remote_gid=rg[1] if rg else None,
            **base,
        )
    if "ibv_" in msg or "mlx5dv_" in msg:
        m = _IBV_RE.search(msg)
        got = _ibv_text(msg, m) if m is not None else None
        if m is not None and got is not None:
            err_text, tail_errno = got[0].strip(), got[1]
            errno = opt_int(m["num"]) or tail_errno or (errno_of(err_text) if err_text else None)
            dev = _IBV_DEV_RE.search(msg)
            st = _IBV_STATE_RE.search(msg)
            gi = _IBV_GIDX_RE.search(msg)
            lg = _IBV_LGID_RE.search(msg)
            rg = _IBV_RGID_RE.search(msg)
            cat = "dmabuf" if "dmabuf" in m["call"] else "ibv_call"
            hint = None
            if m["call"].endswith("modify_qp") and errno == 110:
                hint = (
                    "QP could not reach the peer: no route between these GIDs (rail-only "
                    "fabric and NCCL_CROSS_NIC, wrong NCCL_IB_GID_INDEX, down link)"
                )
            return IbVerbsCallError(
                category=cat,
                hint=hint,
                call=m["call"],
                errno=errno,
                error_text=err_text or None,
                device=dev[1] if dev else None,
                qp_state_from=st[1] if st else None,
                qp_state_to=st[2] if st else None,
                gid_index=int(gi[1]) if gi else None,
                local_gid=lg[1] if lg else None,
                remote_gid=rg[1] if rg else None,
                **base,
            )
    if "Connect to " in msg and "failed" in msg:
        m = _CONNECT_RE.search(msg)
        if m is not None:
            text = m["text"]
            return SocketError(
                category="socket_connect",
                peer_address=m["peer"],
                peer_port=int(m["port"]),
                errno=errno_of(text),
                error_text=text,
                **base,
            )
    if "Connection closed by remote peer" in msg:
        m = _CLOSED_RE.search(msg)
        return SocketError(
            category="socket_closed",
            peer_address=m["peer"] if m else None,
            peer_port=int(m["port"]) if m else None,
            **base,
        )
    low = msg.lower()
    if "call to connect" in low or "socket" in low:
        text = msg.rpartition(":")[2].strip() if ":" in msg else None
        return SocketError(
            category="socket_error",
            errno=errno_of(text) if text else None,
            error_text=text,
            **base,
        )
    if "dma-buf" in low or "dmabuf" in low:
        return NcclProblem(category="dmabuf", **base)
    if "remote process exited" in low:
        return NcclProblem(category="remote_error", **base)
    if "unhandled system error" in low:
        return NcclProblem(category="nccl_error", **base)
    if "[proxy" in low or "proxy" in low.split(" ", 1)[0]:
        return NcclProblem(category="proxy", **base)
    if msg.startswith(("NET/OFI", "NET/Plugin")) or "libibverbs" in msg:
        return NcclProblem(category="net_plugin", **base)
    if low.startswith("cuda") or "cuda failure" in low:
        return NcclProblem(category="cuda", **base)
    hint = "NCCL_IB_TIMEOUT" if "NCCL_IB_TIMEOUT" in msg else None
    return NcclProblem(category="other", hint=hint, **base)

"""The TCP ring the built-in collective benchmark (:mod:`aifabric.bench.collective`) runs on.

Wiring (:func:`connect_ring`): every rank listens on one TCP port. Ranks ``1..n-1`` connect to
rank 0 (the address every rank is given) and register ``(rank, address, port, name)``; rank 0
answers with the table of all ranks. Each rank then opens one data connection to the next rank
(``(r + 1) mod n``) and accepts one from the previous; the control connections to rank 0 stay
open for barriers and for summing the ``#wrong`` counts. A data connection only ever carries
bytes one way, so a step that sends to the next rank while it receives from the previous one
overlaps both (the send runs in a helper thread; ``sendall``/``recv_into`` release the GIL).

Every socket operation after the wiring has the same timeout; a peer that dies or stalls ends
the run with :class:`RingError` (or the ``OSError`` of the timeout), never a hang.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["F32", "RankInfo", "Ring", "RingError", "connect_ring"]

_HDR = struct.Struct("!I")
_INT = struct.Struct("!q")
_BARRIER_IN = b"\x01"
_BARRIER_OUT = b"\x02"
_MAX_MSG = 1 << 20

F32 = npt.NDArray[np.float32]
"""The buffers the ring moves: 1-D contiguous ``float32`` arrays (or slices of one)."""


class RingError(Exception):
    """The ring could not be built or broke mid-run (a rank died, a timeout, a refused
    connection); the worker turns it into exit 3 with this message."""


@dataclass(frozen=True)
class RankInfo:
    """Where one rank ran: its name (host or lab server), the address and port it listened
    on, its process id."""

    rank: int
    name: str
    addr: str
    port: int
    pid: int


def _recv_exact(sock: socket.socket, view: memoryview) -> None:
    got, total = 0, len(view)
    while got < total:
        k = sock.recv_into(view[got:], total - got)
        if k == 0:
            raise RingError("a peer closed its connection mid-run (did a rank die?)")
        got += k


def _send_msg(sock: socket.socket, obj: Any) -> None:
    data = json.dumps(obj).encode()
    sock.sendall(_HDR.pack(len(data)) + data)


def _recv_msg(sock: socket.socket) -> Any:
    head = bytearray(_HDR.size)
    _recv_exact(sock, memoryview(head))
    (length,) = _HDR.unpack(head)
    if length > _MAX_MSG:
        raise RingError(f"control message of {length} bytes: not an aifabric rank")
    body = bytearray(length)
    _recv_exact(sock, memoryview(body))
    try:
        return json.loads(body)
    except ValueError:
        raise RingError("garbled control message: not an aifabric rank") from None


def _bytes(arr: F32) -> memoryview:
    """The array's memory as bytes (1-D slices of a contiguous array are contiguous)."""
    return memoryview(arr.data).cast("B")


class Ring:
    """A connected ring of ``size`` ranks: data to the next rank, from the previous one,
    control connections to rank 0 (rank 0 holds one per other rank)."""

    def __init__(
        self,
        rank: int,
        size: int,
        ranks: tuple[RankInfo, ...],
        nxt: socket.socket,
        prev: socket.socket,
        ctrl: list[socket.socket],
    ) -> None:
        self.rank = rank
        self.size = size
        self.ranks = ranks
        self._next = nxt
        self._prev = prev
        self._ctrl = ctrl
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ring-send")

    def exchange(self, send: F32, recv: F32) -> None:
        """Send ``send`` to the next rank while receiving ``recv`` from the previous one."""
        fut = self._pool.submit(self._next.sendall, _bytes(send))
        try:
            _recv_exact(self._prev, _bytes(recv))
        finally:
            fut.result()

    def barrier(self) -> None:
        """Every rank reaches this point before any leaves it (star through rank 0)."""
        if self.rank == 0:
            one = bytearray(1)
            for s in self._ctrl:
                _recv_exact(s, memoryview(one))
            for s in self._ctrl:
                s.sendall(_BARRIER_OUT)
        else:
            self._ctrl[0].sendall(_BARRIER_IN)
            _recv_exact(self._ctrl[0], memoryview(bytearray(1)))

    def sum_to_root(self, value: int) -> int:
        """The sum of every rank's ``value`` at rank 0 (other ranks get their own back)."""
        if self.rank != 0:
            self._ctrl[0].sendall(_INT.pack(value))
            return value
        total = value
        buf = bytearray(_INT.size)
        for s in self._ctrl:
            _recv_exact(s, memoryview(buf))
            total += _INT.unpack(buf)[0]
        return total

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        for s in (self._next, self._prev, *self._ctrl):
            with contextlib.suppress(OSError):
                s.close()


def _connect(addr: str, port: int, source: str | None, deadline: float) -> socket.socket:
    """Connect, retrying while the peer is not listening yet (ranks start in any order)."""
    last: OSError | None = None
    while time.monotonic() < deadline:
        try:
            src = (source, 0) if source else None
            sock = socket.create_connection(
                (addr, port), timeout=max(0.5, deadline - time.monotonic()), source_address=src
            )
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except OSError as exc:
            last = exc
            time.sleep(0.05)
    raise RingError(f"cannot connect to {addr}:{port}: {last}")


def _accept(listener: socket.socket, deadline: float) -> socket.socket:
    listener.settimeout(max(0.1, deadline - time.monotonic()))
    try:
        sock, _ = listener.accept()
    except TimeoutError:
        raise RingError(
            f"no rank connected to {listener.getsockname()} in time (are all ranks started?)"
        ) from None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def connect_ring(
    rank: int,
    size: int,
    master: tuple[str, int],
    *,
    listen: tuple[str, int] | None = None,
    name: str | None = None,
    timeout_s: float = 60.0,
) -> Ring:
    """Build the ring (see the module docstring). Rank 0 listens on ``master``; the others
    on ``listen`` (host, port; port 0 picks a free one; host ``""`` listens everywhere and
    advertises the address its control connection to rank 0 uses). ``timeout_s`` bounds the
    wiring and, afterwards, every single socket operation. Raises :class:`RingError`."""
    if size < 2 or not 0 <= rank < size:
        raise RingError(f"rank {rank} of {size}: need at least 2 ranks and 0 <= rank < size")
    deadline = time.monotonic() + timeout_s
    host, port = master if rank == 0 else (listen or ("", 0))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    opened: list[socket.socket] = []
    try:
        try:
            listener.bind((host, port))
        except OSError as exc:
            raise RingError(f"rank {rank}: cannot listen on {host or '*'}:{port}: {exc}") from None
        listener.listen(size + 1)
        my_port = listener.getsockname()[1]
        source = host or None
        me = {
            "rank": rank,
            "addr": host,
            "port": my_port,
            "name": name or socket.gethostname(),
            "pid": os.getpid(),
        }
        if rank == 0:
            table: dict[int, dict[str, Any]] = {0: me}
            by_rank: dict[int, socket.socket] = {}
            while len(by_rank) < size - 1:
                s = _accept(listener, deadline)
                opened.append(s)
                s.settimeout(timeout_s)
                hello = _recv_msg(s)
                r = hello.get("rank") if isinstance(hello, dict) else None
                if not isinstance(r, int) or not 0 < r < size or r in by_rank:
                    raise RingError(f"rank 0: unexpected registration {hello!r}")
                by_rank[r] = s
                table[r] = hello
            ctrl = [by_rank[r] for r in range(1, size)]
            for s in ctrl:
                _send_msg(s, [table[r] for r in range(size)])
            entries = [table[r] for r in range(size)]
        else:
            c = _connect(master[0], master[1], source, deadline)
            opened.append(c)
            c.settimeout(timeout_s)
            ctrl = [c]
            if not me["addr"]:
                me["addr"] = c.getsockname()[0]
            _send_msg(c, me)
            entries = _recv_msg(c)
            if not isinstance(entries, list) or len(entries) != size:
                raise RingError("rank 0 sent a rank table of the wrong shape")
        ranks = tuple(
            RankInfo(int(e["rank"]), str(e["name"]), str(e["addr"]), int(e["port"]), int(e["pid"]))
            for e in entries
        )
        peer = ranks[(rank + 1) % size]
        nxt = _connect(peer.addr, peer.port, source, deadline)
        opened.append(nxt)
        nxt.settimeout(timeout_s)
        _send_msg(nxt, {"rank": rank, "kind": "data"})
        prev = _accept(listener, deadline)
        opened.append(prev)
        prev.settimeout(timeout_s)
        hello = _recv_msg(prev)
        want = (rank - 1) % size
        if not isinstance(hello, dict) or hello.get("rank") != want:
            raise RingError(f"rank {rank}: expected data from rank {want}, got {hello!r}")
    except BaseException as exc:
        for s in opened:
            s.close()
        if isinstance(exc, OSError):
            raise RingError(f"rank {rank}: wiring the ring failed: {exc}") from None
        raise
    finally:
        listener.close()
    return Ring(rank, size, ranks, nxt, prev, ctrl)

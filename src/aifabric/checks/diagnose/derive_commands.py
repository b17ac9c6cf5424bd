"""Derived records from the commands a paste shows (the user's prompt lines and bare command
lines), for settings that live only on the command line.

- ``gid_index_choice``: the GID index an RDMA test tool was told to use: the rdma-core example
  programs (``ibv_rc_pingpong``, ``ibv_uc_pingpong``, ``ibv_ud_pingpong``, ``ibv_srq_pingpong``,
  ``ibv_xsrq_pingpong``: ``-g, --gid-idx=N``; without it they use no GID, which on RoCE cannot
  connect) and perftest (``ib_{write,read,send,atomic}_{bw,lat}``, ``raw_ethernet_*``: ``-x,
  --gid-index=N``), with the device (``-d``/``--ib-dev``) when named. Sources: rdma-core
  ``libibverbs/examples/rc_pingpong.c`` usage() and ``ibv_rc_pingpong(1)``
  (https://github.com/linux-rdma/rdma-core/blob/master/libibverbs/man/ibv_rc_pingpong.1); perftest
  ``src/perftest_parameters.c`` usage (https://github.com/linux-rdma/perftest).
- ``mtu_choice``: the path MTU the same tools were told to use (``-m, --mtu=SIZE``: 256, 512,
  1024, 2048 or 4096 bytes; the pingpong examples default to 1024, perftest to the port's
  active MTU), with the device when named. Same sources.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from aifabric.checks.diagnose.engine import TEXT_KIND, Evidence, Item, deriver
from aifabric.evidence.base import Record

__all__ = ["GidIndexChoice", "MtuChoice", "gid_choices", "mtu_choice"]


@dataclass(slots=True, kw_only=True)
class GidIndexChoice(Record):
    """A test tool run with an explicit GID index."""

    record_type: ClassVar[str] = "gid_index_choice"

    tool: str
    index: int
    device: str | None = None
    command: str


@dataclass(slots=True, kw_only=True)
class MtuChoice(Record):
    """A test tool run with an explicit path MTU."""

    record_type: ClassVar[str] = "mtu_choice"

    tool: str
    mtu: int
    device: str | None = None
    command: str


_TOOL_RE = re.compile(
    r"(?:^|[\s/;&|(])(?P<tool>ibv_(?:rc|uc|ud|srq|xsrq)_pingpong|ib_(?:write|read|send|atomic)_"
    r"(?:bw|lat)|raw_ethernet_(?:bw|lat|burst_lat|fs_rate))(?=\s|$)(?P<args>[^\n]*)"
)
_PINGPONG_GID_RE = re.compile(r"(?:^|\s)(?:-g\s*|--gid-idx[=\s]+)(\d{1,3})(?=\s|$)")
_PERFTEST_GID_RE = re.compile(r"(?:^|\s)(?:-x\s*|--gid-index[=\s]+)(\d{1,3})(?=\s|$)")
_MTU_RE = re.compile(r"(?:^|\s)(?:-m\s*|--mtu[=\s]+)(256|512|1024|2048|4096)(?=\s|$)")
_DEV_RE = re.compile(r"(?:^|\s)(?:-d\s*|--ib-dev[=\s]+)([\w.\-]+)")


def _tool_option(
    line: str, options: dict[str, re.Pattern[str]]
) -> tuple[str, int, str | None] | None:
    """(tool, the option's value, device) of a test tool's command line, else None; ``options``
    holds the option's pattern for the pingpong examples and for perftest."""
    m = _TOOL_RE.search(line)
    if m is None:
        return None
    tool, args = m.group("tool"), m.group("args")
    got = options["pingpong" if tool.endswith("pingpong") else "perftest"].search(args)
    if got is None:
        return None
    dev = _DEV_RE.search(args)
    return tool, int(got.group(1)), dev.group(1) if dev else None


def gid_choices(line: str) -> tuple[str, int, str | None] | None:
    """(tool, GID index, device) of a command line that sets a GID index, else None."""
    return _tool_option(line, {"pingpong": _PINGPONG_GID_RE, "perftest": _PERFTEST_GID_RE})


def mtu_choice(line: str) -> tuple[str, int, str | None] | None:
    """(tool, path MTU, device) of a command line that sets the path MTU, else None (the same
    ``-m, --mtu`` option in both tool families)."""
    return _tool_option(line, {"pingpong": _MTU_RE, "perftest": _MTU_RE})


@deriver
def _gid_index_choices(ev: Evidence) -> Iterator[Item]:
    """Prompt lines of every file, and every line of parts no parser read (a bare command
    line pasted alone): parsed output is never scanned, so a large capture costs nothing."""
    seen: set[tuple[str, int]] = set()
    for ef in ev.files:
        lines: Iterable[int] = ef.prompts
        if ef.kind == TEXT_KIND and isinstance(ef.lines, list):
            # a huge file read in chunks keeps only the lines its findings quote (SparseLines):
            # its prompts are still read, its text is not walked again
            lines = [*ef.prompts, *(n for n, _ in ef.own_lines())]
        for n in lines:
            if (ef.path, n) in seen or not 1 <= n <= len(ef.lines):
                continue
            seen.add((ef.path, n))
            text = ef.lines[n - 1]
            if "pingpong" not in text and "ib_" not in text and "raw_ethernet" not in text:
                continue
            command = text.strip()[:200]
            got = gid_choices(text)
            if got is not None:
                tool, index, device = got
                rec: Record = GidIndexChoice(
                    line=n, tool=tool, index=index, device=device, command=command
                )
                yield Item(rec, ef, ef.subject, "command")
            mtu = mtu_choice(text)
            if mtu is not None:
                tool, size, device = mtu
                rec = MtuChoice(line=n, tool=tool, mtu=size, device=device, command=command)
                yield Item(rec, ef, ef.subject, "command")

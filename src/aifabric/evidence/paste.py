"""Any paste: one file holding several tools' output, split into segments parsed on their own.

What users attach to a ticket is rarely one clean capture: a terminal session with prompts and
commands (``$ ibstat``, ``root@node1:~# ethtool -S eth2``, ``➜ ~ nvidia-smi topo -m``, a switch's
``leaf01# show ...``), markdown fences around each block, every line prefixed by the launcher
that printed it (Open MPI ``[1,0]<stdout>:``, ``srun --label`` ``3: ``, pdsh ``node07: ``,
torchrun ``[default0]:``, timestamps). :func:`parse_paste` turns such text into *parts*:

1. **Segments** start at a shell prompt with a command (the prompt line is the segment's first
   line: parsers read what it names, such as the interface of ``ethtool -S eth2``), or after a
   markdown fence (fence lines belong to no segment). ``$ cmd`` and ``user@host...$ cmd`` are
   prompts for any command; the ambiguous ``# cmd`` (a root prompt, but also how nccl-tests
   starts its header lines), ``> cmd`` and ``host# cmd`` count only when ``cmd`` starts with a
   known tool.
2. **Prefixes**: where most lines of a segment carry a launcher, host or timestamp prefix, the
   lines are grouped by that prefix (one group per host or rank) and the prefix is removed;
   the group keeps the host as its subject. A group is only used when the stripped text is
   recognised at least as well as the text with its prefixes (the NCCL log parser reads its
   own prefixes).
3. A paste whose segments are all one tool's output (or unrecognised prose and commands around
   it) is parsed whole, as that tool's capture: splitting only matters when tools differ.
4. Each part is detected and parsed on its own; records keep **file** line numbers (mapped
   back through the segment), so findings quote the paste as the user sees it. A part no parser
   recognises is still returned (``kind`` ``None``) so that catalogue signatures and
   error-looking lines in it are seen.

Speed matters (a fleet bundle is thousands of files): one multi-line regular expression finds
candidate boundary lines at C speed; a file without any is parsed whole, as before.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from aifabric.errors import InputError
from aifabric.evidence.base import ParseResult, remap_lines
from aifabric.evidence.registry import (
    DETECT_CERTAIN,
    all_kinds,
    detect_kind,
    detect_scores,
    parse_text,
)

__all__ = [
    "KNOWN_COMMANDS",
    "Part",
    "Segment",
    "describe",
    "parse_paste",
    "prompt_lines",
    "split_segments",
]

KNOWN_COMMANDS = frozenset(
    {
        "ethtool", "ibstat", "ibstatus", "ibv_devinfo", "ibv_devices", "ibdev2netdev",
        "show_gids", "iblinkinfo", "ibnetdiscover", "ibdiagnet", "ibping", "ibportstate",
        "perfquery", "lspci", "dmesg", "journalctl", "ip", "ifconfig", "ping", "ping6",
        "tracepath", "traceroute", "tc", "mlnx_qos", "mlxlink", "mlxconfig", "mlxfwmanager",
        "mstconfig", "mst", "mlxreg", "nvidia-smi", "rdma", "ucx_info", "ucx_perftest", "ulimit",
        "cat", "grep", "egrep", "sudo", "mpirun", "mpiexec", "srun", "sbatch", "torchrun", "python",
        "python3", "deepspeed", "ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_write_lat",
        "ib_read_lat", "ib_send_lat", "all_reduce_perf", "all_gather_perf", "reduce_scatter_perf",
        "alltoall_perf", "broadcast_perf", "sendrecv_perf", "reduce_perf", "show", "sonic-cfggen",
        "redis-cli", "sonic-db-cli", "sysctl", "uname", "modinfo", "lsmod", "modprobe",
        "ofed_info", "ls", "echo", "export", "env", "printenv", "hostname", "docker", "kubectl",
        "numactl", "lscpu", "lstopo", "free", "df", "cma_roce_mode", "cma_roce_tos", "nv", "nvue",
        "vtysh", "ss", "netstat", "iperf3", "iperf", "tail", "head", "less", "more", "pfcstat",
        "portstat", "pfcwd", "ecnconfig", "lldpctl", "systemctl", "ibswitches", "ibhosts",
        "sminfo", "ibqueryerrors", "ibcheckerrors", "rping", "udaddy", "ucmatose", "qperf",
        "nccl-tests", "flint", "mstflint",
    }
)
"""First words that make ``# cmd``, ``> cmd`` and ``host# cmd`` a prompt rather than text."""

BARE_COMMANDS = (
    "ibstat", "ibstatus", "ibv_devinfo", "ibv_devices", "ibdev2netdev", "show_gids",
    "iblinkinfo", "perfquery", "ibqueryerrors", "lspci", "ethtool", "rdma", "mlnx_qos",
    "mlxlink", "mlxconfig", "mstconfig", "nvidia-smi", "ucx_info", "ucx_perftest", "ulimit",
    "ofed_info", "lsmod", "dmesg", "ifconfig", "show", "ib_write_bw", "ib_read_bw",
    "ib_send_bw", "ib_write_lat", "ib_read_lat", "ib_send_lat", "all_reduce_perf",
    "all_gather_perf", "alltoall_perf", "reduce_scatter_perf", "sendrecv_perf",
)
"""Tools whose command line, typed bare (no prompt) above its output, starts a new tool's
output: a collection script's transcript (``rdma link show`` / output / ``ibstat`` / output).
Words that open lines of other tools' output or configs (``ip``, ``tc``, ``sysctl``, ``cat``)
are left out."""
QUERY_COMMANDS: dict[str, re.Pattern[str]] = {
    "sysctl": re.compile(r"^[\w.\-/]++ = "),
    "tc": re.compile(r"^(?:qdisc|class|filter) \S"),
    "ip": re.compile(
        r"^(?:\d++: [\w@.\-]++: <|default (?:via|dev) "
        r"|\d{1,3}(?:\.\d{1,3}){3}(?:/\d+)? (?:via|dev) )"
    ),
}
"""Commands whose words also open lines of scripts and configs (``sysctl -w`` in a provisioning
script, ``ip route`` in a switch configuration): typed bare, they start a new tool's output only
when the next non-blank line has the shape of their output (``NAME = VALUE``; ``qdisc ...``; an
``ip`` interface or route line)."""
_QUERY_RE = re.compile(
    r"^[ \t]*+(?:sudo[ \t]+)?(?P<word>sysctl|tc|ip)(?P<args>(?:[ \t]++[^\s]++)++)[ \t]*$"
)

_BARE_RE = re.compile(
    r"^[ \t]*+(?:sudo[ \t]+)?(?P<cmd>(?:" + "|".join(re.escape(c) for c in BARE_COMMANDS)
    + r")(?:[ \t]++[^\s]++)*+)[ \t]*$",
    re.MULTILINE,
)


# Candidate boundary lines, found at C speed over the whole text (no nested quantifiers).
_CANDIDATE = re.compile(
    r"^[ \t]*+(?:```|~~~|~[/ \t#$%>]|\$[ \t]|\$[a-z]|➜|\([\w.\-]+\)[ \t]"
    r"|\[?[\w.\-]++@[\w.\-]+|[#>%][ \t]"
    r"|[\w.\-]++(?:\([\w\-]+\))?[#>][ \t]?[a-z]"
    r"|(?:sudo[ \t]+)?(?:" + "|".join(re.escape(c) for c in (*BARE_COMMANDS, *QUERY_COMMANDS))
    + r")(?=[ \t]|$))",
    re.MULTILINE,
)
"""A line that may be a prompt or a fence (checked by :func:`_prompt`). The blanks and word runs
are possessive: no branch starts with a blank, and a word run is followed by a character
outside it, so giving characters back could never match and only cost time on every line of
an indented counter dump."""
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)[\w+\-]*[ \t]*$")
_VENV = r"(?:\([\w.\-]+\)[ \t]*)?"
_PROMPTS = (
    # user@host:~$ cmd   [user@host dir]# cmd   (venv) user@host:/x$ cmd   root@h:~#
    re.compile(
        r"^[ \t]*" + _VENV + r"\[?[\w.\-]+@[\w.\-]+(?::[^\s$#\]]*)?(?:[ \t][^\]\s]*)?\]?"
        r"[ \t]?[$#%>][ \t]*(?P<cmd>\S.*)?$"
    ),
    re.compile(r"^[ \t]*" + _VENV + r"\$[ \t]+(?P<cmd>\S.*)$"),
    re.compile(r"^[ \t]*➜[ \t]+\S+[ \t]+(?:git:\([^)\s]*\)[ \t]+)?(?:✗[ \t]+)?(?P<cmd>\S.*)$"),
)
_KNOWN_ONLY = (
    re.compile(r"^[ \t]*[#>%][ \t]+(?P<cmd>\S.*)$"),
    re.compile(r"^[ \t]*\$(?P<cmd>[a-z][\w.\-]*+(?:[ \t].*)?)$"),  # "$tc class show": no blank
    re.compile(r"^[\w.\-]+(?:\([\w\-]+\))?[#>][ \t]?(?P<cmd>[a-z]\S*(?:[ \t].*)?)$"),
    # a prompt that shows only the working directory: "~# ip a", "~/nccl-tests/build$ ./all_..."
    re.compile(r"^[ \t]*+~(?:/[^\s$#%>]*+)?[ \t]?[#$%>][ \t]?(?P<cmd>[a-z./]\S*(?:[ \t].*)?)$"),
)


def _command_word(cmd: str) -> str:
    words = cmd.split()
    while words and (words[0] in ("sudo", "time", "env") or "=" in words[0]):
        words = words[1:]
    if not words:
        return ""
    return words[0].rsplit("/", 1)[-1]


def _prompt(line: str) -> str | None:
    """The command of a prompt line (``""`` for a bare prompt), ``None`` if not a prompt."""
    for rx in _PROMPTS:
        m = rx.match(line)
        if m is not None:
            return (m.group("cmd") or "").strip()
    for rx in _KNOWN_ONLY:
        m = rx.match(line)
        if m is not None and _command_word(m.group("cmd")) in KNOWN_COMMANDS:
            return m.group("cmd").strip()
    return None


def _command_before(seg: Segment) -> tuple[str, int] | None:
    """The last non-blank line of ``seg`` when it names a known command (text before a fence),
    removed from ``seg``."""
    for j in range(len(seg.lines) - 1, -1, -1):
        text = seg.lines[j].strip()
        if not text:
            continue
        words = text.strip("`$#> ").split()
        if words and len(words) <= 16 and any(
            w.strip("`:;,") in KNOWN_COMMANDS for w in words[:3]
        ):
            num = seg.numbers[j]
            del seg.lines[j:]
            del seg.numbers[j:]
            return text.strip("`"), num
        return None
    return None


@dataclass(slots=True)
class Segment:
    """Consecutive lines of one tool's output (or one prefix group of them)."""

    lines: list[str]
    numbers: list[int]
    """1-based file line of each line."""
    command: str | None = None
    subject: str | None = None
    """host (or rank) named by the prefix that was removed."""


def split_segments(text: str) -> list[Segment]:
    """Split at prompt and fence lines; one segment (the whole text) when there are none."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    boundaries = _boundaries(text)
    if not boundaries:
        return [Segment(lines, list(range(1, len(lines) + 1)))]
    return _cut(lines, boundaries)


_LAST_BOUNDARIES: list[tuple[str, dict[int, str | None]]] = []
"""The last text :func:`_boundaries` read and its answer: diagnose asks twice for every file (to
split it, then for its prompt lines), with the same string object."""


def _boundaries(text: str) -> dict[int, str | None]:
    """0-based line -> command of a prompt line (``None`` for a fence line). Callers must not
    change the dict (it is kept for the next call with the same text)."""
    if _LAST_BOUNDARIES and _LAST_BOUNDARIES[0][0] is text:
        return _LAST_BOUNDARIES[0][1]
    found = _find_boundaries(text)
    _LAST_BOUNDARIES[:] = [(text, found)]
    return found


_UNQUOTED_LINE = re.compile(r"^(?![ \t]*>|[ \t]*$)", re.MULTILINE)
"""A non-blank line that does not start with ``>``."""


def _find_boundaries(text: str) -> dict[int, str | None]:
    boundaries: dict[int, str | None] = {}
    idx, pos = 0, 0
    # every line quoted with ">" (a mail reply): "> export X=1" is a quoted line, not a ">"
    # prompt; the quote is stripped later as a prefix group
    quoted = text.lstrip()[:1] == ">" and _UNQUOTED_LINE.search(text) is None
    for m in _CANDIDATE.finditer(text):
        idx += text.count("\n", pos, m.start())
        pos = m.start()
        end = text.find("\n", m.start())
        line = text[m.start() : end if end >= 0 else len(text)]
        if _FENCE.match(line):
            boundaries[idx] = None
            continue
        if quoted and line.lstrip()[:1] == ">":
            continue
        cmd = _prompt(line)
        if cmd is not None:
            boundaries[idx] = cmd
            continue
        bare = _BARE_RE.match(line)
        if bare is not None and _output_follows(text, end):
            boundaries[idx] = bare.group("cmd").strip()
            continue
        query = _QUERY_RE.match(line)
        if query is not None:
            nxt = _next_line(text, end)
            if nxt is not None and QUERY_COMMANDS[query.group("word")].match(nxt):
                boundaries[idx] = line.strip()
    return boundaries


def _next_line(text: str, end: int) -> str | None:
    """The next non-blank line after offset ``end`` (a line's end), stripped; None at the end
    of the text or after 40 blank lines."""
    pos = end
    for _ in range(40):
        if pos < 0 or pos >= len(text):
            return None
        nxt_end = text.find("\n", pos + 1)
        nxt = text[pos + 1 : nxt_end if nxt_end >= 0 else len(text)].strip()
        if nxt:
            return nxt
        pos = nxt_end
    return None


def _output_follows(text: str, end: int) -> bool:
    """Whether the next non-blank line after offset ``end`` (a line's end) is output: neither
    another bare command of :data:`BARE_COMMANDS`, a prompt nor a ``#`` comment. A script's
    lines are commands one after another and stay one block; a command line typed bare above
    its output (a collection script's transcript) starts a new tool's output."""
    nxt = _next_line(text, end)
    return nxt is not None and not (
        nxt.startswith("#") or _BARE_RE.match(nxt) or _prompt(nxt) is not None
    )


def prompt_lines(text: str) -> frozenset[int]:
    """1-based lines of ``text`` that are shell prompts with a command (the user's input)."""
    return frozenset(i + 1 for i, cmd in _boundaries(text).items() if cmd is not None)


def _cut(lines: list[str], boundaries: dict[int, str | None]) -> list[Segment]:
    out: list[Segment] = []
    cur = Segment([], [])
    in_fence = False
    for i, line in enumerate(lines):
        if i in boundaries:
            carry = None
            if boundaries[i] is None:
                in_fence = not in_fence
                if in_fence:
                    carry = _command_before(cur)
            if cur.lines:
                out.append(cur)
            cur = Segment([], [], command=boundaries[i])
            if carry is not None:
                # "`ethtool -S eth2 | grep prio`" then a fence: the line names the command
                cur.command = carry[0]
                cur.lines.append(carry[0])
                cur.numbers.append(carry[1])
            if boundaries[i] is None:
                continue  # a fence line belongs to no segment
            # the prompt line stays: parsers read what the command names (an interface)
        cur.lines.append(line)
        cur.numbers.append(i + 1)
    if cur.lines:
        out.append(cur)
    return [s for s in out if any(x.strip() for x in s.lines)]


# -- known headers ------------------------------------------------------------------------------

_HEADERS: tuple[tuple[str, str, str], ...] = (
    # (kind, literal every header line holds, the header line's start)
    ("ibv-devinfo", "hca_id:", r"hca_id:[ \t]+\S"),
    ("ibstat", "CA '", r"CA '[^'\n]+'[ \t]*$"),
    ("ibstatus", "Infiniband device '", r"Infiniband device '[^'\n]+' port \d+ status:"),
    ("nccl-tests", "# nThread ", r"# nThread \d+ nGpus \d+ "),
    ("ethtool-stats", "NIC statistics:", r"NIC statistics:[ \t]*$"),
    ("ethtool-info", "Settings for ", r"Settings for [^\s:]+:[ \t]*$"),
    ("ping", "PING ", r"PING [^\s(]+ \("),
    ("show-gids", "DEV", r"DEV[ \t]+PORT[ \t]+INDEX[ \t]+GID\b"),
    ("iperf3", "Connecting to host ", r"Connecting to host [^\s,]+, port \d+"),
    ("iperf3", "Server listening on ", r"Server listening on \d+"),
    ("rdma-link", "link ", r"link [\w.\-]+/\d+ state [A-Z_]+\b"),
    ("ip", ": <", r"\d+: [\w.\-@]+: <[A-Z_,\-]*>"),
    ("nvidia-smi", "NVIDIA-SMI ", r"\+-{20,}\+[ \t]*\n[ \t]*\|[ \t]*NVIDIA-SMI \d"),
    ("nvidia-smi", "NVSMI LOG", r"=+NVSMI LOG=+"),
    ("collect-env", "PyTorch version", r"PyTorch version[ \t]*:[ \t]*\d"),
)
"""The first line of a tool's output that no other tool prints: where one tool's output ends
and the next begins when a paste holds several without prompts between them (``ibstat``
followed by ``ibv_devinfo``, an ``ethtool`` before its ``ethtool -S``, a ``ping`` before an
``iperf3`` run, a test script printing ``rdma link`` then ``ip -s link``). iperf3's client and
server banners (``iperf_client_api.c``, ``iperf_server_api.c``), an ``rdma link`` port line and
the ``N: name: <FLAGS>`` line of ``ip link``/``ip addr`` (one pseudo-kind: which of the two is
decided when the part is parsed) start a tool's output; lines of the same kind in a row cut
nothing."""
_STANDALONE_HEADERS = frozenset({"nvidia-smi", "collect-env"})
"""Kinds whose header no other output prints and nothing of their own precedes (nvidia-smi's
boxed ``NVIDIA-SMI`` line, the report's ``PyTorch version:``): the lines above it belong to
something else (an NCCL log, a traceback) even when no other known header is in the file."""
_STAMP_RE = re.compile(r"^[ \t]*+(?:[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}|"
                       r"Collecting environment information\.{3})[ \t]*+$")  # fmt: skip
_HEADER_RE = re.compile(
    "|".join(f"(?P<h{i}>^[ \t]*{start})" for i, (_, _, start) in enumerate(_HEADERS)),
    re.MULTILINE,
)


def _header_cuts(text: str) -> list[int]:
    """0-based lines of ``text`` where another tool's output starts: a known header whose kind
    differs from the previous header's (the first header starts nothing: what is above it is its
    prompt or prose). Empty unless headers of at least two kinds are present; the literal test
    first keeps this to a few substring searches for the usual one-tool file."""
    present = {kind for kind, literal, _ in _HEADERS if literal in text}
    if len(present) < 2 and not present & _STANDALONE_HEADERS:
        return []
    found: list[tuple[int, str]] = []
    idx, pos = 0, 0
    for m in _HEADER_RE.finditer(text):
        idx += text.count("\n", pos, m.start())
        pos = m.start()
        found.append((idx, _HEADERS[int(str(m.lastgroup)[1:])][0]))
    if not found:
        return []
    cuts = [i for (i, k), (_, prev) in zip(found[1:], found, strict=False) if k != prev]
    if found[0][0] > 0 and found[0][1] in _STANDALONE_HEADERS:
        above = text.split("\n", found[0][0])[: found[0][0]]
        if any(line.strip() and not _STAMP_RE.match(line) for line in above):
            cuts.insert(0, found[0][0])  # another tool's output (or prose) above the table
    return cuts if len({k for _, k in found}) >= 2 or cuts[:1] == [found[0][0]] else []


def _split_headers(seg: Segment) -> list[Segment]:
    """``seg`` cut where another tool's known header starts (:func:`_header_cuts`)."""
    cuts = _header_cuts("\n".join(seg.lines))
    if not cuts:
        return [seg]
    out: list[Segment] = []
    for a, b in zip([0, *cuts], [*cuts, len(seg.lines)], strict=True):
        if a < b:
            out.append(Segment(seg.lines[a:b], seg.numbers[a:b],
                               seg.command if a == 0 else None, seg.subject))  # fmt: skip
    return out


# -- prefixes -----------------------------------------------------------------------------------

_PREFIX = re.compile(
    r"^(?:"
    r"\[(?P<job>\d+),(?P<rank>\d+)\]<(?:stdout|stderr)>:"  # Open MPI --tag-output
    r"|\[default(?P<trank>\d+)\]:"  # torchrun --tee / log prefix
    r"|\[rank(?P<prank>\d+)\]:"  # PyTorch rank prefix
    r"|[ \t]{0,4}(?P<srank>\d{1,5}): "  # srun --label
    # pdsh / clush / deepspeed runner; vagrant indents each machine's lines ("    node2: ")
    r"|(?: {4})?(?P<host>[A-Za-z][\w.\-]{0,62}): "
    r"|(?P<svc>[A-Za-z][\w.\-]{0,62})[ \t]+\|[ \t]?"  # docker compose: "web-1    | "
    r"|(?P<quote>(?:>[ \t]?)++|\+(?![+\d])|\#[ \t](?![ \t]*(?:nThread|Rank|Using|size|Out|Avg)\b))"
    # a mail or markdown quote, any depth ("> > > ", ">>> "); a diff's added line; output kept
    # in a script as comments
    # ("#<TAB>Identifier : 0x03"), but not nccl-tests' own "# nThread"/"# Rank"/"# size" lines
    r")"
)
_TIMESTAMP = re.compile(
    r"^(?:\[?(?:\d{4}-\d\d-\d\d[T ])?\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+\-]\d\d:?\d\d)?\]?[ \t]+"
    r"(?:(?:DEBUG|INFO|WARN(?:ING)?|ERROR|CRITICAL)[ \t]*[|:][ \t]?)?)"
)
"""A log timestamp (date optional) and an optional level with its separator, as test harnesses
and logging formats print before each line (``2024-05-01 10:00:00 ``, ``13:06:19 DEBUG| ``)."""


def _prefix_of(line: str) -> tuple[str, str, int] | None:
    """(group key, subject, characters to strip) of a prefixed line."""
    ts = _TIMESTAMP.match(line)
    skip = ts.end() if ts else 0
    m = _PREFIX.match(line, skip)
    if m is None:
        return ("", "", skip) if skip else None
    if m.group("quote") is not None:
        return "", "", m.end()
    host = m.group("host") or m.group("svc")
    if host is not None:
        return host, host, m.end()
    rank = m.group("rank") or m.group("trank") or m.group("prank") or m.group("srank")
    return f"rank {int(rank)}", f"rank {int(rank)}", m.end()


def _prefix_groups(seg: Segment) -> list[Segment] | None:
    """The segment split by a prefix most of its lines carry, or ``None``."""
    nonblank = [i for i, x in enumerate(seg.lines) if x.strip()]
    if len(nonblank) < 2:
        return None
    probe = nonblank[:40]
    hits = [_prefix_of(seg.lines[i]) for i in probe]
    if sum(h is not None for h in hits) < 0.8 * len(probe):
        return None
    keys = Counter(h[0] for h in hits if h is not None)
    if keys and keys.most_common(1)[0][1] < 2:
        return None
    groups: dict[str, Segment] = {}
    order: list[str] = []
    unprefixed = Segment([], [], seg.command)
    for line, num in zip(seg.lines, seg.numbers, strict=True):
        p = _prefix_of(line)
        if p is None:
            if line.strip():
                unprefixed.lines.append(line)
                unprefixed.numbers.append(num)
            continue
        key, subject, cut = p
        grp = groups.get(key)
        if grp is None:
            grp = groups[key] = Segment([], [], seg.command, subject or None)
            order.append(key)
        grp.lines.append(line[cut:])
        grp.numbers.append(num)
    # host-like prefixes ("name: value") are only prefixes when few names repeat many times
    host_keys = [k for k in order if k and not k.startswith("rank ")]
    if host_keys and len(host_keys) > max(4, len(nonblank) // 8):
        return None
    out = [groups[k] for k in order]
    if unprefixed.lines:
        out.append(unprefixed)
    return out


# -- parsing ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Part:
    """One parsed (or unrecognised) piece of a file."""

    kind: str | None
    result: ParseResult | None
    numbers: list[int]
    """file line of each line of the part."""
    lines: list[str]
    command: str | None = None
    subject: str | None = None
    notes: list[str] = field(default_factory=list)
    companion: bool = False
    """A second reading of lines another part holds (the NCCL log lines inside an nccl-tests
    run): its records count, its lines are not scanned again for catalogue messages."""


def _best(text: str) -> tuple[float, str | None]:
    scores = detect_scores(text)
    return (scores[0][0], scores[0][1]) if scores else (0.0, None)


_SIBLINGS = frozenset({"ip-link", "ip-addr"})
"""Kinds one tool prints alike (``ip addr`` prints ``ip link``'s lines and more): the command
before the output tells them apart better than the detector when the paste lost indentation."""


def _detect(seg: Segment) -> str | None:
    try:
        kind = detect_kind("\n".join(seg.lines) + "\n")
    except InputError:
        return _commanded(seg)
    if kind in _SIBLINGS:
        said = _commanded(seg)
        if said in _SIBLINGS and said != kind:
            return said
    return kind


COMMAND_KINDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rx), kind)
    for rx, kind in (
        (r"^ethtool\s+(?:-i|--driver)\b", "ethtool-info"),
        (r"^ethtool\s+(?:-S|--statistics)\b", "ethtool-stats"),
        (r"^ethtool\s+(?:-m|--dump-module-eeprom|--module-info)\b", "ethtool-module"),
        (r"^ethtool\s+(?:-a|--show-pause)\b", "ethtool-pause"),
        (r"^ethtool\s+[\w.\-@]+\s*$", "ethtool-info"),
        (r"^ibstat\b", "ibstat"),
        (r"^ibstatus\b", "ibstatus"),
        (r"^ibv_devinfo\b", "ibv-devinfo"),
        (r"^ibv_devices\b", "ibv-devices"),
        (r"^ibdev2netdev\b", "ibdev2netdev"),
        (r"^ibqueryerrors\b", "ibqueryerrors"),
        (r"^perfquery\b", "perfquery"),
        (r"^iblinkinfo\b", "iblinkinfo"),
        (r"^show_gids\b", "show-gids"),
        (r"^mlnx_qos\b", "mlnx-qos"),
        (r"^sysctl\b", "sysctl"),
        (r"^ulimit\b", "ulimit"),
        (r"^ping6?\b", "ping"),
        (r"^iperf3\b", "iperf3"),
        (r"^rdma\s+(?:-\w+\s+)*link\b", "rdma-link"),
        (r"^ucx_info\b", "ucx-info"),
        (r"^lsmod\b", "proc-modules"),
        (r"^iptables(?:-save|-legacy|-nft)?\b", "iptables"),
        (r"^ip\s+(?:-\S+\s+)*l(?:ink|i|in)?(?!\s+(?:set|add|del|delete|change|property)\b)"
         r"(?:\s|$)", "ip-link"),
        (r"^ip\s+(?:-\S+\s+)*a(?:ddr(?:ess)?|d|dd)?(?!\s+(?:add|del|change|replace|flush)\b)"
         r"(?:\s|$)", "ip-addr"),
        (r"^ifconfig\b", "ip-addr"),
        (r"^ip\s+(?:-\S+\s+)*r(?:o|ou|out|oute)?(?!\s+(?:add|del|delete|change|replace|flush|get"
         r"|append|prepend|save|restore|monitor)\b)(?:\s|$)", "ip-route"),
        (r"^(?:vtysh\s+-c\s+['\"]?)?(?:do\s+)?sh(?:o|ow)?\s+ipv?6?\s+ro(?:u|ut|ute)?\b",
         "ip-route"),
        (r"^lspci\b", "lspci"),
        (r"^(?:mlxconfig|mstconfig)\b", "mlxconfig"),
        (r"^(?:mlxlink|mstlink)\b", "mlxlink"),
        (r"^tc\s+(?:-\S+\s+)*(?:qdisc|class)\b", "tc"),
        (r"^nvidia-smi\s+topo\b", "nvidia-smi-topo"),
        (r"^nvidia-smi(?:\s+-(?:q|-query\b|i\s|L\b)|\s*$)", "nvidia-smi"),
        (r"^(?:python3?\s+(?:-m\s+torch\.utils\.collect_env|\S*collect_env\.py)|vllm\s+"
         r"collect-env)\b", "collect-env"),
        (r"^rdma\s+(?:-\w+\s+)*stat(?:istic)?\b", "rdma-hw-counters"),
        (r"^rdma\s+(?:-\w+\s+)*dev\b", "rdma-link"),
        (r"^cat\s+/proc/net/bonding/", "proc-bonding"),
        (r"^cat\s+/proc/modules\b", "proc-modules"),
        (r"^ldconfig\s+(?:-\S+\s+)*-p\b", "ldconfig"),
        (r"^ucx_perftest\b", "ucx-perftest"),
        (r"^ib_(?:write|read|send|atomic)_(?:bw|lat)\b", "perftest"),
        (r"^cma_roce_tos\b", "cma-roce-tos"),
        (r"^df\b", "df-shm"),
    )
)
"""The kind a command's output is, for a part that follows a prompt naming the command but is
too short or too cut down for any detector (``# ethtool -i ens1f0`` then two of its lines,
``$ sudo ethtool IF | grep Speed`` then one): the user said which tool printed it (the command
before a pipe counts). Used only when detection finds nothing; the part counts as read only if
the parser then finds a record."""


_RUNNER = re.compile(
    r"^(?:(?:sudo|time|nohup)[ \t]++|ip[ \t]++netns[ \t]++exec[ \t]++[\w.\-]++[ \t]++"
    r"|(?:docker|podman)[ \t]++exec[ \t]++(?:-\w++[ \t]++)*+[\w.\-]++[ \t]++"
    r"|kubectl[ \t]++exec[ \t]++[^|]*?[ \t]--[ \t]++)++"
)
"""What runs a command in another place or way (``sudo``, ``ip netns exec NS``, ``docker exec
-it CTR``, ``kubectl exec POD -- ``): the tool is the command after it."""


def _commanded(seg: Segment) -> str | None:
    """The kind :data:`COMMAND_KINDS` gives the command the part follows, if any."""
    if not seg.command:
        return None
    cmd = _RUNNER.sub("", seg.command.split("|", 1)[0].strip())  # before a grep
    for rx, kind in COMMAND_KINDS:
        if rx.match(cmd):
            return kind
    return None


def _certain(seg: Segment) -> str | None:
    """The kind of a one-line segment when a detector is certain of it, else None."""
    if not any(x.strip() for x in seg.lines):
        return None
    score, kind = _best("\n".join(seg.lines) + "\n")
    return kind if score >= DETECT_CERTAIN else None


def _parse_segment(seg: Segment, kind: str | None) -> Part:
    """Parse ``seg`` as ``kind`` (``None``: an unrecognised part, kept as text)."""
    if kind is None:
        return Part(None, None, seg.numbers, seg.lines, seg.command, seg.subject)
    try:
        result = _parse_lines(seg.lines, kind)
    except (InputError, RecursionError, ValueError) as exc:
        part = Part(None, None, seg.numbers, seg.lines, seg.command, seg.subject)
        part.notes.append(f"not parsed as {kind}: {exc}")
        return part
    identity = not seg.numbers or (
        seg.numbers[0] == 1 and seg.numbers[-1] == len(seg.numbers)
    )
    if not identity:
        remap_lines(result, seg.numbers)
    return Part(kind, result, seg.numbers, seg.lines, seg.command, seg.subject)


_QUOTE_MARK = re.compile(r"^[ \t]{0,8}(?:[#>](?:[ \t]|$)|>(?=\S))")
"""A comment or quote mark some lines of a part carry (``# `` of output kept in a script or a
TAP test log, ``> `` of a reply), after optional indentation."""


def _reparse_unquoted(lines: list[str], kind: str) -> ParseResult | None:
    """``lines`` parsed as ``kind`` with the quote mark taken off the lines that carry it, when
    at least three do (or the two lines under a prompt both do) and the first reading found
    nothing: a tool's output kept as comments
    among other lines (a TAP log's ``# PING ...``), which the prefix split (most lines
    prefixed) does not take. ``None`` when that reading finds nothing either."""
    marked = [_QUOTE_MARK.match(ln) for ln in lines]
    count = sum(m is not None for m in marked)
    body = sum(1 for ln in lines[1:] if ln.strip())  # the first line may be the prompt
    if count < 3 and not (count == 2 and body == 2):
        return None
    text = "\n".join(ln[m.end() :] if m else ln for ln, m in zip(lines, marked, strict=True))
    try:
        result = parse_text(text + "\n", kind)
    except (InputError, RecursionError, ValueError):
        return None
    return result if result.records else None


def _whole(text: str, kind: str | None) -> Part:
    """The whole text as one part (file lines are the parser's lines: nothing to map)."""
    lines = text.split("\n")
    numbers = list(range(1, len(lines) + 1))
    if kind is None:
        return Part(None, None, numbers, lines)
    try:
        result = _parse_lines(lines, kind, text)
    except (InputError, RecursionError, ValueError) as exc:
        part = Part(None, None, numbers, lines)
        part.notes.append(f"not parsed as {kind}: {exc}")
        return part
    return Part(kind, result, numbers, lines)


def _parse_lines(lines: list[str], kind: str, text: str | None = None) -> ParseResult:
    """``lines`` (joined: ``text`` when given) parsed as ``kind``, read again without quote
    marks (:func:`_reparse_unquoted`) when the first reading finds nothing."""
    result = parse_text(text if text is not None else "\n".join(lines) + "\n", kind)
    if not result.records:
        result = _reparse_unquoted(lines, kind) or result
    return result


_PREFIX_DEPTH = 3
"""Prefixes stripped one inside the other at most: ``pdsh`` over a mail quote (``node07: > ``),
a quoted rank-tagged log (``> [1,0]<stdout>:``)."""


def _split_prefixed(seg: Segment, depth: int = 1) -> list[Segment]:
    groups = _prefix_groups(seg)
    if groups is None:
        return [seg]
    whole, _ = _best("\n".join(seg.lines))
    stripped = max((_best("\n".join(g.lines))[0] for g in groups), default=0.0)
    if stripped < whole:
        return [seg]
    out = []
    for sub in (sub for g in groups for sub in _resplit(g)):
        inner = _split_prefixed(sub, depth + 1) if depth < _PREFIX_DEPTH else [sub]
        for s in inner:
            s.subject = sub.subject or s.subject  # the outer prefix (a host) names the subject
        out.extend(inner)
    return out


def _resplit(group: Segment) -> list[Segment]:
    """A prefix group cut again at the prompts and fences its stripped lines hold: a quoted
    terminal session (``> # ip link`` / output / ``> # ip addr`` / output, a mail reply that
    quotes a whole session) has its prompts behind the quote mark, where the first split does
    not take them (a quoted ``> cmd`` is a quote, not a prompt). File line numbers are kept."""
    text = "\n".join(group.lines)
    found = _find_boundaries(text)
    if not found:
        return [group]
    out = []
    for seg in _cut(list(group.lines), found):
        seg.numbers = [group.numbers[n - 1] for n in seg.numbers]
        seg.subject = group.subject
        if seg.command is None:
            seg.command = group.command if seg.numbers[0] == group.numbers[0] else None
        out.append(seg)
    return out or [group]


def parse_paste(text: str, kind: str | None = None, companions: bool = True) -> list[Part]:
    """Parse decoded ``text`` into parts (one part for a plain capture of one tool).

    With ``kind`` given, the whole text is parsed as that kind (no splitting). Otherwise
    segments, prefix groups and detection as in the module docstring, and (``companions``)
    the NCCL log lines of an nccl-tests run as a second, ``companion`` part. Never raises for
    text that no parser knows: such parts have ``kind`` ``None``.
    """
    parts = _parse_paste(text, kind)
    return _with_companions(parts) if companions and kind is None else parts


def _parse_paste(text: str, kind: str | None) -> list[Part]:
    if kind is not None:
        if kind not in all_kinds():
            raise InputError(f"unknown kind {kind!r}; known: {', '.join(sorted(all_kinds()))}")
        return [_whole(text, kind)]
    if not _boundaries(text):
        # one block of text (the common case, e.g. every file of a probe bundle): only a prefix
        # on its lines or a second tool's known header can split it, and the first lines tell
        head = text.split("\n", 80)[:80]
        if (_prefix_groups(Segment(head, list(range(1, len(head) + 1)))) is None
                and not _header_cuts(text)):  # fmt: skip
            try:
                whole_kind: str | None = detect_kind(text)
            except InputError:
                whole_kind = None
            return [_whole(text, whole_kind)]
    segments = split_segments(text)
    subs = [h for seg in segments for sub in _split_prefixed(seg) for h in _split_headers(sub)]
    if len(subs) == 1 and subs[0].subject is None:
        if subs[0] is not segments[0]:
            # one group whose prefix (a quote, a timestamp) was stripped: parse what is left
            return [_parse_segment(subs[0], _detect(subs[0]))]
        return [_whole(text, _detect(subs[0]))]
    # a prompt line alone (or prompt and one line) is rarely output: one line is read only when
    # a detector is certain of it (ulimit -l's number, ping's PING header)
    detected = [
        _detect(sub) if sum(1 for x in sub.lines if x.strip()) >= 2 else _certain(sub)
        for sub in subs
    ]
    kinds = {k for k in detected if k is not None}
    original = text.split("\n")
    stripped = any(
        sub.numbers and sub.lines and sub.lines[0] != original[sub.numbers[0] - 1]
        for sub in subs
    )  # a prefix (a quote, a comment mark) was removed: read the stripped lines, not the text
    if len(kinds) <= 1 and not any(sub.subject for sub in subs) and not stripped:
        # one tool's output with commands around it: read it whole, as a capture of that tool
        if kinds:
            return [_whole(text, next(iter(kinds)))]
        try:
            whole_kind = detect_kind(text)
        except InputError:
            whole_kind = None
        if whole_kind is not None:
            return [_whole(text, whole_kind)]
    parts = [_parse_segment(sub, k) for sub, k in zip(subs, detected, strict=True)]
    return _merge_unknown(parts)


_NCCL_LOG_LINE = re.compile(r" NCCL (?:INFO|WARN) |^NCCL version \d")
COMPANION_MIN_LINES = 3
"""NCCL log lines an nccl-tests part needs before they are read as a log of their own."""


def _with_companions(parts: list[Part]) -> list[Part]:
    """Add, after each nccl-tests part run with ``NCCL_DEBUG=INFO``, its NCCL log lines parsed as
    an ``nccl-log`` part: the results table is the benchmark's, the interleaved log lines say
    which transports, interfaces and devices the run used (and the nccl-tests parser skips
    them). Line numbers stay the file's."""
    if not any(p.kind == "nccl-tests" for p in parts):
        return parts
    out: list[Part] = []
    for part in parts:
        out.append(part)
        if part.kind != "nccl-tests":
            continue
        picked = [(n, x) for n, x in zip(part.numbers, part.lines, strict=False)
                  if _NCCL_LOG_LINE.search(x)]  # fmt: skip
        if len(picked) < COMPANION_MIN_LINES:
            continue
        seg = Segment([x for _, x in picked], [n for n, _ in picked], part.command, part.subject)
        log = _parse_segment(seg, "nccl-log")
        if log.kind == "nccl-log" and log.result is not None and log.result.records:
            log.companion = True
            log.notes.append("the NCCL log lines of the nccl-tests run above, read as a log")
            out.append(log)
    return out


def _merge_unknown(parts: list[Part]) -> list[Part]:
    """Merge a part without a command of its own into the previous part of the same kind when
    only a few lines of prose separate them ("After:" between two fenced ``ethtool -S`` dumps):
    the parser then reads them as one capture, as it would the whole file, so the second dump
    inherits the interface the first one's command named. Empty parts are dropped."""
    out: list[Part] = []
    for part in parts:
        if not any(x.strip() for x in part.lines):
            continue
        if part.kind is not None and part.command is None and part.subject is None:
            j = len(out) - 1
            between: list[Part] = []
            while j >= 0 and out[j].kind is None and _prose(out[j]):
                between.append(out[j])
                j -= 1
            prev = out[j] if j >= 0 else None
            if prev is not None and prev.kind == part.kind and prev.subject is None:
                lines = list(prev.lines)
                numbers = list(prev.numbers)
                for b in reversed(between):
                    lines += b.lines
                    numbers += b.numbers
                merged = _parse_segment(
                    Segment(lines + part.lines, numbers + part.numbers, prev.command), part.kind
                )
                del out[j:]
                out.append(merged)
                continue
        out.append(part)
    return out


def _prose(part: Part) -> bool:
    return sum(1 for x in part.lines if x.strip()) <= 3


def describe(parts: list[Part]) -> list[dict[str, Any]]:
    """JSON summary of the parts (``aifabric parse`` shows it for multi-part pastes)."""
    out: list[dict[str, Any]] = []
    by_kind: dict[str | None, int] = defaultdict(int)
    for p in parts:
        by_kind[p.kind] += 1
        out.append(
            {
                "kind": p.kind,
                "start_line": p.numbers[0] if p.numbers else None,
                "end_line": p.numbers[-1] if p.numbers else None,
                "command": p.command,
                "subject": p.subject,
                "records": len(p.result.records) if p.result else 0,
            }
        )
    return out

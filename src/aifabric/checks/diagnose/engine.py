"""The diagnosis engine: evidence files in, ranked findings out (S20, S21).

1. **Load** every path given (files, or bundle directories ``DIR/<host>/<captures>``). Each file
   is split into parts (:func:`aifabric.evidence.paste.parse_paste`: shell prompts, markdown
   fences, launcher and host prefixes, several tools in one paste) and each part is detected and
   parsed; a part no parser knows is kept as ``text``. The file's lines are kept so findings
   quote them, with file line numbers.
2. **Subjects**: records belong to the host or device they describe: the bundle directory they
   sit in, else the host a prefix or a log line names, else the file.
3. **Scan**: every line of log-like parts (NCCL logs, dmesg, launcher and application output,
   unrecognised text) is matched against the signature catalogues (:mod:`.signatures`), giving
   ``signature`` records; lines that read like errors and match nothing are kept as suspects.
4. **Derive** records that need more than one capture, e.g. ``ethtool_delta`` and
   ``rdma_counters_delta`` (counter growth between two snapshots of the same interface),
   registered with :func:`deriver`.
5. **Diagnose**: rules (:mod:`.rules`) per subject (or over all input), then record verdicts
   (:mod:`.verdicts`), then catalogue findings, then ``diagnose.unrecognised-line`` for the
   suspects no finding quotes. Every finding names its layer (fabric, host, configuration,
   application), a cause class (``checks/causes.yaml``), the evidence as ``file line N: text``,
   and an authored confidence. Ranked: errors first, then rules before verdicts before catalogue
   entries, then confidence.
"""

from __future__ import annotations

import itertools
import os
import re
import string
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from aifabric.catalog import Catalog
from aifabric.checks.diagnose.advisories import advisory_findings
from aifabric.checks.diagnose.differential import apply_differentials
from aifabric.checks.diagnose.nearest import K as NEAREST_K
from aifabric.checks.diagnose.nearest import nearest_index
from aifabric.checks.diagnose.rules import Match, Rule, all_rules, op_holds
from aifabric.checks.diagnose.signatures import (
    LAYER_WORDS,
    Signature,
    SignatureHit,
    SignatureIndex,
    all_causes,
    signature_index,
)
from aifabric.checks.diagnose.streaming import load_streamed, streamed_kind
from aifabric.checks.diagnose.verdict_support import single_node
from aifabric.checks.diagnose.verdicts import Verdict, load_verdicts
from aifabric.errors import InputError
from aifabric.evidence.base import ParseResult, Record, decode_capture
from aifabric.evidence.paste import parse_paste, prompt_lines
from aifabric.findings import EvidenceItem, Finding
from aifabric.inputs import is_parsed_companion, read_input
from aifabric.model import Fabric

__all__ = [
    "Capture",
    "Diagnosis",
    "Evidence",
    "EvidenceFile",
    "Item",
    "deriver",
    "diagnose",
    "field_value",
    "load_evidence",
    "weight",
]


@dataclass(slots=True)
class EvidenceFile:
    """One parsed capture (or one part of a multi-tool paste): where it came from, what it is,
    the file's lines (for quoting) and which of them are this part's."""

    path: str
    kind: str
    result: ParseResult
    lines: Sequence[str]
    """every line of the file (a huge file read in chunks holds only the lines its kept items
    quote: :class:`aifabric.checks.diagnose.streaming.SparseLines`)."""
    subject: str
    numbers: list[int] | None = None
    """1-based file lines of this part (``None``: the whole file)."""
    command: str | None = None
    """the command a prompt line in the paste gave for this part."""
    prompts: frozenset[int] = frozenset()
    """file lines that are shell prompts with the user's command (not output)."""

    def quote(self, line: int | None, subject: str | None = None) -> EvidenceItem:
        """Line ``line`` of this file as a finding's evidence (``subject``: the host or rank the
        line is about, when a prefix said so; else this capture's subject)."""
        who = subject or self.subject
        if not line or line > len(self.lines):
            return EvidenceItem(source=self.path, text="", subject=who)
        text = self.lines[line - 1].strip()[:160]
        return EvidenceItem(source=self.path, line=line, text=text, subject=who)

    def own_lines(self) -> Iterator[tuple[int, str]]:
        """(file line, text) of this part's lines."""
        if self.numbers is None:
            yield from enumerate(self.lines, 1)
        else:
            for n in self.numbers:
                if 1 <= n <= len(self.lines):
                    yield n, self.lines[n - 1]


@dataclass(frozen=True, slots=True)
class Item:
    """A record with the file it came from (``None`` for derived records without one line)."""

    record: Record
    file: EvidenceFile | None
    subject: str
    kind: str
    repeat: int = 1
    """How many records of the input this item stands for: more than 1 only for a huge file
    read in chunks, where records of the same content are counted rather than kept
    (:mod:`.streaming`); every count of records is :func:`weight`."""


def weight(items: Iterable[Item]) -> int:
    """How many records of the input ``items`` stand for (the sum of their ``repeat``)."""
    return sum(item.repeat for item in items)


@dataclass(slots=True, kw_only=True)
class SignatureRecord(Record):
    """A line recognised by a signature catalogue entry (:mod:`.signatures`)."""

    record_type: ClassVar[str] = "signature"
    id: str
    program: str
    severity: str
    cause: str
    groups: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Suspect:
    """A line that looks like an error (``ERROR``, ``failed``, ``WARN``...) in a log-like input."""

    file: EvidenceFile
    line: int
    text: str
    repeat: int = 1
    """Lines like it this one stands for (huge files, :mod:`.streaming`)."""
    block: int | None = None
    """File line of the banner opening the help block the line is in (:func:`_help_blocks`):
    the lines of one block are one message."""


@dataclass(slots=True)
class Evidence:
    """Everything given to diagnose: files, records by subject, what was skipped."""

    files: list[EvidenceFile] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    fabric: Fabric | None = None
    """The fabric file, when given (derivers compare evidence with what it should deliver)."""
    catalog: Catalog | None = None
    suspects: list[Suspect] = field(default_factory=list)
    """Error-looking lines no catalogue entry recognised (reported unless a finding quotes them)."""

    def subjects(self) -> dict[str, list[Item]]:
        out: dict[str, list[Item]] = defaultdict(list)
        for item in self.items:
            out[item.subject].append(item)
        return out


# -- loading ----------------------------------------------------------------------------------

TEXT_KIND = "text"
"""The kind of a file (or part of a paste) that no parser recognised: still scanned."""

SCANNED_KINDS = frozenset(
    {TEXT_KIND, "nccl-log", "dmesg-mlx5", "nccl-tests", "perftest", "ping", "ucx-perftest",
     "mlxconfig"}
)  # fmt: skip
"""Kinds whose lines are matched against the signature catalogues and searched for
error-looking lines. Counter dumps and configs are not: their words (``rx_errors``,
``Advanced Error Reporting``) are field names, and their values are judged by verdicts.
``mlxconfig`` is: its parameter names are upper-case identifiers, and the tool's own ``-E-`` /
``-I-`` lines are printed between its tables."""

_ERRORISH = re.compile(
    r"\b(?:ERROR|Error|error|errno|FATAL|Fatal|fatal|WARN|WARNING|Warning|failed|FAILED|Failed"
    r"|failure|Failure|Traceback|Exception|Segmentation fault|segfault|Killed|Aborted|aborted"
    r"|timed out|Timeout|TIMEOUT|refused|unreachable|Unreachable|denied|[Cc]annot|[Uu]nable to"
    r"|No such|[Cc]ould not|[Cc]ouldn't|[Cc]an't|command not found|ERR|ABORT|OOM"
    r"|SIG(?:SEGV|ABRT|BUS|ILL|FPE)|segmentation violation|[Mm]ismatch|not loaded"
    r"|[Ll]ink (?:is )?[Dd]own|flushed|[Uu]n(?:recogni[sz]ed|known) (?:option|argument|command)"
    r"|fail|[Uu]nhealthy|not healthy"
    r"|[Rr]eset adapter|PANIC|[Pp]anic(?:ked)?"
    r"|[Bb]ad (?:argument|parameter|value|address|magic|state|pte|checksum|lid|port"
    r"|file descriptor)"
    r"|exited with (?:exit )?(?:status|code) -?[1-9]\d{0,3}|exit (?:status|code)[ :=]{1,3}-?[1-9]"
    r"\d{0,3}|with status -?[1-9]\d{0,3}"
    r"|fails|abort(?:ed|ing)?|(?<![Hh]igh )(?<![Ll]ow )(?<!/)warning(?!s? (?:flag|threshold))"
    r"|CRIT(?:ICAL)?|[Cc]ritical|crit|[Dd]egraded|truncated"
    r"|not (?:initiali[sz]ed|ready|properly set)|No path to|RTNETLINK answers"
    r"|is hung|wedged|is not active|(?:high|low) alarm(?!\s{0,40}(?:threshold|flag|:))"
    r"|timeout(?!\s{0,3}[=:(]|\s{1,3}\d|s|\s(?:set|of|is|value|to)\b))\b"
    r"|= -1 E[A-Z]{2,15}\b"
    r"|Error\([A-Za-z.]{1,60}\): "
    r"|\berr\s?[:=]\s?-?[1-9]\d{0,5}\b"
    r"|\b[A-Z][A-Z0-9]{1,20}_(?:ERR|ERROR)(?:_[A-Z0-9]{1,30}){1,6}\b(?!=)"
    r"|\bHEALTH_(?:WARN|ERR)\b"
    r"|\bBUG: "
    r"|: not found\s*$"
    r"|\breturned -[1-9]\d{0,5}\b"
    r"|(?:^|\s)[EF]\d{4} \d\d:\d\d:\d\d\.\d{6}\s+\d+ [^\s\]]+:\d+\]"
    r"|(?:^|\s)-E- "
    r"|(?:Error|Exception|error): "
)
"""What makes a line look like an error: its words, as programs print them, or the E (error)
and F (fatal) severity prefix of the glog/klog line format ``Lmmdd hh:mm:ss.uuuuuu tid
file:line] msg`` (Mooncake, Kubernetes components and device plug-ins, PyTorch elastic): a line
such a program logs at error level is an error whatever its words. W (warning) lines are not
taken: torchrun prints its routine OMP_NUM_THREADS notice at that level. ``-E- `` is the error
prefix of every NVIDIA MFT/mstflint tool (mlxconfig, mlxlink, flint, mst: ``printf("-E- %s\\n",
...)`` in mstflint); their ``-W-``/``-I-`` lines are notes. An exception line in the form
Python and Java print it, ``ValueError: ...``, ``socket.gaierror: ...``,
``torch.distributed.DistBackendError: ...``, is an error whatever its words (the class name
joins ``Error`` to a prefix, so the word test alone misses it). ``could not``, a shell's
``command not found`` and syslog's ``ERR`` severity token (SONiC's ``ERR syncd#syncd: ...``)
are errors too; the benchmark of real pasted lines (benchmarks/lines) showed them silent. So
were (development halves of that benchmark): ``couldn't``/``can't`` (perftest's ``Couldn't get
device attribute.``), an upper-case ``ABORT`` or ``OOM`` (Singularity's ``ABORT  : Retval =
255``, ALPS's ``OOM killer terminated this process``), a fatal signal's name (``SIGSEGV``,
Go's ``segmentation violation``), ``mismatch`` (``NVRM: API mismatch``), ``not loaded`` (MFT's
``MST PCI module is not loaded``), an error code's identifier (``MPI_ERR_TRUNCATE``,
``CUDA_ERROR_TOO_MANY_PEERS``, ``GASNET_ERR_BAD_ARG``, ``ORTE_ERROR_LOG``; not when it is a
variable being set, ``UCX_ERROR_SIGNALS=...``), Ceph's ``HEALTH_WARN``, a shell's ``sh: 1: x:
not found`` and a call that ``returned -1``. Later (same halves): a link reported down (a
driver's ``NIC Link is Down``, a traffic generator's ``Link Down``), a flushed work request, an
unrecognised option, the bare word ``fail`` (``ARMCI DASSERT fail``, ``result="fail"``), the
kernel's ``BUG:``, a driver's ``Reset adapter``, a panic, ``bad <argument|value|lid|...>`` and
a non-zero exit status (``exited with exit code 127``, ``shutting down with status 1``); the
nccl-tests ``#wrong`` column and a script's ``exit 1`` stay quiet. And: ``fails``, a lower-case
``abort``/``warning``/``crit`` (NCCL's ``abort called``, Flux's ``heartbeat.warning``,
``overlay.crit``), ``critical``, ``degraded`` (Ceph), ``truncated``, ``not initialized``/``not
ready``/``not properly set``, ``No path to`` (OpenSHMEM), a netlink error reply (``RTNETLINK
answers: File exists``), an exception wrapping another (``RayTaskError(DistBackendError): ``)
and a non-zero ``err: 802``. The threshold and flag names of ``ethtool -m`` (``Laser rx power
low warning : On``) and counter names are not scanned: those kinds are judged by verdicts; a
bare transceiver flag line (``Tx bias high warning flag on lane 7: False``, SONiC) stays quiet
wherever it is. From the ninth set's development half: a hardware block that ``is hung`` or a
device ``wedged`` (amdgpu), a unit that ``is not active``, a transceiver ``high alarm`` state
(not an alarm threshold or flag name), a lower-case ``timeout`` (``link confirmation
timeout``; not ``timeout=``, ``timeout 0.05`` or ``timeouts``) and a failed system call as
strace prints it (``= -1 ENOMEM``). From the tenth set's development half: an ``unknown
option`` (a start script's ``Unknown option: <file>``) and a component reported ``unhealthy`` or
``not healthy`` (a node agent's ``fabric state is not healthy``)."""

MAX_LINE_SCAN = 4096
"""Lines are scanned up to this many characters (a 100 KB line is cut, never a hang)."""


def _walk(path: Path) -> Iterator[tuple[Path, str | None]]:
    if path.is_dir():
        for child in sorted(path.iterdir()):
            if child.name.startswith("."):
                continue
            if child.is_dir():
                for sub in sorted(child.rglob("*")):
                    if (
                        sub.is_file()
                        and not sub.name.startswith(".")
                        and not is_parsed_companion(sub)
                    ):
                        yield sub, child.name
            elif child.is_file():
                yield child, None
    elif path.is_file():
        yield path, None
    else:
        raise InputError(f"{path}: no such file or directory")


_SKIP_NAMES = frozenset(
    {"meta.yaml", "case.yaml", "README.md", "SOURCES.md", "incident.yaml", "manifest.json"}
)


class Capture(Protocol):
    """An already-parsed capture given to :func:`load_evidence` beside files (e.g. counters read
    back from Prometheus, :mod:`aifabric.monitor.fleet`): it becomes one :class:`EvidenceFile`
    and its records go through the same items, scans and derivers as a file's."""

    @property
    def path(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def lines(self) -> Sequence[str]: ...
    @property
    def result(self) -> ParseResult: ...
    @property
    def subject(self) -> str: ...
    @property
    def numbers(self) -> list[int] | None: ...


def load_evidence(
    paths: Sequence[Path],
    *,
    fabric: Fabric | None = None,
    catalog: Catalog | None = None,
    on_file: Callable[[Path], None] | None = None,
    captures: Sequence[Capture] = (),
) -> Evidence:
    """Parse every file under ``paths`` (bundle directories give the host by folder name), and
    take ``captures`` (parsed elsewhere) as they are.

    Each file is split into parts (:func:`aifabric.evidence.paste.parse_paste`: prompts,
    fences, launcher and host prefixes); parts no parser recognises are kept as ``text`` so
    their lines are still matched against the signature catalogues.
    """
    ev = Evidence(fabric=fabric, catalog=catalog)
    index = signature_index()
    for root in paths:
        for path, host in _walk(root):
            if on_file is not None:
                on_file(path)
            if path.name in _SKIP_NAMES:
                continue
            big = streamed_kind(path)
            if big is not None:  # a huge capture of one tool: read in chunks, summarised
                try:
                    load_streamed(ev, path, big, host, index)
                except OSError as exc:
                    ev.skipped.append(f"{path}: cannot read: {exc.strerror or exc}")
                except InputError as exc:
                    ev.skipped.append(f"{path}: {exc}")
                continue
            try:
                data = read_input(path, "capture")
                text = decode_capture(data, str(path))
                parts = parse_paste(text)
            except OSError as exc:
                ev.skipped.append(f"{path}: cannot read: {exc.strerror or exc}")
                continue
            except (InputError, RecursionError) as exc:
                ev.skipped.append(f"{path}: {exc}")
                continue
            lines = text.splitlines()
            whole = len(parts) == 1 and parts[0].subject is None
            prompts = prompt_lines(text)
            for part in parts:
                result = part.result or ParseResult(TEXT_KIND)
                kind = part.kind or TEXT_KIND
                subject = host or part.subject or _record_host(result) or path.name
                ef = EvidenceFile(
                    str(path), kind, result, lines, subject,
                    None if whole else part.numbers, part.command, prompts,
                )  # fmt: skip
                ev.files.append(ef)
                for w in result.warnings[:3]:
                    ev.skipped.append(f"{path} line {w.line}: {w.message}")
                for rec in result.records:
                    who = host or getattr(rec, "host", None) or subject
                    ev.items.append(Item(rec, ef, str(who), kind))
                if (kind in SCANNED_KINDS or not result.records) and not part.companion:
                    # a part its parser read nothing from is scanned like text: its kind was a
                    # guess (a marker quoted in prose), and nothing it says may be lost
                    _scan(ev, ef, index)
                elif not part.companion and (said := _message_lines(result)):
                    _scan(ev, ef, index, only=said)
    for cap in captures:
        ef = EvidenceFile(cap.path, cap.kind, cap.result, cap.lines, cap.subject, cap.numbers)
        ev.files.append(ef)
        ev.skipped.extend(f"{cap.path} line {w.line}: {w.message}" for w in cap.result.warnings[:3])
        for rec in cap.result.records:
            ev.items.append(Item(rec, ef, str(getattr(rec, "host", None) or cap.subject), cap.kind))
        if cap.kind in SCANNED_KINDS:
            _scan(ev, ef, index)
        elif said := _message_lines(cap.result):
            _scan(ev, ef, index, only=said)
    # derivers live in their own modules and register on import
    from aifabric.checks.diagnose import (  # noqa: F401, PLC0415
        derive_commands,
        derive_counters,
        derive_nccl,
        derive_perf,
        derive_switch,
    )

    for fn in _DERIVERS:
        ev.items.extend(fn(ev))
    return ev


_VOLATILE_PREFIX = re.compile(
    r"^(?:\[\d+,\d+\]<std(?:out|err)>:|\s{0,4}\d{1,5}: |\[[^\]]{1,40}\] )?"
    r"(?:[\w.\-]{1,64}:\d+:\d+ \[\d+\] )?"
)
"""The launcher prefix and NCCL's ``host:pid:tid [dev]`` head: what differs between the same
message printed by a thousand ranks."""

_SCAN_CACHE_MAX = 100_000


FLATTENED_MIN_CHARS = 250
"""A line this long may hold several messages flattened into one (a log copied out of a web
page or joined by a tracker): it is searched for more than one catalogue entry."""


def _scan_line(line: str, index: SignatureIndex) -> tuple[tuple[SignatureHit, ...], bool]:
    """(catalogue hits, error-looking) of one line, cached by the line without its rank/host
    head: a fleet's logs repeat the same messages on every rank."""
    m = _VOLATILE_PREFIX.match(line)
    key = line[m.end() :] if m else line
    cache = index.cache
    got = cache.get(key)
    if got is None or (any(h.groups for h in got[0]) and key != line):
        if len(line) >= FLATTENED_MIN_CHARS:
            hits = index.match_all(line)
        else:
            hit = index.match(line)
            hits = (hit,) if hit is not None else ()
        errorish = not hits and _ERRORISH.search(line) is not None
        if errorish or (hits and all(h.signature.catch_all for h in hits)):
            # An errno number the line prints is a reason; a catch-all wrapper names none.
            spelled = errno_spelled(line)
            hit = index.match(spelled) if spelled is not None else None
            if hit is not None and not hit.signature.catch_all:
                hits, errorish = (hit, *hits), False
        got = (hits, errorish)
        if len(cache) >= _SCAN_CACHE_MAX:
            cache.clear()
        cache[key] = got
    return got


_ERRNO_NUMBER = re.compile(
    r"(?:\berrno\b[ \t]{0,2}[:=]?[ \t]{0,2}\(?-?"
    r"|\b(?:err(?:or)?|rc|ret(?:urned)?|status)\b[ \t]{0,2}[:=]?[ \t]{0,2}-"
    r"|\bfailed\b[^\n]{0,16}?[ :(=]-)(?P<n>\d{1,3})\b(?![.:]\d)"
)
"""An errno value a program printed as a number (``errno: 12``, ``errno=95``, the kernel's
``error -5``, ``rc=-12``, ``failed: -19``): glibc's errno.h values, which strerror() names."""


def errno_spelled(line: str) -> str | None:
    """``line`` with the strerror() text of the errno number it prints appended (``errno 12``
    → ``... (Cannot allocate memory)``), or ``None`` when it prints none: the catalogue entries
    keyed on the error's words (ENOMEM from memory registration, ENODEV, ETIMEDOUT) then read a
    program that printed the number alike. The names are the C library's (strerror(3), glibc,
    errno values of the Linux ABI); an unknown number gives ``None``."""
    m = _ERRNO_NUMBER.search(line)
    if m is None:
        return None
    n = int(m.group("n"))
    text = os.strerror(n) if 0 < n < 134 else ""
    if not text or text.startswith("Unknown error"):
        return None
    return f"{line} ({text})"


WRAP_MIN_CHARS = 40
"""A line shorter than this is not taken for the first half of a wrapped message."""


def _join_wrapped(line: str, nxt: str, index: SignatureIndex) -> SignatureHit | None:
    """The entry matching ``line`` continued by ``nxt``, when the match crosses the break.

    Mail clients and web archives wrap long lines: at a word (the space is lost: joined with
    one) or at a fixed column inside a token (``(172.17.0.2`` / ``, 44737)``: joined with
    nothing). A match that does not reach across the break is not a wrapped message: either
    half alone would have matched."""
    head = line.rstrip()
    tail = nxt.strip()
    if len(head.strip()) < WRAP_MIN_CHARS or not tail:
        return None
    for sep in (" ", ""):
        hit = index.match(head + sep + tail)
        if hit is not None and hit.span[0] < len(head) and hit.span[1] > len(head) + len(sep):
            return hit
    return None


_BANNER = re.compile(r"^[ \t]*-{74}[ \t]*$")
"""The rule of 74 dashes Open MPI, PRRTE and PMIx print above and below a help message
(``opal_show_help``'s ``dash_line``, opal/util/show_help.c: ``help-*.txt`` topics). Other
tools' rules (perftest's 87 dashes around its report sections) are not help blocks: a line they
recognise says nothing about the other lines of the section."""
HELP_BLOCK_MAX_LINES = 60


def _help_blocks(lines: list[tuple[int, str]]) -> dict[int, int]:
    """File line → the line of the banner that opens its help block, for the lines between two
    banners at most :data:`HELP_BLOCK_MAX_LINES` apart (launcher and rank prefixes ignored)."""
    banners = [n for n, line in lines if _BANNER.match(_unprefixed(line))]
    out: dict[int, int] = {}
    closing: set[int] = set()
    for a, b in itertools.pairwise(banners):
        if a in closing:
            continue  # the rule that closed the last block: what follows it is not a message
        if 1 < b - a <= HELP_BLOCK_MAX_LINES:
            for n in range(a + 1, b):
                out[n] = a
            closing.add(b)
    return out


def _unprefixed(line: str) -> str:
    """``line`` without its launcher prefix and NCCL head (:data:`_VOLATILE_PREFIX`)."""
    m = _VOLATILE_PREFIX.match(line)
    return line[m.end() :] if m else line


def _message_lines(result: ParseResult) -> set[int]:
    """Lines of a structured capture that its parser read as the program's own messages
    (records with ``message_line`` set: nvidia-smi's ``No devices were found`` beside its
    table): the catalogues read those lines, not the data around them."""
    return {r.line for r in result.records if r.message_line}


def _scan(
    ev: Evidence, ef: EvidenceFile, index: SignatureIndex, only: set[int] | None = None
) -> None:
    """Match the part's lines (or ``only`` these) against the catalogues; keep error-looking
    lines none explains.

    An error-looking line no entry explains is tried once more joined with the next line
    (:func:`_join_wrapped`), when that line is not recognised on its own either: the message
    may have been wrapped by the paste."""
    lines = [(n, raw[:MAX_LINE_SCAN]) for n, raw in ef.own_lines()
             if n not in ef.prompts and (only is None or n in only)]  # fmt: skip
    # prompts: the command the user typed ("grep -i error log"), not output
    joined: set[int] = set()
    blocks = _help_blocks(lines) if any("---" in line for _, line in lines) else {}
    explained_blocks: set[int] = set()
    first_suspect = len(ev.suspects)
    for i, (n, line) in enumerate(lines):
        if n in joined:
            continue
        hits, errorish = _scan_line(line, index)
        if not hits and i + 1 < len(lines) and lines[i + 1][0] == n + 1:
            nxt = lines[i + 1][1]
            nxt_hits, nxt_errorish = _scan_line(nxt, index)
            if not nxt_hits and (errorish or nxt_errorish):
                hit = _join_wrapped(line, nxt, index)
                if hit is not None:
                    hits = (hit,)
                    joined.add(n + 1)
        for hit in hits:
            sig = hit.signature
            rec = SignatureRecord(
                line=n, id=sig.id, program=hit.program, severity=sig.severity, cause=sig.cause,
                groups=hit.groups,
            )  # fmt: skip
            ev.items.append(Item(rec, ef, ef.subject, ef.kind))
            if n in blocks and sig.severity != "benign":
                explained_blocks.add(blocks[n])
        if not hits and errorish:
            ev.suspects.append(Suspect(ef, n, line.strip(), block=blocks.get(n)))
    if explained_blocks:
        # a help message one of whose lines an entry explains: its other lines are that message
        # (the wrapped rest of its sentence, the variables it prints), not unrecognised
        ev.suspects[first_suspect:] = [
            s for s in ev.suspects[first_suspect:] if s.block not in explained_blocks
        ]


def _record_host(result: ParseResult) -> str | None:
    hosts = {getattr(r, "host", None) for r in result.records} - {None}
    return str(next(iter(hosts))) if len(hosts) == 1 else None


# -- derived records --------------------------------------------------------------------------

Deriver = Callable[[Evidence], Iterable[Item]]
_DERIVERS: list[Deriver] = []


def deriver(fn: Deriver) -> Deriver:
    """Register a function that adds derived records (needing more than one capture)."""
    _DERIVERS.append(fn)
    return fn


@dataclass(slots=True, kw_only=True)
class CounterDelta(Record):
    """Growth of counters between two snapshots of one interface or RDMA port (second minus
    first, for every counter in both; a counter that went down, a reset, is left out)."""

    record_type: ClassVar[str] = "counter_delta"
    source_type: str
    name: str | None
    counters: dict[str, int] = field(default_factory=dict)
    by_prio: dict[str, dict[int, int]] = field(default_factory=dict)
    """``rx_pause_by_prio`` etc. of ethtool dumps, as deltas per priority."""
    snapshots: int = 2


@dataclass(slots=True, kw_only=True)
class EthtoolDelta(CounterDelta):
    record_type: ClassVar[str] = "ethtool_delta"


@dataclass(slots=True, kw_only=True)
class RdmaDelta(CounterDelta):
    record_type: ClassVar[str] = "rdma_counters_delta"


_BY_PRIO = (
    "rx_pause_by_prio",
    "tx_pause_by_prio",
    "rx_pause_duration_us_by_prio",
    "tx_pause_duration_us_by_prio",
    "discards_by_prio",
)


def _diff(a: dict[Any, Any], b: dict[Any, Any]) -> dict[Any, int]:
    out: dict[Any, int] = {}
    for key, vb in b.items():
        va = a.get(key)
        if isinstance(va, int) and isinstance(vb, int) and vb >= va:
            out[key] = vb - va
    return out


_SNAPSHOT_SUFFIX = re.compile(r"\.\d+(?:\.txt)?$")


def _series_name(item: Item) -> str | None:
    """A raw ``ethtool -S IFACE`` dump names no interface; its file does: the snapshots of one
    series are ``ethtool-S-eth0.1.txt``, ``ethtool-S-eth0.2.txt`` (a probe bundle), so the
    file name without its snapshot number keeps two interfaces' counters apart."""
    if item.file is None:
        return None
    name = Path(item.file.path).name
    stem = _SNAPSHOT_SUFFIX.sub("", name)
    return stem if stem != name and stem else None  # other names: one series per subject


@deriver
def _counter_deltas(ev: Evidence) -> Iterator[Item]:
    groups: dict[tuple[str, str, str | None], list[Item]] = defaultdict(list)
    for item in ev.items:
        rtype = item.record.record_type
        if rtype == "ethtool_stats":
            name = getattr(item.record, "interface", None) or _series_name(item)
        elif rtype == "rdma_counters":
            dev, port = getattr(item.record, "device", None), getattr(item.record, "port", None)
            name = f"{dev}/{port}" if dev else None
        else:
            continue
        groups[(item.subject, rtype, name)].append(item)
    for (subject, rtype, name), items in groups.items():
        if len(items) < 2:
            continue
        first, last = items[0], items[-1]
        counters = _diff(
            getattr(first.record, "counters", {}), getattr(last.record, "counters", {})
        )
        by_prio = {
            view: _diff(getattr(first.record, view, {}), getattr(last.record, view, {}))
            for view in _BY_PRIO
            if hasattr(last.record, view)
        }
        cls = EthtoolDelta if rtype == "ethtool_stats" else RdmaDelta
        rec = cls(
            line=last.record.line,
            source_type=rtype,
            name=name,
            counters=counters,
            by_prio=by_prio,
            snapshots=weight(items),
        )
        yield Item(rec, last.file, subject, last.kind)


# -- matching ---------------------------------------------------------------------------------


def field_value(record: object, path: str) -> Any:
    """Walk ``a.b.3`` through attributes and dict keys (int keys tried for digits)."""
    value: Any = record
    for part in path.split("."):
        if value is None:
            return None
        if isinstance(value, dict):
            if part in value:
                value = value[part]
            elif part.lstrip("-").isdecimal() and int(part) in value:
                value = value[int(part)]
            else:
                return None
        else:
            value = getattr(value, part, None)
    return value


ByType = dict[str, list[Item]]


def _by_type(items: Iterable[Item]) -> ByType:
    out: ByType = defaultdict(list)
    for item in items:
        out[item.record.record_type].append(item)
    return out


def _select(items: ByType, m: Match) -> list[Item]:
    out = []
    for item in items.get(m.record, ()):
        if m.kind is not None and item.kind != m.kind:
            continue
        if all(
            op_holds(op, field_value(item.record, path), want)
            for path, tests in m.where.items()
            for op, want in tests.items()
        ):
            out.append(item)
    return out


def _holds(m: Match, found: list[Item]) -> bool:
    if m.count is None:
        return bool(found)
    total = weight(found)
    return all(op_holds(op, total, n) for op, n in m.count.items())


@dataclass(slots=True)
class Diagnosis:
    """Findings ranked, and the inputs with nothing wrong."""

    findings: list[Finding]
    evidence: Evidence
    healthy: list[str]


class _Fields(string.Formatter):
    def __init__(self, named: dict[str, Item]) -> None:
        super().__init__()
        self.named = named

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, str]:
        head, _, rest = field_name.partition(".")
        if head in kwargs and not rest:
            return kwargs[head], field_name
        item = self.named.get(head)
        value = field_value(item.record, rest) if item is not None and rest else None
        return ("?" if value is None else value), field_name


def _render(rule: Rule, subject: str, matched: list[tuple[Match, list[Item]]]) -> str:
    named: dict[str, Item] = {}
    for m, found in matched:
        if m.as_ and found:
            named.setdefault(m.as_, found[0])  # the first match that names it (an `any` order)
    count = weight(matched[0][1]) if matched else 0
    try:
        return _Fields(named).format(rule.message, subject=subject, count=count)
    except (ValueError, IndexError, KeyError):
        return rule.message


Quoted = set[tuple[str, int]]
"""(file, line) pairs that findings quote or explain."""


def _evaluate(
    rule: Rule, subject: str, own: ByType, everything: ByType
) -> tuple[Finding, Quoted] | None:
    cond = rule.when
    matched: list[tuple[Match, list[Item]]] = []

    def pool(m: Match) -> ByType:
        return everything if m.scope == "input" else own

    for m in cond.all:
        found = _select(pool(m), m)
        if not _holds(m, found):
            return None
        matched.append((m, found))
    if cond.any:
        any_hit = [(m, f) for m in cond.any if _holds(m, f := _select(pool(m), m))]
        if not any_hit:
            return None
        matched += any_hit
    for m in cond.none:
        if _holds(m, _select(pool(m), m)):
            return None
    quotes: list[EvidenceItem] = []
    explained: Quoted = set()
    for _, found in matched:
        for item in found:
            if item.file is not None:
                explained.add((item.file.path, item.record.line))
                end = item.record.end_line
                if end is not None and end > item.record.line:
                    explained.update((item.file.path, n) for n in range(item.record.line, end + 1))
        for item in found[:3]:
            q = (
                item.file.quote(item.record.line, item.subject)
                if item.file
                else EvidenceItem(text=f"derived from the evidence of {subject}", subject=subject)
            )
            if q not in quotes:
                quotes.append(q)
    finding = Finding(
        check=rule.id,
        severity=rule.severity,
        target=subject,
        message=f"{LAYER_WORDS[rule.layer]}: {_render(rule, subject, matched)}",
        expected=None,
        actual=f"cause in the {rule.layer}" if rule.layer != "config" else "configuration",
        evidence=quotes[:8],
        explanation=f"Cause: {' '.join(rule.cause.split())} {' '.join(rule.explanation.split())}",
        fix=rule.fix,
        refs=list(rule.refs),
        confidence=rule.confidence,
        cause=rule.cause_class,
    )
    return finding, explained


SIGNATURE_PRIOR = {"error": 0.55, "warning": 0.45, "info": 0.3}
"""Authored priors for catalogue findings: below the rules (0.6-0.8), which see combinations
of evidence, so a rule's reading ranks first where both apply."""

UNRECOGNISED_CHECK = "diagnose.unrecognised-line"
MAX_UNRECOGNISED = 5
"""Distinct unrecognised messages reported per subject (the rest are counted)."""

_NORMALISE = re.compile(r"0x[0-9a-fA-F]+|\d+")


def _verdict_findings(ev: Evidence) -> list[tuple[Finding, Quoted]]:
    """Every registered verdict over every record, grouped per (subject, verdict id)."""
    table = load_verdicts()
    grouped: dict[tuple[str, str], list[tuple[Verdict, Item]]] = defaultdict(list)
    for item in ev.items:
        fns = table.get(item.record.record_type)
        if not fns:
            continue
        for fn in fns:
            for v in fn(item.record, ev):
                grouped[(item.subject, v.id)].append((v, item))
    out: list[tuple[Finding, Quoted]] = []
    rank = {"error": 0, "warning": 1, "info": 2}
    for (subject, vid), hits in grouped.items():
        hits.sort(key=lambda h: rank[h[0].severity])  # the most severe reading leads the group
        v = hits[0][0]
        quotes: list[EvidenceItem] = []
        explained: Quoted = set()
        for verdict_, item in hits:
            line = verdict_.line if verdict_.line is not None else item.record.line
            if item.file is not None:
                explained.add((item.file.path, line))
                q = item.file.quote(line, item.subject)
                if q not in quotes:
                    quotes.append(q)
        cause = all_causes()[v.cause]
        n = sum(item.repeat for _, item in hits)
        more = f" ({n} records)" if n > 1 else ""
        finding = Finding(
            check=vid,
            severity=v.severity,
            target=subject,
            message=f"{LAYER_WORDS[cause.layer]}: {v.message}{more}",
            actual=f"cause in the {cause.layer}" if cause.layer != "config" else "configuration",
            evidence=quotes[:8],
            explanation=v.explanation,
            fix=v.fix,
            refs=list(v.refs),
            confidence=v.confidence,
            cause=v.cause,
        )
        out.append((finding, explained))
    return out


class _Groups(dict[str, str]):
    """A message's fields from the matched line; a field the line did not print (an optional
    group of another version's wording) reads "?" instead of leaving the template unfilled."""

    def __missing__(self, key: str) -> str:
        return "?"


_FIELD = re.compile(r"\{(\w{1,40})\}")


def _filled(text: str, sig: Signature, groups: dict[str, str]) -> str:
    """``text`` (an entry's meaning, next step or fix) with the ``{name}`` fields of the entry's
    pattern replaced by what the line printed ("?" for a field this wording did not print).
    Braces that name no group of the pattern (a JSON example, ``${VAR}``) are left as written."""
    names = sig.regex().groupindex
    if "{" not in text or not names:
        return text
    return _FIELD.sub(
        lambda m: (groups.get(m.group(1)) or "?") if m.group(1) in names else m.group(), text
    )


def _signature_findings(ev: Evidence) -> list[tuple[Finding, Quoted]]:
    """Catalogue hits grouped per (subject, entry); benign entries give none."""
    from aifabric.checks.diagnose.signatures import signature_by_id  # noqa: PLC0415

    grouped: dict[tuple[str, str], list[Item]] = defaultdict(list)
    for item in ev.items:
        rec = item.record
        if isinstance(rec, SignatureRecord) and rec.severity != "benign":
            grouped[(item.subject, rec.id)].append(item)
    out: list[tuple[Finding, Quoted]] = []
    one_node: bool | None = None
    for (subject, sid), items in grouped.items():
        sig, program = signature_by_id()[sid]
        first = items[0].record
        assert isinstance(first, SignatureRecord)
        text = sig.meaning
        if sig.message:
            try:
                text = sig.message.format_map(_Groups(first.groups))
            except (IndexError, ValueError):
                text = sig.message
        cause = all_causes()[sig.cause]
        severity = sig.severity
        if sig.multi_node and one_node is None:
            one_node = single_node(ev)  # once per diagnosis, only when an entry asks
        if sig.multi_node and one_node:
            severity = "info"  # benign entries were filtered above
            text += " (single-node job: no traffic leaves the host, so this is harmless here)"
        quotes: list[EvidenceItem] = []
        explained: Quoted = set()
        for item in items:
            if item.file is not None:
                explained.add((item.file.path, item.record.line))
                if len(quotes) < 5:
                    quotes.append(item.file.quote(item.record.line, item.subject))
        n = weight(items)
        more = f" ({n} lines)" if n > 1 else ""
        groups = dict(first.groups)
        nxt = f" Next: {_filled(sig.next, sig, groups)}" if sig.next else ""
        finding = Finding(
            check=f"signature.{sid}",
            severity=severity,
            target=subject,
            message=f"{LAYER_WORDS[cause.layer]}: {text}{more}",
            actual=f"cause in the {cause.layer}" if cause.layer != "config" else "configuration",
            evidence=quotes,
            explanation=f"{_filled(sig.meaning, sig, groups)} ({program} message; "
            f"source: {sig.source.link()})",
            fix=f"{_filled(sig.fix, sig, groups)}{nxt}".strip() or "See the source of the message.",
            refs=["S20", sig.source.link(), *sig.real[:2]],  # S20: the troubleshooting table
            confidence=SIGNATURE_PRIOR[severity],
            cause=sig.cause,
        )
        out.append((finding, explained))
    return out


_RECORD_PREFIX = re.compile(r"^(?=[^\]]{0,80}\d)[^\]]{0,80}\]")
"""A logger's prefix up to its first ``]`` when it holds a digit (a time or a source line):
``ERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597]`` (vLLM),
``[2025-04-19 14:15:23,982 E 528 5383]`` (Ray/glog-style)."""


def _record_prefix(text: str) -> str | None:
    m = _RECORD_PREFIX.match(text)
    return m.group() if m is not None else None


def _unrecognised(ev: Evidence, explained: Quoted) -> list[Finding]:
    """Error-looking lines that nothing explained: one finding per distinct message."""
    # looked up at call time: tests swap the catalogues through this module attribute
    from aifabric.checks.diagnose.signatures import signature_by_id  # noqa: PLC0415

    by_subject: dict[str, dict[str, list[Suspect]]] = defaultdict(lambda: defaultdict(list))
    prev: tuple[Suspect, str] | None = None
    """The last suspect kept and its group key: the next line continues its log record when it
    carries the same logger prefix (:func:`_record_prefix`)."""
    for s in ev.suspects:
        if (s.file.path, s.line) in explained:
            continue
        prefix = _record_prefix(s.text)
        if (
            prev is not None
            and prev[0].file is s.file
            and (
                (
                    prefix is not None
                    and prev[0].line == s.line - 1
                    and _record_prefix(prev[0].text) == prefix
                )
                or (s.block is not None and prev[0].block == s.block)
            )
        ):
            # one log record printed over several lines (a traceback logged with
            # logger.exception), or one help message between its rules of dashes: the lines
            # after the first are the same finding
            by_subject[s.file.subject][prev[1]].append(s)
            prev = (s, prev[1])
            continue
        key = _NORMALISE.sub("#", s.text)[:200]
        by_subject[s.file.subject][key].append(s)
        prev = (s, key)
    out: list[Finding] = []
    for subject, groups in by_subject.items():
        ranked = sorted(groups.values(), key=lambda g: (g[0].file.path, g[0].line))
        for i, group in enumerate(ranked[:MAX_UNRECOGNISED]):
            rest = len(ranked) - MAX_UNRECOGNISED
            tail = (
                f"; {rest} more distinct unrecognised line(s) in this input"
                if i == MAX_UNRECOGNISED - 1 and rest > 0
                else ""
            )
            first = group[0]
            n = sum(g.repeat for g in group)
            count = f" ({n} lines like it)" if n > 1 else ""
            hint = nearest_index().suggest(" ".join(g.text for g in group[:3]))
            said, why, refs = "", "", ["S20", "S24"]
            if hint is not None:
                title = all_causes()[hint.cause].title
                ids = ", ".join(nb.id for nb in hint.neighbours[:2])
                said = f"; like catalogued messages of: {title} ({ids}), a suggestion"
                why = (
                    f" Its words are nearest to catalogue entries of cause {hint.cause}: "
                    + "; ".join(
                        f"{nb.id} ({nb.program}, cosine {nb.similarity:.2f})"
                        for nb in hint.neighbours
                    )
                    + f", {hint.share:.0%} of the votes of the {NEAREST_K} nearest entries "
                    "(tf-idf cosine, k-nearest-neighbour vote). A lead to check, not a "
                    "finding: about three in four such suggestions name the right cause on "
                    "catalogued messages left out, but on real unrecognised lines from threads "
                    "never used one in four did, most others being lines that name no cause "
                    "by themselves (docs/benchmarks.md)."
                )
                got = signature_by_id().get(hint.neighbours[0].id)
                if got is not None:
                    refs.append(got[0].source.link())
            out.append(
                Finding(
                    check=UNRECOGNISED_CHECK,
                    severity="warning",
                    target=subject,
                    message=f"not recognised: {first.text[:200]}{count}{said}{tail}",
                    actual="an error-looking line no catalogue entry or rule explains",
                    evidence=[g.file.quote(g.line) for g in group[:3]],
                    explanation=(
                        "The line reads like an error (it says error, failed, WARN, timed out, "
                        "refused...) and no signature catalogue entry (docs/signatures.md) nor "
                        "diagnosis rule explains it. It is shown so that nothing visible is "
                        f"missed; it may be the cause, or a consequence of it.{why}"
                    ),
                    fix=(
                        "Read the lines just before it (the first error is usually the cause); "
                        "run with more logging (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET, "
                        "TORCH_DISTRIBUTED_DEBUG=DETAIL); search the program's issue tracker for "
                        "the quoted text; add the message to a catalogue with its source."
                    ),
                    refs=refs,
                    confidence=0.25 if hint is not None else 0.2,
                    cause=hint.cause if hint is not None else None,
                )
            )
    return out


_KIND_ORDER = {"rule": 0, "verdict": 1, "signature": 2, "unrecognised": 3, "advisory": 4}


def diagnose(
    ev: Evidence, rules: Sequence[Rule] | None = None, *, only_rules: bool = False
) -> Diagnosis:
    """Run ``rules`` (all shipped rules by default), the record verdicts and the signature
    catalogues over ``ev``; report error-looking lines nothing explains.

    A verdict or catalogue finding naming a cause class that a rule already names for the same
    subject is dropped (the rule explains it, with more context); a catalogue finding whose
    lines a rule or verdict quotes is dropped too, and so is a catch-all entry's finding whose
    lines entries that read the message also took (every other entry matching a flattened line
    gives its own finding). Ranking: severity, then rules before
    verdicts before catalogue entries, then confidence. ``only_rules`` runs the rules alone
    (tests of the rule language).
    """
    rules = all_rules() if rules is None else rules
    ranked: list[tuple[str, Finding]] = []
    explained: Quoted = set()
    subjects = {name: _by_type(items) for name, items in ev.subjects().items()}
    everything = _by_type(ev.items)
    for rule in rules:
        targets = [("all input", everything)] if rule.scope == "input" else sorted(subjects.items())
        for subject, items in targets:
            got = _evaluate(rule, subject, items, everything)
            if got is not None:
                ranked.append(("rule", got[0]))
                explained |= got[1]
    if only_rules:
        sev = {"error": 0, "warning": 1, "info": 2}
        ranked.sort(key=lambda p: (sev[p[1].severity], -(p[1].confidence or 0), p[1].check))
        return Diagnosis([f for _, f in ranked], ev, [])
    by_rule: set[tuple[str, str | None]] = {(f.target, f.cause) for _, f in ranked}
    everywhere = {f.cause for _, f in ranked if f.target == "all input"}

    def named(f: Finding, seen: set[tuple[str, str | None]]) -> bool:
        return (f.target, f.cause) in seen or f.cause in everywhere

    by_verdict: set[tuple[str, str | None]] = set()
    for finding, lines in _verdict_findings(ev):
        explained |= lines
        if named(finding, by_rule):
            continue
        ranked.append(("verdict", finding))
        by_verdict.add((finding.target, finding.cause))
    # Lines a rule or verdict quotes make a catalogue finding redundant; another catalogue
    # finding on the same line does not (a flattened line holds several messages, each its own
    # finding), except that a catch-all entry (a wrapper naming no reason) gives way on lines
    # an entry that reads the message also took.
    from aifabric.checks.diagnose.signatures import signature_by_id  # noqa: PLC0415

    signature_findings = _signature_findings(ev)
    by_id = signature_by_id()
    wrappers = {
        f.check for f, _ in signature_findings
        if (entry := by_id.get(f.check.removeprefix("signature."))) is not None
        and entry[0].catch_all
    }  # fmt: skip
    read: Quoted = set()
    for finding, lines in signature_findings:
        if finding.check not in wrappers:
            read |= lines
    for finding, lines in signature_findings:
        if lines <= explained or named(finding, by_rule | by_verdict):
            continue
        if finding.check in wrappers and lines <= read:
            continue
        ranked.append(("signature", finding))
    for _, lines in signature_findings:
        explained |= lines
    ranked += [("unrecognised", f) for f in _unrecognised(ev, explained)]
    ranked += [("advisory", f) for f in advisory_findings(ev, [f for _, f in ranked])]
    order = {"error": 0, "warning": 1, "info": 2}
    ranked.sort(
        key=lambda p: (
            order[p[1].severity], _KIND_ORDER[p[0]], -(p[1].confidence or 0), p[1].check,
            p[1].target,
        )
    )  # fmt: skip
    findings = apply_differentials([f for _, f in ranked], ev)
    hit = {f.target for f in findings if f.severity != "info"}
    healthy = sorted({ef.subject for ef in ev.files if ef.kind != TEXT_KIND} - hit)
    return Diagnosis(findings, ev, healthy)

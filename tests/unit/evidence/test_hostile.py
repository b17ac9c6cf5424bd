"""Hostile and huge input (issue 16): every regular expression that sees user input is
linear-time on any line, and every parser survives what an adversary or a broken script feeds it.

Two layers.

**Patterns.** Every module-level compiled pattern of ``aifabric.evidence.*``,
``aifabric.dialects.*`` and ``aifabric.checks.diagnose.*`` (also inside module-level tuples,
lists and dicts) and every signature-catalogue pattern is searched in lines built the way
regex-denial-of-service inputs are: a prefix of a string the pattern matches, then a long run
("pump") of what the pattern accepts next, then nothing or an unmatchable character. The
candidates are ranked at 1,000 characters (a quadratic pattern is already 10-100x slower than a
linear one there) and the slowest three are timed at :data:`PATTERN_LINE` characters against
:data:`PATTERN_BUDGET_S`. A linear pattern takes about a millisecond; a new pattern with nested
or adjacent quantifiers over overlapping classes, or a lazy group before ``\\s*``, takes seconds
and fails here with the line that shows it.

**Parsers.** For every evidence kind, hypothesis mangles its real captures
(``tests/fixtures/evidence/<kind>/``): a line grown to :data:`LONG_LINE` characters of the
characters its module's patterns use, deep ``[``/``{`` nesting, huge and non-finite numbers in
place of real ones (``nan``, ``inf``, ``1e999``, a 401-digit integer), truncated UTF-8, NUL bytes,
mixed line ends. Each input is parsed (and detected) through :func:`aifabric.evidence.parse_bytes`
and must finish within :data:`PARSE_BUDGET_S`, raise nothing but
:class:`~aifabric.errors.InputError`, and leave no non-finite float in a record.
"""

from __future__ import annotations

import ast
import gc
import importlib
import math
import pkgutil
import re
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aifabric.checks.diagnose as diagnose_pkg
import aifabric.dialects as dialects_pkg
import aifabric.evidence as evidence_pkg
from aifabric.checks.diagnose.signatures import all_catalogues
from aifabric.errors import InputError
from aifabric.evidence import all_kinds, parse_bytes, parse_text
from aifabric.evidence.base import MAX_LINE_CHARS, Record, cap_line_length
from tests.unit.evidence.fixtures import all_cases

_parser: Any = importlib.import_module("re._parser")

PATTERN_LINE = 20_000
"""Characters of the hostile line each pattern is timed on."""
EXPLORE_LINE = 1_000
"""Characters of the lines the candidates are ranked on."""
PATTERN_BUDGET_S = 0.25
"""Most seconds one search may take on a :data:`PATTERN_LINE`-character line."""
PARSE_BUDGET_S = 1.5
"""Most seconds one parse of a hostile input (a few tens of KB) may take."""
LONG_LINE = 20_000
"""Characters of the long line a parser input grows."""

PENDING: dict[str, str] = {}
"""Known slow patterns, by ``module.NAME``, skipped with a reason (empty: every pattern is
linear). An entry stops applying as soon as its pattern changes."""

PENDING_KINDS: frozenset[str] = frozenset()
"""Kinds whose parser still runs a :data:`PENDING` pattern (none): their hostile lines would be
:data:`PENDING_LONG_LINE` characters, not :data:`LONG_LINE`."""
PENDING_LONG_LINE = 2_000


# --------------------------------------------------------------------------------------------
# attack lines for one pattern

_CATEGORY = {
    "CATEGORY_DIGIT": (r"\d", "0"),
    "CATEGORY_NOT_DIGIT": (r"\D", "a"),
    "CATEGORY_SPACE": (r"\s", " \t"),
    "CATEGORY_NOT_SPACE": (r"\S", "x"),
    "CATEGORY_WORD": (r"\w", "a_"),
    "CATEGORY_NOT_WORD": (r"\W", "-"),
}
_PROBE = "a0 x_.-:/=,;#@~()[]{}<>|'\"+*?!$%&^`\\\tZ9AzG"
_BASE_PUMPS = (" ", "\t", "a", "0")

Piece = tuple[str, frozenset[str]]
"""A piece of an example match: its text and the characters its token accepts."""


def _in_set(items: Any, ch: str) -> bool:
    negate = hit = False
    for op, av in items:
        kind = str(op)
        if kind == "NEGATE":
            negate = True
        elif kind == "LITERAL":
            hit |= ord(ch) == av
        elif kind == "RANGE":
            hit |= av[0] <= ord(ch) <= av[1]
        elif kind == "CATEGORY" and str(av) in _CATEGORY:
            hit |= re.fullmatch(_CATEGORY[str(av)][0], ch) is not None
    return hit != negate


def _set_chars(items: Any) -> list[str]:
    """Up to four characters a ``[...]`` set accepts: its own literals first, then probes."""
    own: list[str] = []
    for op, av in items:
        kind = str(op)
        if kind == "LITERAL":
            own.append(chr(av))
        elif kind == "RANGE":
            own += [chr(av[0]), chr(av[1])]
        elif kind == "CATEGORY":
            own += list(_CATEGORY.get(str(av), ("", ""))[1])
    seen: list[str] = []
    for c in [*own, *_PROBE]:
        if c not in seen and _in_set(items, c):
            seen.append(c)
    return seen[:4]


def _examples(items: Any, paths: int) -> list[list[Piece]]:
    """Up to ``paths`` example matches of a parsed pattern, as pieces (one per token); a
    repetition contributes a zero-width piece carrying what it accepts, so a pump can go there."""
    seqs: list[list[Piece]] = [[]]

    def add(alternatives: list[list[Piece]]) -> None:
        nonlocal seqs
        seqs = [s + a for s in seqs for a in alternatives][:paths]

    for op, av in items:
        kind = str(op)
        if kind == "LITERAL":
            add([[(chr(av), frozenset(chr(av)))]])
        elif kind == "NOT_LITERAL":
            ch = "b" if chr(av) == "a" else "a"
            add([[(ch, frozenset(ch))]])
        elif kind == "ANY":
            add([[("a", frozenset("a"))]])
        elif kind == "IN":
            cs = _set_chars(av) or ["a"]
            add([[(cs[0], frozenset(cs))]])
        elif kind in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, _hi, sub = av
            subs = _examples(sub, paths)
            chars = frozenset(c for x in subs for p in x for c in p[1])
            alternatives = [[("", chars), *(x * max(lo, 1))] for x in subs[:2]]
            if not lo:
                alternatives.append([("", chars)])
            add(alternatives)
        elif kind == "SUBPATTERN":
            add(_examples(av[3], paths))
        elif kind == "ATOMIC_GROUP":
            add(_examples(av, paths))
        elif kind == "BRANCH":
            add([x for branch in av[1] for x in _examples(branch, paths)])
    return seqs


def attack_lines(rx: re.Pattern[str], n: int, paths: int = 4, cuts: int = 32) -> list[str]:
    """Lines of about ``n`` characters: a prefix of an example match, a long run of what the
    pattern accepts next (single characters, or the next two to four pieces of the example),
    then nothing or an unmatchable ``\\x01``. Deterministic: the same list, in the same order,
    for every ``n``."""
    seqs = _examples(_parser.parse(rx.pattern, rx.flags), paths)
    pumps_at: dict[str, set[str]] = {}
    for seq in seqs:
        for i in range(len(seq) + 1):
            prefix = "".join(p[0] for p in seq[:i])
            pumps = pumps_at.setdefault(prefix, set(_BASE_PUMPS))
            for piece in seq[i : i + 3]:
                pumps.update(c for c in piece[1] if c.isprintable() or c == "\t")
            for k in (2, 3, 4):
                word = "".join(p[0] for p in seq[i : i + k])
                if len(word) >= 2:
                    pumps.add(word)
    prefixes = sorted(pumps_at)
    if len(prefixes) > cuts:
        step = len(prefixes) / cuts
        prefixes = [prefixes[int(i * step)] for i in range(cuts)]
    lines = []
    for prefix in prefixes:
        for pump in sorted(pumps_at[prefix]):
            run = pump * max(1, (n - len(prefix)) // len(pump))
            lines += [prefix + run + "\x01", prefix + run]
    return lines


def _time_search(rx: re.Pattern[str], line: str, how: str = "search") -> float:
    gc_was = gc.isenabled()
    gc.disable()
    try:
        t = time.perf_counter()
        getattr(rx, how)(line)
        return time.perf_counter() - t
    finally:
        if gc_was:
            gc.enable()


@dataclass(frozen=True)
class Worst:
    seconds: float
    line: str


def worst_case(rx: re.Pattern[str], n: int = PATTERN_LINE, how: str = "search") -> Worst:
    """The slowest ``how`` (search, match, fullmatch) of ``rx`` among its attack lines of ``n``
    characters (the three slowest at :data:`EXPLORE_LINE` characters, timed again when slow)."""
    short = attack_lines(rx, EXPLORE_LINE)
    ranked = sorted(range(len(short)), key=lambda i: -_time_search(rx, short[i], how))[:3]
    long = attack_lines(rx, n)
    worst = Worst(0.0, "")
    for i in ranked:
        t = _time_search(rx, long[i], how)
        if t >= PATTERN_BUDGET_S / 2:
            t = min(t, _time_search(rx, long[i], how))  # once more, against a noisy neighbour
        if t > worst.seconds:
            worst = Worst(t, long[i])
    return worst


# --------------------------------------------------------------------------------------------
# the patterns


def _patterns_in(value: Any, depth: int = 0) -> Iterator[re.Pattern[str]]:
    if isinstance(value, re.Pattern):
        if isinstance(value.pattern, str):
            yield value
    elif depth < 2 and isinstance(value, (tuple, list, set, frozenset)):
        for item in value:
            yield from _patterns_in(item, depth + 1)
    elif depth < 2 and isinstance(value, dict):
        for item in value.values():
            yield from _patterns_in(item, depth + 1)


def _modules() -> Iterator[ModuleType]:
    for pkg in (evidence_pkg, dialects_pkg, diagnose_pkg):
        yield pkg
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            yield importlib.import_module(info.name)


def module_patterns() -> dict[str, re.Pattern[str]]:
    """Every module-level pattern, by ``module.NAME`` (``[i]`` inside a container), first
    definition wins when a module re-exports another's."""
    out: dict[str, re.Pattern[str]] = {}
    seen: set[tuple[str, int]] = set()
    for mod in _modules():
        short = mod.__name__.rsplit(".", 1)[-1]
        for name, value in vars(mod).items():
            found = list(_patterns_in(value))
            for i, rx in enumerate(found):
                if (rx.pattern, rx.flags) in seen:
                    continue
                seen.add((rx.pattern, rx.flags))
                index = "" if isinstance(value, re.Pattern) else f"[{i}]"
                out[f"{short}.{name}{index}"] = rx
    return out


_RE_CALLS = {
    "search": "search",
    "match": "match",
    "fullmatch": "fullmatch",
    "sub": "search",
    "subn": "search",
    "findall": "search",
    "finditer": "search",
    "split": "search",
    "compile": "search",
}
_FLAG_NAMES = {"I": re.I, "IGNORECASE": re.I, "M": re.M, "MULTILINE": re.M, "S": re.S}
_FLAG_NAMES |= {"DOTALL": re.S, "X": re.X, "VERBOSE": re.X, "A": re.A, "ASCII": re.A}
_NOT_USER_INPUT = {"signatures"}
"""Modules whose inline patterns read catalogue patterns, not captures."""


def _flags(node: ast.expr | None) -> int:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return _FLAG_NAMES.get(node.attr, 0) if node.value.id == "re" else 0
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _flags(node.left) | _flags(node.right)
    return 0


def inline_patterns() -> dict[str, tuple[re.Pattern[str], str]]:
    """Patterns written inline (``re.search(r"...", text)`` in a function), by ``module:line``,
    with how they are applied (a ``re.match`` only at the start); module-level ones excepted."""
    known = {(rx.pattern, rx.flags) for rx in MODULE_PATTERNS.values()}
    flag_arg = {"compile": 1, "split": 3, "sub": 4, "subn": 4}
    out: dict[str, tuple[re.Pattern[str], str]] = {}
    for mod in _modules():
        path = getattr(mod, "__file__", None)
        short = mod.__name__.rsplit(".", 1)[-1]
        if path is None or short in _NOT_USER_INPUT:
            continue
        for node in ast.walk(ast.parse(Path(path).read_text("utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.func.attr in _RE_CALLS
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                continue
            call = node.func.attr
            pos = flag_arg.get(call, 2)
            flag_node = node.args[pos] if len(node.args) > pos else None
            for kw in node.keywords:
                if kw.arg == "flags":
                    flag_node = kw.value
            rx = re.compile(node.args[0].value, _flags(flag_node))
            if (rx.pattern, rx.flags) not in known:
                out[f"{short}:{node.lineno}"] = (rx, _RE_CALLS[call])
    return out


def catalogue_patterns() -> dict[str, re.Pattern[str]]:
    """Every signature-catalogue pattern, by entry id."""
    return {sig.id: sig.regex() for cat in all_catalogues() for sig in cat.entries}


MODULE_PATTERNS = module_patterns()
INLINE_PATTERNS = inline_patterns()
CATALOGUE_PATTERNS = catalogue_patterns()


def _assert_linear(name: str, rx: re.Pattern[str], how: str = "search") -> None:
    w = worst_case(rx, how=how)
    assert w.seconds < PATTERN_BUDGET_S, (
        f"{name} took {w.seconds:.2f} s to search a {len(w.line):,}-character line "
        f"{w.line[:40]!r}...{w.line[-12:]!r}: not linear-time. Anchor it, start it only at the "
        "beginning of a run ((?<![class])), give adjacent quantifiers disjoint classes, or make "
        f"them possessive/atomic. Pattern: {rx.pattern}"
    )


def test_the_walk_finds_the_patterns_it_must() -> None:
    """The walk sees module patterns, patterns in tuples, and the catalogue."""
    names = set(MODULE_PATTERNS)
    assert {"base._ANSI_RE", "ethtool_module._KV_RE", "engine._ERRORISH"} <= names
    assert any(n.startswith("paste._PROMPTS[") for n in names)
    assert len(MODULE_PATTERNS) > 300
    assert len(CATALOGUE_PATTERNS) > 500
    assert any(n.startswith("nvue:") for n in INLINE_PATTERNS)


def test_the_check_catches_a_quadratic_pattern() -> None:
    """The method works: the lazy-key pattern this issue replaced is slow on its attack line,
    and its linear rewrite is not."""
    slow = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?)\s*:\s*(.*?)\s*$")
    fast = re.compile(r"^\s*([A-Za-z](?:[A-Za-z ]*[A-Za-z])?)\s*:\s*+((?:.*\S)?)\s*$")
    slow_case, fast_case = worst_case(slow, n=6_000), worst_case(fast, n=6_000)
    assert slow_case.seconds > 0.02  # about 0.1 s: the 20,000-character line takes 11x that
    assert slow_case.seconds > 20 * fast_case.seconds


@pytest.mark.parametrize("name", sorted(MODULE_PATTERNS))
def test_module_pattern_is_linear(name: str) -> None:
    rx = MODULE_PATTERNS[name]
    if PENDING.get(name) == rx.pattern:
        pytest.skip("known slow pattern, listed in PENDING")
    _assert_linear(name, rx)


@pytest.mark.parametrize("name", sorted(INLINE_PATTERNS))
def test_inline_pattern_is_linear(name: str) -> None:
    rx, how = INLINE_PATTERNS[name]
    _assert_linear(name, rx, how)


@pytest.mark.parametrize("sig_id", sorted(CATALOGUE_PATTERNS))
def test_catalogue_pattern_is_linear(sig_id: str) -> None:
    _assert_linear(sig_id, CATALOGUE_PATTERNS[sig_id])


# --------------------------------------------------------------------------------------------
# the line-length cap


def test_long_lines_are_cut_with_one_warning_naming_them() -> None:
    long_a, long_b = "a" * (MAX_LINE_CHARS + 10), "b" * (3 * MAX_LINE_CHARS)
    text = f"NIC statistics:\n     rx_packets: 5\n{long_a}\n     tx_packets: 7\n{long_b}\n"
    result = parse_text(text, "ethtool-stats")
    first = result.warnings[0]
    assert first.line == 3
    assert "2 line(s) cut before parsing (to their first 65,536 characters" in first.message
    assert f"line 3 ({len(long_a):,} characters)" in first.message
    assert f"line 5 ({len(long_b):,} characters)" in first.message
    assert sum("cut before parsing" in w.message for w in result.warnings) == 1
    stats = result.records[0]
    assert stats.counters == {"rx_packets": 5, "tx_packets": 7}


def test_cut_keeps_short_lines_and_line_ends() -> None:
    body = "x" * 5
    text = f"{body}\r\n{'y' * 12}\x0c{body}\n{'z' * 11}"
    capped, cut = cap_line_length(text, limit=10)
    assert capped == f"{body}\r\n{'y' * 10}\x0c{body}\n{'z' * 10}"
    assert cut == [(2, 12, 10), (4, 11, 10)]  # numbered as str.splitlines() numbers them
    assert cap_line_length("short\n" * 100, limit=10) == ("short\n" * 100, [])


def test_a_json_document_is_not_cut() -> None:
    """Minified JSON (``ip -j``, ``rdma -j``) is one long line that must stay whole."""
    one_line = "[" + ",".join(f'{{"ifname":"eth{i}","mtu":9000}}' for i in range(4000)) + "]"
    assert len(one_line) > MAX_LINE_CHARS
    result = parse_text(one_line, "ip-link")
    assert not any("cut before parsing" in w.message for w in result.warnings)
    assert len(result.records) == 4000


# --------------------------------------------------------------------------------------------
# non-finite and overflowing numbers


@pytest.mark.parametrize("size", ["nan", "inf", "-inf", "1e999", "1e400"])
def test_perftest_row_with_a_non_finite_size_is_one_warning(size: str) -> None:
    """The case of issue 16: ``nan``/``inf``/``1e999`` in the size column raised ValueError."""
    text = (
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
        " 65536      5000           97.50              97.48                0.185920\n"
        f" {size}      5000           97.60              97.58                0.186100\n"
        "---------------------------------------------------------------------------------------\n"
    )
    result = parse_text(text, "perftest")
    rows = [r for r in result.records if type(r).__name__ == "PerftestBwRow"]
    assert [r.size_bytes for r in rows] == [65536]
    (warning,) = [w for w in result.warnings if w.line == 3]
    assert "non-finite" in warning.message
    assert size[:20] in warning.text


def test_a_record_with_an_overflowing_number_is_dropped_with_its_line_quoted() -> None:
    """A sequence number beyond 64 bits (10**30) is no measurement: the reply is rejected."""
    text = (
        "PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n"
        "64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.045 ms\n"
        f"64 bytes from 10.0.0.2: icmp_seq={10**30} ttl=64 time=0.047 ms\n"
    )
    result = parse_text(text, "ping")
    replies = [r for r in result.records if type(r).__name__ == "PingReply"]
    assert [r.seq for r in replies] == [1]
    (warning,) = [w for w in result.warnings if w.line == 3]
    assert "out-of-range" in warning.message
    assert warning.text.startswith("64 bytes from 10.0.0.2: icmp_seq=1000000")


def test_a_number_of_thousands_of_digits_cuts_its_line() -> None:
    """``int()`` refuses more than 4,300 digits: such a line is cut before the number."""
    text = f"NIC statistics:\n     rx_packets: 5\n     tx_packets: {'9' * 5000}\n"
    result = parse_text(text, "ethtool-stats")
    assert result.records[0].counters == {"rx_packets": 5}
    assert "a number of over 300 digits at character 18" in result.warnings[0].message


def test_a_counter_beyond_64_bits_is_an_unreadable_line() -> None:
    text = f"NIC statistics:\n     rx_packets: 5\n     tx_packets: {'9' * 25}\n"
    result = parse_text(text, "ethtool-stats")
    assert result.records[0].counters == {"rx_packets": 5}
    assert [w.line for w in result.warnings] == [3]


# --------------------------------------------------------------------------------------------
# parsers on hostile input

_FIXTURES: dict[str, list[str]] = {}
for _case in all_cases():
    _FIXTURES.setdefault(_case.kind, []).append(_case.path.read_text("utf-8", errors="replace"))

_HOSTILE_NUMBERS = (
    "nan",
    "-nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "1e999",
    "-1e999",
    "1e-999",
    "1" + "0" * 400,
    "0x" + "f" * 64,
    "18446744073709551616",
    "-0",
    "1.7976931348623157e309",
)
_NUMBER_RE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_OPENERS = ("[", "{", '{"a":', '{"a":[', "[{", "(", "<")
_ENDINGS = ("\n", "\r\n", "\r")


def _kind_pumps(kind: str) -> list[str]:
    """Characters and short literal runs the patterns of ``kind``'s module use."""
    module = importlib.import_module(all_kinds()[kind].module)
    pumps: set[str] = set(_BASE_PUMPS)
    for value in vars(module).values():
        for rx in _patterns_in(value):
            for seq in _examples(_parser.parse(rx.pattern, rx.flags), 2):
                for _text, chars in seq:
                    pumps.update(c for c in chars if c.isprintable())
                words = "".join(p[0] for p in seq)
                pumps.update(words[i : i + 3] for i in range(0, len(words) - 2, 5))
    return sorted(pumps)


_PUMPS = {kind: _kind_pumps(kind) for kind in all_kinds()}


@st.composite
def hostile_input(draw: st.DrawFn, kind: str) -> bytes:
    """A real capture of ``kind`` with one hostile change."""
    text = draw(st.sampled_from(_FIXTURES.get(kind) or [""]))
    lines = text.splitlines() or [""]
    i = draw(st.integers(0, len(lines) - 1))
    how = draw(st.sampled_from(("long", "long", "nest", "number", "number", "bytes", "ends")))
    if how == "long":
        line = lines[i]
        cut = draw(st.integers(0, len(line)))
        pump = draw(st.sampled_from(_PUMPS[kind]))
        size = PENDING_LONG_LINE if kind in PENDING_KINDS else LONG_LINE
        tail = draw(st.sampled_from(("", "\x01", line[cut:])))
        lines[i] = line[:cut] + pump * (size // len(pump)) + tail
    elif how == "nest":
        opener = draw(st.sampled_from(_OPENERS))
        depth = draw(st.sampled_from((500, 5_000, 20_000)))
        nested = opener * depth
        if draw(st.booleans()):
            lines = [nested]  # the whole input
        else:
            lines[i] = nested
    elif how == "number":
        for _ in range(draw(st.integers(1, 4))):
            j = draw(st.integers(0, len(lines) - 1))
            numbers = list(_NUMBER_RE.finditer(lines[j]))
            if numbers:
                m = numbers[draw(st.integers(0, len(numbers) - 1))]
                hostile = draw(st.sampled_from(_HOSTILE_NUMBERS))
                lines[j] = lines[j][: m.start()] + hostile + lines[j][m.end() :]
    elif how == "ends":
        ends = draw(st.lists(st.sampled_from(_ENDINGS), min_size=1, max_size=len(lines)))
        return "".join(line + ends[k % len(ends)] for k, line in enumerate(lines)).encode("utf-8")
    data = "\n".join(lines).encode("utf-8")
    if how == "bytes":
        at = draw(st.integers(0, len(data)))
        bad = draw(st.sampled_from((b"\xe2\x82", b"\xf0\x9f\x98", b"\x00", b"\xff\xfe", b"\xc3")))
        data = data[:at] + bad + (data[at:] if draw(st.booleans()) else b"")
    return data


class _Hang(Exception):
    pass


def _alarm(_sig: int, _frame: FrameType | None) -> None:
    raise _Hang


def _non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_non_finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_non_finite(v) for v in value)
    return False


def parse_within_budget(data: bytes, kind: str | None) -> None:
    """Parse ``data``: within the budget, no exception but InputError, finite numbers only."""
    old: Callable[..., Any] | int | None = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, 30 * PARSE_BUDGET_S)  # a hang fails, not blocks
    t = time.perf_counter()
    try:
        result = parse_bytes(data, kind, "<hostile>")
    except InputError:
        result = None
    except _Hang:
        pytest.fail(f"{kind}: parse still running after {30 * PARSE_BUDGET_S:.0f} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    elapsed = time.perf_counter() - t
    assert elapsed < PARSE_BUDGET_S, f"{kind}: {elapsed:.2f} s for {len(data):,} bytes"
    if result is None:
        return
    for rec in result.records:
        assert isinstance(rec, Record)
        bad = {
            f: getattr(rec, f)
            for f in getattr(rec, "__dataclass_fields__", {})
            if _non_finite(getattr(rec, f))
        }
        assert not bad, f"{kind}: non-finite value in a {type(rec).__name__} record: {bad}"
    result.to_json()


_HOSTILE = settings(
    max_examples=10,  # a CI budget; 1,500 a kind finds nothing more (issue 16)
    derandomize=True,  # the same inputs every run: a failure here is never a fluke
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("kind", sorted(all_kinds()))
@_HOSTILE
@given(data=st.data())
def test_parser_survives_hostile_input(kind: str, data: st.DataObject) -> None:
    parse_within_budget(data.draw(hostile_input(kind)), kind)


@_HOSTILE
@given(data=st.data())
def test_detection_survives_hostile_input(data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(sorted(all_kinds())))
    parse_within_budget(data.draw(hostile_input(kind)), None)

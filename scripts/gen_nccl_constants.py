"""Generate ``src/aifabric/perf/data/nccl.yaml`` from NCCL's own source at every release tag.

For every tag ``v2.18.x-1`` .. ``v2.30.x-1`` of a clone of https://github.com/NVIDIA/nccl this
reads, with ``git show TAG:PATH``, the files the performance model of ``aifabric.perf`` takes
its constants from, and parses the C initialisers and ``#define`` s:

* ``src/graph/tuning.cc``: ``baseLat``/``baseLatencies``, ``hwLat``/``hwLatencies``,
  ``llMaxBws``, ``perChMaxRingLL128Bws``, ``perChMaxTreeLL128Bws`` (or the single
  ``ll128MaxBwPerCh`` of v2.18.1), ``perChMaxTreeBws``, ``perChMaxNVLSTreeBws``,
  ``nvlsEfficiency``, ``treeCorrectionFactor``, ``getNetOverhead``, the ``compCapIndex``
  expression, and the literal factors of ``ncclTopoTuneModel`` / ``ncclTopoGetAlgoTime`` (ring LL
  and LL128 factors, PAT factor, NVLS bus→algorithm ratio, the ring plateau);
* ``src/graph/search.cc``: the graph search's speed arrays and which one each GPU generation
  gets (the ``speedArray = ccMin >= ...`` expressions);
* ``src/init.cc``: the ring graph's channel ceiling (``ringGraph.maxChannels = MAXCHANNELS/2``);
* the headers defining ``MAXCHANNELS``, ``NCCL_ALGO_*``, ``NCCL_PROTO_*``, ``NCCL_HW_*`` and the
  compute-capability indexes (``devcomm.h``, ``device.h``, ``nccl_common.h`` or
  ``plugin/nccl_tuner.h`` depending on the release; found with ``git grep``).

Every value must be found at every tag: a field that cannot be located or parsed stops the run
with the tag, file and field named (no value is ever guessed or taken from another release).
Fields a release does not have are represented as NCCL itself behaves and listed under
``absent`` in the entry (see ``ABSENT`` notes below). Consecutive patch tags of one minor whose
values are identical share one entry (named ``2.21``; ``2.18.1`` and ``2.18.6`` when patches of a
minor differ).

Usage::

    python scripts/gen_nccl_constants.py --repo PATH/TO/nccl          # rewrite the data file
    python scripts/gen_nccl_constants.py --repo PATH/TO/nccl --check  # exit 1 if it is stale
    python scripts/gen_nccl_constants.py --repo PATH/TO/nccl --tag v2.23.4-1   # print one tag

``--repo`` defaults to ``$AIFABRIC_NCCL_REPO``; a bare clone (``git clone --bare``) works.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "aifabric" / "perf" / "data" / "nccl.yaml"
MINORS = range(18, 31)  # the supported range: 2.18 .. 2.30
TAG_RE = re.compile(r"^v2\.(\d+)\.(\d+)-1$")

TUNING = "src/graph/tuning.cc"
SEARCH = "src/graph/search.cc"
INIT = "src/init.cc"

ARCHS = ("volta", "ampere", "hopper", "blackwell")
ARCH_CC = {"volta": 70, "ampere": 80, "hopper": 90, "blackwell": 100}
"""The compute capability (×10, as NCCL's minCompCap/ccMin) evaluated for each row name."""
ALGOS = ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat")
HWS = ("nvlink", "pci", "net")
PROTOS = ("LL", "LL128", "SIMPLE")


class SourceError(RuntimeError):
    """A field could not be found or parsed at a tag: the source changed shape; fix the parser."""


# ----------------------------------------------------------------------------- git access


@dataclass
class Source:
    """The files of one tag, read lazily through ``git show`` and remembered."""

    repo: Path
    tag: str
    read: dict[str, str]

    def text(self, path: str) -> str:
        if path not in self.read:
            proc = subprocess.run(
                ["git", "-C", str(self.repo), "show", f"{self.tag}:{path}"],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                raise SourceError(f"{self.tag}: cannot read {path}: {proc.stderr.strip()}")
            self.read[path] = proc.stdout
        return self.read[path]

    def commit(self) -> str:
        return _git(self.repo, "rev-parse", f"{self.tag}^{{commit}}").strip()

    def defines(self, names: str) -> dict[str, tuple[str, str]]:
        """``{macro: (value text, file)}`` for ``#define`` s under ``src/`` matching ``names``
        (a regex); a macro defined twice with different values is an error."""
        out = _git(
            self.repo,
            "grep",
            "-n",
            "-E",
            rf"^[[:space:]]*#[[:space:]]*define[[:space:]]+({names})([[:space:]]|$)",
            self.tag,
            "--",
            "src",
            ok_codes=(0, 1),
        )
        found: dict[str, tuple[str, str]] = {}
        for line in out.splitlines():
            # TAG:path:line:text
            if not line.startswith(self.tag + ":"):
                raise SourceError(f"unexpected git grep line {line!r}")
            path, _, text = line[len(self.tag) + 1 :].split(":", 2)
            m = re.match(r"\s*#\s*define\s+(\w+)\s*(.*)$", text)
            if not m:
                continue
            value = _strip_comments(m.group(2)).strip()
            name = m.group(1)
            if name in found and found[name][0] != value:
                raise SourceError(f"{self.tag}: {name} defined twice ({found[name]}, {value!r})")
            found.setdefault(name, (value, path))
        return found


def _git(repo: Path, *args: str, ok_codes: Sequence[int] = (0,)) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    if proc.returncode not in ok_codes:
        raise SourceError(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


def release_tags(repo: Path) -> list[str]:
    """Every ``v2.MINOR.PATCH-1`` tag of the supported range, oldest first."""
    tags = []
    for t in _git(repo, "tag").split():
        m = TAG_RE.match(t)
        if m and int(m.group(1)) in MINORS:
            tags.append(t)
    return sorted(tags, key=version_key)


def version_key(tag: str) -> tuple[int, ...]:
    m = TAG_RE.match(tag)
    if not m:
        raise ValueError(tag)
    return (2, int(m.group(1)), int(m.group(2)))


# ------------------------------------------------------------------------------- C parsing


def _strip_comments(text: str) -> str:
    """Blank out ``//`` and ``/* */`` comments (same length, newlines kept, so offsets hold);
    string and character literals are left alone."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out[i:j] = " " * (j - i)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out[i:j] = [ch if ch == "\n" else " " for ch in text[i:j]]
            i = j
        else:
            i += 1
    return "".join(out)


def _balanced(text: str, start: int, open_: str = "{", close: str = "}") -> str:
    """The text between the bracket at ``start`` and its match (exclusive)."""
    if text[start] != open_:
        raise SourceError(f"expected {open_!r} at offset {start}")
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return text[start + 1 : i]
    raise SourceError(f"unbalanced {open_!r} from offset {start}")


_NUM_SUFFIX = re.compile(r"(?<=[0-9.])[fF]\b")


def _number(expr: str, names: dict[str, float] | None = None) -> float:
    """Evaluate a constant C arithmetic expression (``2*141.0``, ``.6``, ``0.85f``,
    ``MAXCHANNELS / 2`` with ``names``)."""
    src = _NUM_SUFFIX.sub("", " ".join(expr.split()))
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError as e:
        raise SourceError(f"not a constant expression: {expr!r}") from e

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.Name) and names is not None and node.id in names:
            return names[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp):
            ops: dict[type, Callable[[float, float], float]] = {
                ast.Add: lambda a, b: a + b,
                ast.Sub: lambda a, b: a - b,
                ast.Mult: lambda a, b: a * b,
                ast.Div: lambda a, b: a / b,
            }
            op = ops.get(type(node.op))
            if op is not None:
                return op(ev(node.left), ev(node.right))
        raise SourceError(f"not a constant expression: {expr!r}")

    return ev(tree)


def _initializer_list(body: str) -> Any:
    """``{ {1, 2}, {3, 4}, }`` (already without the outer braces) as nested lists of floats."""
    out: list[Any] = []
    i, n, item = 0, len(body), ""
    while i < n:
        c = body[i]
        if c == "{":
            inner = _balanced(body, i)
            out.append(_initializer_list(inner))
            i += len(inner) + 2
            item = ""
            continue
        if c == ",":
            if item.strip():
                out.append(_number(item))
            item = ""
        else:
            item += c
        i += 1
    if item.strip():
        out.append(_number(item))
    return out


def find_array(text: str, names: Sequence[str], what: str) -> Any | None:
    """The initialiser of the table called one of ``names``, in any of the forms NCCL used:
    ``static const float baseLat [..][..] = {``, ``.baseLatencies = {`` (designated, 2.28-2.29)
    or ``// baseLatencies`` followed by ``{`` (positional, 2.30). ``None`` when absent; two
    definitions are an error."""
    clean = _strip_comments(text)
    alt = "|".join(re.escape(n) for n in names)
    starts: list[int] = []
    decl = re.compile(
        rf"\b(?:static\s+)?(?:const\s+)?(?:float|double)\s+(?:{alt})\s*(?:\[[^\]]*\]\s*)*=\s*\{{"
    )
    starts += [m.end() - 1 for m in decl.finditer(clean)]
    starts += [m.end() - 1 for m in re.finditer(rf"\.(?:{alt})\s*=\s*\{{", clean)]
    for m in re.finditer(rf"//[ \t]*(?:{alt})[ \t]*\n\s*\{{", text):
        starts.append(m.end() - 1)
    if not starts:
        return None
    if len(set(starts)) > 1:
        raise SourceError(f"{what}: {len(starts)} definitions of {'/'.join(names)}")
    return _initializer_list(_balanced(clean, starts[0]))


def _ternary(expr: str, var: str, value: int, names: dict[str, str]) -> str:
    """Evaluate ``var >= 100 ? A : (var >= 90 ? B : C)`` for ``var = value``; the chosen leaf is
    an identifier, resolved through ``names`` (macros) when it is one."""
    tokens = re.findall(r"\w+|>=|<=|==|[<>?:()]", expr)
    pos = 0

    def peek() -> str:
        return tokens[pos] if pos < len(tokens) else ""

    def take(expected: str | None = None) -> str:
        nonlocal pos
        tok = peek()
        if not tok or (expected is not None and tok != expected):
            raise SourceError(f"cannot read {expr!r} (at {tok!r})")
        pos += 1
        return tok

    def parse() -> str:
        if peek() == "(":
            take("(")
            leaf = parse()
            take(")")
            return leaf
        if peek() == var:
            take()
            op, bound = take(), int(take())
            holds = {
                ">=": value >= bound,
                ">": value > bound,
                "<=": value <= bound,
                "<": value < bound,
                "==": value == bound,
            }
            if op not in holds:
                raise SourceError(f"cannot read {expr!r}")
            take("?")
            yes = parse()
            take(":")
            no = parse()
            return yes if holds[op] else no
        return take()

    leaf = parse()
    if pos != len(tokens):
        raise SourceError(f"cannot read {expr!r}")
    return names.get(leaf, leaf)


def _statement(clean: str, pattern: str, what: str) -> re.Match[str]:
    flat = " ".join(clean.split())
    found = list(re.finditer(pattern, flat))
    if len(found) != 1:
        raise SourceError(f"{what}: {len(found)} matches of {pattern!r}")
    return found[0]


def _call_args(flat: str, start: int) -> list[str]:
    """Top-level arguments of the call whose ``(`` is at ``start``."""
    inner = _balanced(flat, start, "(", ")")
    args, depth, cur = [], 0, ""
    for c in inner:
        depth += c == "("
        depth -= c == ")"
        if c == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += c
    args.append(cur.strip())
    return args


def _unparen(s: str) -> str:
    s = s.strip()
    while s.startswith("(") and _balanced(s, 0, "(", ")") == s[1:-1]:
        s = s[1:-1].strip()
    return s


# ----------------------------------------------------------------------------- the fields


ABSENT = {
    "pat": "no PAT algorithm at this tag (NCCL_ALGO_PAT undefined): its latency rows are 0 and "
    "pat_factor is 0, so PAT never has bandwidth",
    "pat_rows": "the latency tables have no PAT row; C zero-fills it (the PAT latency formula "
    "uses a literal base time, recorded in base_latency_us.pat)",
    "nvls_efficiency": "no nvlsEfficiency table (added in 2.28): NVLS bandwidth was "
    "nChannels*min(bwIntra, bwInter) times a fixed bus-to-algorithm ratio, recorded in "
    "nvls_algbw_ratio; 0 here means the efficiency formula does not apply",
    "per_ch_max_nvls_tree_bw_GBps": "no perChMaxNVLSTreeBws table (added in 2.28): NVLSTree "
    "bandwidth had no per-channel cap, recorded as .inf",
    "ll128": "one per-channel LL128 cap per GPU generation (ll128MaxBwPerCh) for Ring and Tree "
    "and every node count: recorded in both per_ch_max_*_ll128 tables, the same in all columns",
}


def _algorithms(src: Source) -> tuple[list[str], list[str]]:
    defs = src.defines(r"NCCL_ALGO_[A-Z_]+|NCCL_PROTO_[A-Z0-9_]+|NCCL_HW_[A-Z]+")
    algos: dict[int, str] = {}
    for name, (value, _) in defs.items():
        if name.startswith("NCCL_ALGO_") and re.fullmatch(r"\d+", value):
            algos[int(value)] = name[len("NCCL_ALGO_") :].lower()
    order = [algos[i] for i in sorted(algos)]
    if sorted(algos) != list(range(len(algos))) or order != list(ALGOS[: len(order)]):
        raise SourceError(f"{src.tag}: unexpected algorithm indexes {algos}")
    for i, p in enumerate(PROTOS):
        if defs.get(f"NCCL_PROTO_{p}", ("", ""))[0] != str(i):
            raise SourceError(f"{src.tag}: NCCL_PROTO_{p} is not {i}")
    for i, h in enumerate(HWS):
        if defs.get(f"NCCL_HW_{h.upper()}", ("", ""))[0] != str(i):
            raise SourceError(f"{src.tag}: NCCL_HW_{h.upper()} is not {i}")
    files = sorted({f for n, (_, f) in defs.items() if n.startswith(("NCCL_ALGO_", "NCCL_PRO"))})
    return order, files


def _compcap_index(src: Source, tuning: str) -> tuple[dict[str, int], list[str]]:
    defs = src.defines(r"(NCCL_)?[A-Z]+_COMPCAP_IDX")
    m = _statement(_strip_comments(tuning), r"int compCapIndex = ([^;]+);", "compCapIndex")
    names = {k: v for k, (v, _) in defs.items()}
    index = {a: int(_ternary(m.group(1), "minCompCap", ARCH_CC[a], names)) for a in ARCHS}
    return index, sorted({f for _, f in defs.values()})


def _rows(table: Any, index: dict[str, int], width: int, what: str) -> list[list[float]]:
    """The rows of a compCapIndex-indexed table NCCL can read (0 .. the highest index used)."""
    need = max(index.values()) + 1
    if not isinstance(table, list) or len(table) < need:
        raise SourceError(f"{what}: {len(table)} rows, compCapIndex reaches {need - 1}")
    rows = table[:need]
    for r in rows:
        if not isinstance(r, list) or len(r) != width:
            raise SourceError(f"{what}: row {r} is not {width} wide")
    return [[float(x) for x in r] for r in rows]


def _by_algo(table: Any, algos: list[str], what: str, absent: dict[str, str]) -> dict[str, Any]:
    """``[algo][proto]`` rows keyed by algorithm name: rows beyond the initialiser are C's zero
    fill; algorithms the release lacks are zero too (see ``absent``)."""
    if not isinstance(table, list) or len(table) > len(algos):
        raise SourceError(f"{what}: {len(table)} rows for {len(algos)} algorithms")
    out: dict[str, Any] = {}
    for i, algo in enumerate(ALGOS):
        if i < len(table):
            row = table[i]
            if len(row) != 3:
                raise SourceError(f"{what}: row {row} is not 3 wide")
            out[algo] = [float(x) for x in row]
        else:
            out[algo] = [0.0, 0.0, 0.0]
            if algo in algos:
                absent.setdefault("pat_rows", ABSENT["pat_rows"])
    return out


def _ring_ll_factor(flat: str, tag: str) -> list[float]:
    m = re.search(r"a == NCCL_ALGO_RING && p == NCCL_PROTO_LL\) \{? ?busBw = std::min\(", flat)
    if not m:
        raise SourceError(f"{tag}: ring LL bandwidth refinement not found")
    args = _call_args(flat, m.end() - 1)
    if len(args) != 2 or args[0] != "llMaxBw" or not args[1].startswith("busBw *"):
        raise SourceError(f"{tag}: ring LL refinement {args}")
    factor = _unparen(args[1][len("busBw *") :])
    cond = re.fullmatch(
        r"\(nNodes > 1 \|\| coll == ncclFuncAllReduce \|\| coll == ncclFuncReduce\) \? (.+) : (.+)",
        factor,
    )
    if cond:
        return [_number(cond.group(1)), _number(cond.group(2))]
    return [_number(factor)] * 2


def _ring_ll128_factor(flat: str, tag: str) -> tuple[float, float]:
    m = re.search(r"a == NCCL_ALGO_RING && p == NCCL_PROTO_LL128\) ?\{? ?busBw = std::min\(", flat)
    if not m:
        raise SourceError(f"{tag}: ring LL128 bandwidth refinement not found")
    first = _call_args(flat, m.end() - 1)[0]
    if not first.startswith("busBw *"):
        raise SourceError(f"{tag}: ring LL128 refinement {first!r}")
    factor = _unparen(first[len("busBw *") :])
    cond = re.fullmatch(r"ppn < 2 \? (.+) : (.+)", factor)
    if cond:
        return _number(cond.group(2)), _number(cond.group(1))
    value = _number(factor)
    return value, value


def _net_overhead(clean: str, tag: str) -> dict[str, float]:
    flat = " ".join(clean.split())
    m = re.search(r"static float getNetOverhead\(struct ncclComm\* comm\) \{", flat)
    if not m:
        raise SourceError(f"{tag}: getNetOverhead not found")
    body = _balanced(flat, m.end() - 1)
    intel = re.search(r"VENDOR_INTEL\) return ([\d.]+);", body)
    amd = re.search(r"VENDOR_AMD\) return ([\d.]+);", body)
    other = re.search(r"return ([\d.]+); $", body)
    if not (intel and amd and other):
        raise SourceError(f"{tag}: getNetOverhead body {body!r}")
    return {
        "intel": float(intel.group(1)),
        "amd": float(amd.group(1)),
        "other": float(other.group(1)),
    }


def _speeds(search: str, tag: str) -> tuple[dict[str, list[float]], dict[str, dict[str, str]]]:
    clean = _strip_comments(search)
    arrays: dict[str, list[float]] = {}
    for m in re.finditer(r"\bfloat\s+(\w*[sS]peedArray\w*)\s*\[\s*\]\s*=\s*\{", clean):
        values = _initializer_list(_balanced(clean, m.end() - 1))
        arrays[m.group(1)] = [float(x) for x in values]
    choose: dict[str, dict[str, str]] = {}
    for m in re.finditer(r"\bspeedArray\s*=\s*([^;]+);", clean):
        expr = " ".join(m.group(1).split())
        if expr == "NULL":
            continue
        picked = {a: _ternary(expr, "ccMin", ARCH_CC[a], {}) for a in ARCHS}
        kinds = {("intra" if p.endswith("Intra") else "inter" if p.endswith("Inter") else "?")
                 for p in picked.values()}  # fmt: skip
        if len(kinds) != 1 or "?" in kinds:
            raise SourceError(f"{tag}: speedArray selection {expr!r}")
        kind = kinds.pop()
        if kind in choose:
            raise SourceError(f"{tag}: two {kind} speedArray selections")
        missing = [p for p in picked.values() if p not in arrays]
        if missing:
            raise SourceError(f"{tag}: speed arrays {missing} not defined in {SEARCH}")
        choose[kind] = picked
    if set(choose) != {"intra", "inter"}:
        raise SourceError(f"{tag}: speedArray selections found: {sorted(choose)}")
    used = sorted({p for c in choose.values() for p in c.values()}, key=list(arrays).index)
    return {k: arrays[k] for k in used}, choose


def _channels(src: Source) -> tuple[int, int, list[str]]:
    defs = src.defines("MAXCHANNELS")
    if "MAXCHANNELS" not in defs:
        raise SourceError(f"{src.tag}: MAXCHANNELS not defined under src/")
    value, header = defs["MAXCHANNELS"]
    max_channels = int(_number(value))
    m = _statement(
        _strip_comments(src.text(INIT)), r"ringGraph(?:\.|->)maxChannels = ([^;]+);", "ring"
    )
    search_max = int(_number(m.group(1), {"MAXCHANNELS": float(max_channels)}))
    return max_channels, search_max, [header]


def parse_tag(repo: Path, tag: str) -> dict[str, Any]:
    """Every constant the model uses, as NCCL has it at ``tag`` (plus ``files`` and ``absent``).

    Raises :class:`SourceError` when a field cannot be found or read."""
    src = Source(repo, tag, {})
    tuning = src.text(TUNING)
    clean = _strip_comments(tuning)
    flat = " ".join(clean.split())
    absent: dict[str, str] = {}

    algos, algo_files = _algorithms(src)
    if "pat" not in algos:
        absent["pat"] = ABSENT["pat"]
    index, cc_files = _compcap_index(src, tuning)
    for i, arch in enumerate(ARCHS):
        if i and index[arch] == index[ARCHS[i - 1]]:
            absent[f"{arch}_rows"] = (
                f"compCapIndex has no {arch} index at this tag: {arch} GPUs read the "
                f"{ARCHS[i - 1]} row (index {index[arch]}), as NCCL does"
            )

    def table(names: Sequence[str], what: str) -> Any:
        t = find_array(tuning, names, f"{tag} {TUNING} {what}")
        if t is None:
            raise SourceError(f"{tag}: {what} ({'/'.join(names)}) not found in {TUNING}")
        return t

    base = _by_algo(table(["baseLatencies", "baseLat"], "base latency"), algos, "baseLat", absent)
    hw_raw = table(["hwLatencies", "hwLat"], "hw latency")
    if len(hw_raw) != len(HWS):
        raise SourceError(f"{tag}: hwLat has {len(hw_raw)} hardware rows")
    hw = {h: _by_algo(hw_raw[i], algos, f"hwLat[{h}]", absent) for i, h in enumerate(HWS)}
    if "pat" in algos and "pat_rows" in absent:
        # 2.23-2.27: "comm->latencies[coll][a][p] = 8 // Base time" in the PAT latency formula
        m = _statement(
            clean,
            r"a == NCCL_ALGO_PAT\) \{ if \(coll == ncclFuncAllGather \|\| coll == "
            r"ncclFuncReduceScatter\) \{ comm->latencies\[coll\]\[a\]\[p\] = ([\d.]+) \+",
            f"{tag} PAT base time",
        )
        base["pat"] = [float(m.group(1))] * 3

    ll_max = _rows(table(["llMaxBws"], "llMaxBws"), index, 3, "llMaxBws")
    ring_ll128 = find_array(tuning, ["perChMaxRingLL128Bws"], f"{tag} perChMaxRingLL128Bws")
    tree_ll128 = find_array(tuning, ["perChMaxTreeLL128Bws"], f"{tag} perChMaxTreeLL128Bws")
    if ring_ll128 is None and tree_ll128 is None:
        single = table(["ll128MaxBwPerCh"], "ll128MaxBwPerCh")
        ring_ll128 = tree_ll128 = [[v, v, v] for v in single]
        absent["per_ch_max_ll128"] = ABSENT["ll128"]
    if ring_ll128 is None or tree_ll128 is None:
        raise SourceError(f"{tag}: only one of perChMaxRingLL128Bws/perChMaxTreeLL128Bws")
    tree_bw = _rows(table(["perChMaxTreeBws"], "perChMaxTreeBws"), index, 3, "perChMaxTreeBws")
    nvls_tree = find_array(tuning, ["perChMaxNVLSTreeBws"], f"{tag} perChMaxNVLSTreeBws")
    need = max(index.values()) + 1
    if nvls_tree is None:
        nvls_tree_rows = [[float("inf")] * 3 for _ in range(need)]
        absent["per_ch_max_nvls_tree_bw_GBps"] = ABSENT["per_ch_max_nvls_tree_bw_GBps"]
    else:
        nvls_tree_rows = _rows(nvls_tree, index, 3, "perChMaxNVLSTreeBws")
    eff = find_array(tuning, ["nvlsEfficiency"], f"{tag} nvlsEfficiency")
    nvls_ratio: float | None = None
    if eff is None:
        eff_rows = [0.0] * need
        m = re.search(
            r"else if \(a == NCCL_ALGO_NVLS(?: \|\| a == NCCL_ALGO_NVLS_TREE)?\) "
            r"ratio \*?= ([^;]+);",
            flat,
        )
        if not m:
            raise SourceError(f"{tag}: neither nvlsEfficiency nor an NVLS ratio in {TUNING}")
        nvls_ratio = _number(m.group(1))
        note = ABSENT["nvls_efficiency"]
        tree_ratio = re.search(r"else if \(a == NCCL_ALGO_NVLS_TREE\) ratio \*?= ([^;]+);", flat)
        if tree_ratio:
            note += f"; NVLSTree had its own ratio {tree_ratio.group(1).strip()}"
        absent["nvls_efficiency"] = note
    else:
        if len(eff) < need:
            raise SourceError(f"{tag}: nvlsEfficiency has {len(eff)} entries")
        eff_rows = [float(x) for x in eff[:need]]

    pat_factor = 0.0
    if "pat" in algos:
        m = _statement(clean, r"a == NCCL_ALGO_PAT\) busBw \*= ([^;]+);", f"{tag} PAT factor")
        pat_factor = _number(m.group(1))
    ring_ll128_factor, ring_ll128_ppn1 = _ring_ll128_factor(flat, tag)
    plateau = _statement(
        clean,
        r"lat \*= (?:info->)?comm->minCompCap < 80 \? ([\d.]+) : ([\d.]+);",
        f"{tag} ring plateau",
    )
    tree_corr = find_array(tuning, ["treeCorrectionFactor"], f"{tag} treeCorrectionFactor")
    if tree_corr is None or len(tree_corr) != 3:
        raise SourceError(f"{tag}: treeCorrectionFactor not found or not 3 protocols")
    # which algorithms ncclTopoGetAlgoTime corrects, and up to which log2(size/64)
    bounds = {
        algo: int(m.group(1))
        for algo in ("TREE", "NVLS_TREE")
        for m in re.finditer(
            rf"algorithm == NCCL_ALGO_{algo} (?:&& coll == ncclFuncAllReduce )?"
            r"&& (?:logSize >= 0 && )?logSize < (\d+)",
            flat,
        )
    }
    if "TREE" not in bounds or any(b > len(r) for b in bounds.values() for r in tree_corr):
        raise SourceError(f"{tag}: treeCorrectionFactor use {bounds} vs {len(tree_corr[0])} sizes")

    arrays, choose = _speeds(src.text(SEARCH), tag)
    max_channels, search_max, ch_files = _channels(src)

    files = sorted({TUNING, SEARCH, INIT, *algo_files, *cc_files, *ch_files})
    return {
        "files": files,
        "algorithms": algos,
        "compcap_index": index,
        "absent": absent,
        "base_latency_us": base,
        "hw_latency_us": hw,
        "ll_max_bw_GBps": ll_max,
        "per_ch_max_ring_ll128_bw_GBps": _rows(ring_ll128, index, 3, "perChMaxRingLL128Bws"),
        "per_ch_max_tree_ll128_bw_GBps": _rows(tree_ll128, index, 3, "perChMaxTreeLL128Bws"),
        "per_ch_max_tree_bw_GBps": tree_bw,
        "per_ch_max_nvls_tree_bw_GBps": nvls_tree_rows,
        "nvls_efficiency": eff_rows,
        "nvls_algbw_ratio": nvls_ratio,
        "ring_ll_factor": _ring_ll_factor(flat, tag),
        "ring_ll128_factor": ring_ll128_factor,
        "ring_ll128_factor_ppn1": ring_ll128_ppn1,
        "pat_factor": pat_factor,
        "ring_plateau": [float(plateau.group(1)), float(plateau.group(2))],
        "net_overhead_us": _net_overhead(clean, tag),
        "tree_correction": [[float(x) for x in row] for row in tree_corr],
        "nvls_tree_correction": "NVLS_TREE" in bounds,
        "speed_arrays": arrays,
        "speed_intra": choose["intra"],
        "speed_inter": choose["inter"],
        "max_channels": max_channels,
        "max_search_channels": search_max,
    }


# ------------------------------------------------------------------------------- grouping


def _version(tag: str) -> str:
    return ".".join(str(x) for x in version_key(tag))


def generate(repo: Path, tags: Sequence[str] | None = None) -> dict[str, Any]:
    """``{"default_release": ..., "releases": {name: entry}}`` over ``tags`` (default: all)."""
    tags = list(tags or release_tags(repo))
    if not tags:
        raise SourceError(f"no v2.{MINORS.start}..v2.{MINORS.stop - 1} tags in {repo}")
    parsed = [(t, parse_tag(repo, t)) for t in tags]
    groups: list[list[tuple[str, dict[str, Any]]]] = []
    for tag, values in parsed:
        last = groups[-1] if groups else None
        if last and version_key(last[-1][0])[:2] == version_key(tag)[:2] and last[-1][1] == values:
            last.append((tag, values))
        else:
            groups.append([(tag, values)])
    per_minor: dict[tuple[int, ...], int] = {}
    for g in groups:
        key = version_key(g[0][0])[:2]
        per_minor[key] = per_minor.get(key, 0) + 1
    releases: dict[str, Any] = {}
    for g in reversed(groups):  # newest first
        newest = g[-1][0]
        minor = version_key(newest)[:2]
        name = ".".join(map(str, minor)) if per_minor[minor] == 1 else _version(newest)
        commit = _git(repo, "rev-parse", f"{newest}^{{commit}}").strip()
        values = dict(g[-1][1])
        files = values.pop("files")
        releases[name] = {
            "tag": newest,
            "tags": [t for t, _ in reversed(g)],
            "commit": commit,
            "files": files,
            "source": f"https://github.com/NVIDIA/nccl/tree/{newest}/src ({', '.join(files)})",
            **values,
        }
    return {"default_release": next(iter(releases)), "releases": releases}


HEADER = """\
# GENERATED by scripts/gen_nccl_constants.py from NCCL's source: do not edit by hand.
# Regenerate with a clone of https://github.com/NVIDIA/nccl (tags included):
#   python scripts/gen_nccl_constants.py --repo PATH/TO/nccl
#
# One entry per distinct set of values over the release tags v2.18.x-1 .. v2.30.x-1: `tag` is the
# tag read (the newest the entry covers), `tags` every tag with identical values, `commit` the
# tag's commit, `files` the source files the values come from. `absent` lists what a release does
# not have and how it is represented here (as NCCL behaves: C zero-fill, no cap = .inf, a factor
# 0 for an algorithm that does not exist).
#
# Index conventions (as in src/graph/tuning.cc):
#   protocols:      [LL, LL128, Simple]
#   algorithms:     tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat
#   hw_latency_us:  nvlink, pci, net -> algorithm -> [LL, LL128, Simple], microseconds
#   per-GPU tables: rows in compCapIndex order; `compcap_index` gives each GPU generation's row
#                   (volta <8.0, ampere 8.x, hopper 9.x, blackwell >=10.0, evaluated on the
#                   release's own compCapIndex expression); columns [1 node, 2 nodes, >2 nodes].
#                   llMaxBws on more than one node is read at row 0 (Intel CPU) or 1 (AMD).
#   speed_intra / speed_inter: the graph search's speed array each generation gets (search.cc).
#   ring_ll_factor: [more than one node or AllReduce/Reduce, the other collectives on one node].
#   nvls_tree_correction: ncclTopoGetAlgoTime applies treeCorrectionFactor to NVLSTree too (2.29+).
#   max_search_channels: ring search's channel ceiling (init.cc); max_channels: MAXCHANNELS.
"""


class _Dumper(yaml.SafeDumper):
    """Flow style for rows of numbers and short mappings, block style for notes."""

    def represent_dict(self, data: Any) -> yaml.MappingNode:
        node = super().represent_dict(data)
        node.flow_style = not any(isinstance(v, str) and len(v) > 40 for v in data.values())
        if any(isinstance(v, dict | list) for v in data.values()):
            node.flow_style = False
        return node


_Dumper.add_representer(dict, _Dumper.represent_dict)


def render(doc: dict[str, Any], *, header: bool = True) -> str:
    body = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=100)
    return (HEADER if header else "") + body


def default_repo() -> Path | None:
    env = os.environ.get("AIFABRIC_NCCL_REPO")
    return Path(env) if env else None


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=default_repo(), help="clone of NVIDIA/nccl")
    ap.add_argument("--check", action="store_true", help="exit 1 if the data file is stale")
    ap.add_argument("--tag", action="append", help="print these tags' values, write nothing")
    ap.add_argument("-o", "--output", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if args.repo is None:
        ap.error(
            "give --repo PATH (a clone of https://github.com/NVIDIA/nccl) or set AIFABRIC_NCCL_REPO"
        )
    try:
        if args.tag:
            for t in args.tag:
                print(render({t: parse_tag(args.repo, t)}, header=False))
            return 0
        text = render(generate(args.repo))
    except SourceError as e:
        print(f"gen_nccl_constants: {e}", file=sys.stderr)
        return 2
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

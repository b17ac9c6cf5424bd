"""Release advisories: a defect that the release of NCCL an input runs is known to have.

A failing run of an old NCCL is often a defect its own release notes list: NVIDIA's notes for
each release name the known issues of that release and the issues fixed in it
(``checks/advisories/nccl-releases.yaml``, each release with the pages it was read from). When
an input shows both the NCCL release it runs and a failure, this pass names the defects of that
release whose description matches what the input shows, and the release that fixed them:

- **release**: ``NCCL version X.Y.Z`` (the INFO line NCCL prints, the suffix PyTorch appends to
  its NCCL errors), or nccl-tests' ``nccl-library=NNNNN`` (``NCCL_VERSION_CODE``: ``X*10000 +
  Y*100 + Z`` from 2.9 on, ``X*1000 + Y*100 + Z`` before);
- **symptom**: what the failing lines (the quoted lines of the error and warning findings and
  the lines reported as not recognised) say: a hang (watchdog or collective timeout, ``hang``,
  ``stuck``), a crash (``Segmentation fault``, ``SIGSEGV``, ``SIGABRT``, an assertion, an
  illegal memory access), an NCCL error (``ncclInternalError``, ``unhandled system error``,
  ``NCCL WARN``), wrong results (NaN, nccl-tests' ``#wrong``), resources (out of memory, too
  many open files) or low bandwidth (a busbw finding);
- **component**: the parts of NCCL the input shows in use (``NET/IB``, ``/RoCE``, ``GDRDMA``,
  ``NET/Socket``, ``via SHM``, ``via P2P``, ``NVLS``, ``CollNet``/``SHARP``, ``PXN``, a net
  or tuner plugin, ``ncclCommSplit``, ``cuMem``, ``MNNVL``, ...) and, among them, those the
  failing lines themselves name;
- **hardware**: an issue the notes restrict to a GPU, CPU or NIC (H100, ARM, ConnectX-7, EFA)
  is taken only when the input names that hardware.

A defect matches when it shares a symptom with the failing lines and a component with what the
input uses: a known issue of the very release, or a fix in a later release of the same or the
next :data:`FIX_WINDOW` release series. The finding is a
**warning** (cause ``config.version-mismatch``: the fix is a newer release) when the defect is
a known issue of the release in use, or when a matched component is named by the failing lines
themselves and the description shares at least :data:`MIN_SHARED` distinctive words with them
(words of three letters or more, without plain English, the words every description uses and
the component and symptom names already matched: ``ncclCommSplit``, ``bfloat16``, ``gid``,
``timeout``); otherwise it is ``info``: the component is in use but nothing ties the failure to
it. Release notes describe a defect in one sentence, so a match is a lead, not a proof: the
finding says which words matched and ranks below every finding that reads the failure itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from aifabric.checks.diagnose.signatures import LAYER_WORDS
from aifabric.findings import EvidenceItem, Finding
from aifabric.yamlfile import read_yaml_text, validate_data

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence, EvidenceFile, Suspect

__all__ = [
    "Defect",
    "Match",
    "Release",
    "ReleaseNotes",
    "Shown",
    "advisory_findings",
    "matches",
    "nccl_release_notes",
    "parse_version",
    "version_code",
]

Component = Literal[
    "ib", "roce", "gdr", "socket", "bootstrap", "shm", "p2p", "nvls", "collnet", "pxn", "tree",
    "ring", "ll128", "ll", "sendrecv", "proxy", "topology", "cumem", "net-plugin", "tuner-plugin",
    "ras", "split", "abort", "mnnvl", "cuda-graph", "multi-gpu-process", "ipv6", "env",
    "nvtx-profiler", "rma", "symmetric", "mig", "containers", "build",
]  # fmt: skip
Symptom = Literal["hang", "crash", "error", "corruption", "performance", "resource", "log"]
Hardware = Literal[
    "h100", "h200", "b200", "gb200", "a100", "v100", "arm", "grace", "amd-cpu", "intel-cpu",
    "connectx-7", "bluefield", "aws-efa",
]  # fmt: skip

_VERSION = r"^\d+\.\d+\.\d+$"


class Defect(BaseModel):
    """One bullet of a release's notes: a known issue of it or an issue fixed in it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(min_length=8)
    components: tuple[Component, ...] = ()
    symptoms: tuple[Symptom, ...] = ()
    workaround: str | None = None
    hardware: tuple[Hardware, ...] = ()


class Release(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str = Field(pattern=_VERSION)
    sources: tuple[str, ...] = Field(min_length=1)
    known: tuple[Defect, ...] = ()
    fixed: tuple[Defect, ...] = ()


class ReleaseNotes(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    program: Literal["nccl"]
    releases: tuple[Release, ...]
    missing: tuple[str, ...] = ()
    """Releases whose notes could not be read (no advisory can name them)."""


@cache
def nccl_release_notes() -> ReleaseNotes:
    """``checks/advisories/nccl-releases.yaml``, validated."""
    name = "checks/advisories/nccl-releases.yaml"
    text = resources.files("aifabric").joinpath(name).read_text(encoding="utf-8")
    return validate_data(ReleaseNotes, read_yaml_text(text, file=name), file=name, text=text)


def parse_version(text: str) -> tuple[int, int, int] | None:
    """``"2.18.3"`` -> ``(2, 18, 3)``; ``None`` when it is not three numbers."""
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", text)
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def version_code(code: int) -> tuple[int, int, int]:
    """``NCCL_VERSION_CODE`` -> release: ``X*10000 + Y*100 + Z`` from 2.9 (``21805`` is
    2.18.5), ``X*1000 + Y*100 + Z`` before (``2708`` is 2.7.8) (NVIDIA/nccl ``src/nccl.h.in``,
    ``NCCL_VERSION(X,Y,Z)``)."""
    if code >= 10000:
        return code // 10000, code // 100 % 100, code % 100
    return code // 1000, code // 100 % 10, code % 100


_RELEASE_RE = re.compile(
    r"\bNCCL version:? ?v?(?P<v>\d+\.\d+\.\d+)\b|\bnccl-library=(?P<code>\d{4,5})\b"
)

# What the input shows in use. Generic parts every run prints (rings, trees, the bootstrap, the
# proxy) are taken only from a setting or from the failing lines themselves.
_IN_USE: dict[str, str] = {
    "ib": r"NET/IB\b|Using network IB|\bIBext",
    "roce": r"/RoCE\b|\bRoCE",
    "gdr": (
        r"GDRDMA|GPU Direct RDMA Enabled|DMA-BUF|NCCL_NET_GDR_LEVEL|nvidia[-_]peermem"
        r"|nv_peer_mem"
    ),
    "socket": r"NET/Socket\b|Using network Socket",
    "shm": r"via SHM\b|/dev/shm",
    "p2p": r"via P2P/",
    # positive lines only: NCCL also prints "NVLS multicast support is not available", "Failed
    # to find ncclCollNetPlugin symbol", "disabling CollNet" and "PXN Disabled"
    "nvls": (
        r"NVLS Trees|Connected NVLS|NVLS (?:Creat|Bind|Mapped|group|importing)"
        r"|NCCL_NVLS_ENABLE(?: set by environment to |=)1|NVLink SHARP"
    ),
    "collnet": (
        r"via COLLNET/|Connected [Cc]oll[Nn]et|Collnet Chains|Loaded coll plugin"
        r"|NCCL_COLLNET_ENABLE(?: set by environment to |=)1|\bSHARP\b"
    ),
    "pxn": r"\bPXN\b(?! Disabled)|NCCL_PXN_DISABLE|NCCL_P2P_PXN_LEVEL",
    "sendrecv": r"[Aa]ll[Tt]o[Aa]ll|all_to_all|sendrecv|send/recv|ncclSend\b|ncclRecv\b",
    "topology": r"NCCL_TOPO_FILE|NCCL_TOPO_DUMP_FILE",
    "cumem": r"\bcuMem|NCCL_CUMEM_ENABLE",
    "net-plugin": (
        r"NET/Plugin ?: Plugin loaded|Loaded net plugin|NET/OFI|AWS Libfabric|NCCL_NET_PLUGIN"
        r"|libnccl-net[-\w]{0,40}\.so"
    ),
    "tuner-plugin": r"TUNER/Plugin|NCCL_TUNER_PLUGIN",
    "ras": r"NCCL_RAS|\bRAS\b",
    "split": r"ncclCommSplit|commSplit",
    "abort": r"ncclCommAbort|ncclCommFinalize|ncclCommDestroy",
    "mnnvl": r"MNNVL|\bIMEX\b|NVL72",
    "cuda-graph": r"CUDA [Gg]raph|cudaGraph|graph capture",
    "ipv6": r"Bootstrap ?: Using [\w.-]{1,64}:\[?[0-9a-fA-F]{1,4}:[0-9a-fA-F:]{0,40}:",
    "mig": r"\bMIG\b",
    "nvtx-profiler": r"PROFILER/Plugin|NCCL_PROFILER",
    "symmetric": r"NCCL_WIN_ENABLE|ncclCommWindowRegister|symmetric kernel",
    "ll128": r"NCCL_PROTO=\S{0,40}LL128|\bLL128\b",
    "ll": r"NCCL_PROTO=\S{0,40}\bLL\b(?!1)",
    "tree": r"NCCL_ALGO=\S{0,40}[Tt]ree",
    "ring": r"NCCL_ALGO=\S{0,40}[Rr]ing",
}
# Named by a failing line (in addition to the above): the file or thread the line comes from.
_IN_FAILURE: dict[str, str] = {
    "ib": r"net_ib\.cc|ib_plugin|NET/IB",
    "socket": r"net_socket\.cc|socket\.cc",
    "bootstrap": r"bootstrap\.cc|[Bb]ootstrap",
    "proxy": r"proxy\.cc|\[Proxy Thread\]|\[Progress Thread\]|[Pp]roxy",
    "topology": r"topo\.cc|xml\.cc|paths\.cc|search\.cc|[Tt]opology",
    "shm": r"shm\.cc|shmutils\.cc",
    "p2p": r"p2p\.cc",
    "nvls": r"nvls\.cc",
    "collnet": r"coll_net\.cc|collnet",
    "build": r"undefined symbol|GLIBC_|GLIBCXX_|version `",
}
_HARDWARE: dict[str, str] = {
    "h100": r"\bH100|\bGH100",
    "h200": r"\bH200",
    "b200": r"\bB200",
    "gb200": r"\bGB200",
    "a100": r"\bA100",
    "v100": r"\bV100",
    "arm": r"\baarch64\b|\barm64\b",
    "grace": r"\bGrace\b|\bGH200",
    "amd-cpu": r"AMD EPYC|AuthenticAMD",
    "intel-cpu": r"Intel\(R\) Xeon|GenuineIntel",
    "connectx-7": r"ConnectX-7|\bMT4129\b",
    "bluefield": r"BlueField",
    "aws-efa": r"\bEFA\b|\befa_|AWS Libfabric|NET/OFI",
}
_SYMPTOM: dict[str, str] = {
    "hang": (
        r"\b[Hh]ang(?:s|ing)?\b|\bhung\b|\bstuck\b|[Dd]eadlock|[Ww]atchdog caught collective"
        r"|[Cc]ollective operation timeout|NCCL timeout|timed out"
    ),
    "crash": (
        r"Segmentation fault|SIGSEGV|signal 11\b|SIGABRT|SIGBUS|Bus error|core dumped"
        r"|Assertion [`'\"][^\n]{0,200}failed|illegal memory access|double free|free\(\): invalid"
    ),
    "error": (
        r"ncclInternalError|ncclSystemError|ncclInvalidUsage|ncclInvalidArgument"
        r"|ncclUnhandledCudaError|ncclRemoteError|unhandled (?:system|cuda) error"
        r"|internal error|invalid usage|NCCL WARN|NCCL error"
    ),
    "corruption": r"\bNaN\b|\bnan\b|#wrong|wrong results?|data corruption|out of bounds value",
    "resource": r"out of memory|Cannot allocate memory|ENOMEM|Too many open files|memory leak",
}
_PERF_CHECK = re.compile(r"busbw|bandwidth|slow")


def _table(patterns: dict[str, str]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((name, re.compile(p)) for name, p in patterns.items())


_IN_USE_T = _table(_IN_USE)
_IN_FAILURE_T = _table(_IN_FAILURE)
_HARDWARE_T = _table(_HARDWARE)
_SYMPTOM_T = _table(_SYMPTOM)


def _found(table: Sequence[tuple[str, re.Pattern[str]]], texts: Iterable[str]) -> set[str]:
    """The names of ``table`` whose pattern occurs in one of ``texts``."""
    got: set[str] = set()
    for text in texts:
        got |= {name for name, p in table if name not in got and p.search(text)}
    return got


@dataclass(frozen=True, slots=True)
class Match:
    """One defect of the notes matched to an input."""

    release: Release
    defect: Defect
    known: bool
    """a known issue of the release in use (else fixed in ``release``)."""
    components: tuple[str, ...]
    implicated: bool
    """a matched component is named by the failing lines themselves."""
    symptoms: tuple[str, ...]
    shared: tuple[str, ...] = ()
    """distinctive words the defect's description shares with the failing lines."""

    @property
    def strong(self) -> bool:
        """Worth a warning: a known issue of the release in use, or a fix whose component the
        failing lines name and whose description shares distinctive words with them."""
        return self.known or (self.implicated and len(self.shared) >= MIN_SHARED)


@dataclass(frozen=True, slots=True)
class Shown:
    """What an input shows, in the notes' vocabulary."""

    symptoms: frozenset[str]
    in_use: frozenset[str]
    implicated: frozenset[str]
    hardware: frozenset[str]
    words: frozenset[str] = frozenset()
    """the words of the failing lines (:func:`words`)."""


FIX_WINDOW = 2
"""Fixes are looked for in the release series of the release in use and the next
:data:`FIX_WINDOW` (2.18.1: 2.18.x to 2.20.x). A release's notes do not say when a defect
appeared; most are found and fixed within a few releases of the change that made them, and a
fix years later is usually of a part the old release did not have (NVLS in 2.17, the dynamic GID
selection in 2.21)."""

MIN_SHARED = 2
"""Distinctive words a fix's description must share with the failing lines for a warning."""

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")
_PLAIN = frozenset({
    "about", "after", "also", "and", "any", "are", "because", "been", "before", "being", "bug",
    "bugs", "but", "can", "case", "cases", "caused", "causing", "correctly", "could", "crash",
    "crashed", "crashes", "does", "during", "each", "error", "errors", "every", "fail", "failed",
    "failing", "fails", "failure", "first", "fix", "fixed", "fixes", "for", "from", "github",
    "had", "hang", "hangs", "has", "have", "her", "his", "how", "hung", "incorrect",
    "incorrectly", "instead", "into", "issue", "issues", "its", "large", "lead", "leading",
    "more", "most", "multiple", "must", "nccl", "never", "not", "now", "off", "one", "only",
    "other", "our", "out", "over", "possible", "properly", "same", "set", "some", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "through", "too",
    "two", "under", "use", "used", "uses", "using", "very", "via", "was", "way", "were", "what",
    "when", "where", "which", "while", "who", "why", "will", "with", "within", "work", "working",
    "works", "would", "wrong", "you",
})  # fmt: skip


def words(texts: Iterable[str]) -> frozenset[str]:
    """Lower-cased words of at least three characters, without plain English and the words
    every defect description uses (``fix``, ``error``, ``hang``)."""
    return frozenset(
        w for text in texts for w in (m.lower() for m in _WORD.findall(text)) if w not in _PLAIN
    )


def matches(
    version: tuple[int, int, int], shown: Shown, notes: ReleaseNotes | None = None
) -> list[Match]:
    """The defects of ``notes`` that a run of ``version`` showing ``shown`` may have hit,
    known issues of the release first, then fixes by release (nearest first)."""
    notes = notes or nccl_release_notes()
    out: list[Match] = []
    for rel in sorted(notes.releases, key=lambda r: parse_version(r.version) or (0, 0, 0)):
        v = parse_version(rel.version)
        if v is None or v < version or v[:2] > (version[0], version[1] + FIX_WINDOW):
            continue
        pairs = [(d, True) for d in rel.known] if v == version else []
        pairs += [(d, False) for d in rel.fixed] if v > version else []
        for d, known in pairs:
            symptoms = tuple(s for s in d.symptoms if s in shown.symptoms)
            parts = tuple(c for c in d.components if c in shown.in_use or c in shown.implicated)
            if not symptoms or not parts:
                continue
            if d.hardware and not set(d.hardware) & shown.hardware:
                continue
            implicated = any(c in shown.implicated for c in parts)
            shared = tuple(sorted(words([d.text]) & shown.words - _VOCABULARY))
            out.append(Match(rel, d, known, parts, implicated, symptoms, shared))
    out.sort(key=lambda m: (not m.strong, not m.known, not m.implicated, -len(m.shared)))
    return out


_VOCABULARY = frozenset(
    w for name in (*_IN_USE, *_SYMPTOM) for w in name.replace("-", " ").split()
) | {"transport", "network", "plugin", "protocol", "communicator", "communicators", "rank",
     "ranks", "gpu", "gpus", "nic", "nics", "init", "initialization"}
"""Words that name a component or a symptom: matched as such, not counted again as shared."""


def _failing_texts(findings: Sequence[Finding], suspects: Sequence[Suspect]) -> list[str]:
    texts = [e.text for f in findings if f.severity != "info" for e in f.evidence if e.text]
    texts += [f.message for f in findings if f.severity != "info"]
    texts += [s.text for s in suspects]
    return texts


def _texts(
    ev: Evidence, subjects: set[str], kinds: frozenset[str]
) -> list[tuple[EvidenceFile, list[int], str]]:
    """The log-like parts of the input about ``subjects`` as (file, its line numbers, its lines
    joined by newlines): one search per pattern over the whole text instead of one per line,
    and a 1,000-host bundle read only for the hosts whose lines fail."""
    out = []
    for ef in ev.files:
        if ef.kind not in kinds or ef.subject not in subjects:
            continue
        numbered = list(ef.own_lines())
        out.append((ef, [n for n, _ in numbered], "\n".join(line for _, line in numbered)))
    return out


def _releases(
    texts: Sequence[tuple[EvidenceFile, list[int], str]],
) -> dict[tuple[int, int, int], EvidenceItem]:
    """Every NCCL release the input names, with the first line naming it."""
    out: dict[tuple[int, int, int], EvidenceItem] = {}
    for ef, numbers, text in texts:
        if "NCCL version" not in text and "nccl-library=" not in text:
            continue
        for m in _RELEASE_RE.finditer(text):
            v = parse_version(m["v"]) if m["v"] else version_code(int(m["code"]))
            if v is not None and v not in out:
                out[v] = ef.quote(numbers[text.count("\n", 0, m.start())])
    return out


def advisory_findings(ev: Evidence, findings: Sequence[Finding]) -> list[Finding]:
    """The release advisories for ``ev`` given the other ``findings`` of its diagnosis (module
    doc): one finding per NCCL release the input runs, when a defect of it matches."""
    failing = _failing_texts(findings, ev.suspects)
    perf = any(f.severity != "info" and _PERF_CHECK.search(f.check) for f in findings)
    symptoms = _found(_SYMPTOM_T, failing) | ({"performance"} if perf else set())
    if not symptoms:
        return []
    from aifabric.checks.diagnose.engine import SCANNED_KINDS  # noqa: PLC0415 - engine imports this

    failing_findings = [f for f in findings if f.severity != "info"]
    quoted = [e for f in failing_findings for e in f.evidence]
    subjects = {e.subject for e in quoted if e.subject} | {s.file.subject for s in ev.suspects}
    subjects |= {ef.subject for ef in ev.files if ef.path in {e.source for e in quoted}}
    texts = _texts(ev, subjects, SCANNED_KINDS)
    releases = _releases(texts)
    if not releases:
        return []
    whole = [text for _, _, text in texts]
    shown = Shown(
        symptoms=frozenset(symptoms),
        in_use=frozenset(_found(_IN_USE_T, whole)),
        implicated=frozenset(_found(_IN_USE_T, failing) | _found(_IN_FAILURE_T, failing)),
        hardware=frozenset(_found(_HARDWARE_T, whole)),
        words=words(failing),
    )
    out: list[Finding] = []
    for version, quote in sorted(releases.items()):
        got = matches(version, shown)
        if got:
            out.append(_finding(version, got, shown, quote))
    return out


def _name(v: tuple[int, int, int]) -> str:
    return ".".join(map(str, v))


def _finding(
    version: tuple[int, int, int], got: list[Match], shown: Shown, quote: EvidenceItem
) -> Finding:
    strong = [m for m in got if m.strong]
    lead = strong or got
    rel = _name(version)
    fixes = [m for m in lead if not m.known]
    newest = max((parse_version(m.release.version) or (0, 0, 0) for m in fixes), default=None)
    said = []
    for m in lead[:4]:
        where = f"known issue of {rel}" if m.known else f"fixed in {m.release.version}"
        also = f"; words {', '.join(m.shared)}" if m.shared else ""
        said.append(f"{where}: {m.defect.text} (matched: {', '.join(m.symptoms)} with "
                    f"{', '.join(m.components)}{also})")  # fmt: skip
    more = f"; {len(lead) - 4} more" if len(lead) > 4 else ""
    workarounds = sorted({m.defect.workaround for m in lead if m.defect.workaround})
    fix = (
        f"Run the failing case again with NCCL {_name(newest)} or later"
        if newest is not None
        else "Run the failing case again with a newer NCCL release"
    ) + (
        " (PyTorch loads the NCCL of its wheel, nvidia-nccl-cu12/cu13; a container image, its "
        "own copy: check the 'NCCL version' line after the change)"
    ) + (f", or apply the workaround the notes give: {'; '.join(workarounds)}" if workarounds
         else "") + ". If the failure stays, this advisory was not its cause."  # fmt: skip
    sources = []
    for m in lead:
        for s in m.release.sources:
            if s not in sources:
                sources.append(s)
    return Finding(
        check="diagnose.nccl-release-defect",
        severity="warning" if strong else "info",
        target="all input",
        message=(
            f"{LAYER_WORDS['config']}: NCCL {rel} has {len(lead)} defect(s) in its release "
            "notes like this failure: " + "; ".join(said) + more
        ),
        actual=f"NCCL {rel}",
        expected=f"NCCL {_name(newest)} or later" if newest is not None else None,
        evidence=[quote],
        explanation=(
            "NVIDIA's NCCL release notes list, for each release, the known issues of that "
            "release and the issues fixed in it. A defect is matched when the failing lines of "
            f"this input show one of its symptoms (here: {', '.join(sorted(shown.symptoms))}) "
            "and the input shows a component the defect is about in use (here: "
            f"{', '.join(sorted(shown.in_use | shown.implicated)) or 'none'}); a warning when "
            "the defect is a known issue of the release in use, or when the failing lines name "
            f"that component and share at least {MIN_SHARED} distinctive words with the "
            "description, information otherwise. A one-sentence description matched by "
            "words is a lead to test, not a proof: the other findings read the failure itself."
        ),
        fix=fix,
        refs=["S20", *sources[:6]],  # S20: the troubleshooting table
        confidence=0.35 if strong else 0.15,
        cause="config.version-mismatch",
    )

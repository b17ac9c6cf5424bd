"""NCCL environment files, in the forms people keep them (S15).

One :class:`EnvVar` record per variable assignment, in input order, NCCL's or not (``UCX_``,
``CUDA_``, ``OMPI_`` and shell variables are kept too; the lint decides what to look at). Forms:

* ``/etc/nccl.conf``, ``${NCCL_CONF_FILE}`` and ``env | grep NCCL`` output: ``NAME=value`` lines,
  the value being the rest of the line (NCCL's own conf reader does the same);
* shell: ``export NAME=value``, ``NAME=value cmd``, several per line, ``\\``-continued
  ``export A=1 \\`` blocks, single/double quotes, ``# comments`` (commented-out assignments are
  not in effect and are skipped), ``if ...; then export NAME=value; fi``;
* launchers: ``mpirun -x NAME=value``, ``docker run -e NAME=value`` / ``--env NAME=value``;
* Kubernetes env lists: ``- name: NAME`` then ``value: "..."`` (``valueFrom:`` gives a dynamic
  value), and compose-style ``NAME: value`` map entries for ``NCCL_`` names;
* Python/TOML-style ``NAME = "value"`` lines and ``os.environ["NAME"] = "value"``.

A value that the file does not fix (``$VAR``, ``$(cmd)``, backticks, ``${...}``, ``valueFrom``)
is kept verbatim with ``dynamic=True``; the lint does not judge it. When a name is assigned twice
the later assignment wins (shell and NCCL semantics) and the parse warns.

Sources: NCCL's env.rst ("Environment variables can also be set statically in /etc/nccl.conf
... NCCL_DEBUG=WARN / NCCL_SOCKET_IFNAME==ens1f0"), and the real files under
``tests/fixtures/evidence/nccl-env/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = ["EnvVar", "effective_env", "parse_nccl_env"]


@dataclass(slots=True, kw_only=True)
class EnvVar(Record):
    """One environment variable assignment."""

    record_type: ClassVar[str] = "env"

    name: str
    value: str
    """The value with shell quotes removed (verbatim when ``dynamic``)."""
    form: str
    """``conf`` (NAME=value line), ``shell`` (export / inline), ``mpirun`` (-x), ``docker``
    (-e/--env), ``k8s`` (name/value pair), ``map`` (NAME: value), ``python``."""
    dynamic: bool = False
    """The value depends on something outside the file (``$VAR``, ``$(cmd)``, ``valueFrom``)."""
    text: str = ""
    """The source line, trimmed, for evidence quotes."""

    @property
    def is_nccl(self) -> bool:
        return self.name.startswith("NCCL_")


def effective_env(records: list[Record]) -> dict[str, EnvVar]:
    """Name -> the assignment in effect (the last one), from a parse's records."""
    out: dict[str, EnvVar] = {}
    for rec in records:
        if isinstance(rec, EnvVar):
            out[rec.name] = rec
    return out


_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_CONF_RE = re.compile(rf"^\s*({_NAME})=(.*)$")
# values end at their last non-blank, found greedily: ``(.*?)\s*$`` rescans a run of blanks at
# every character (quadratic on a long line)
_SPACED_RE = re.compile(rf"^\s*(?:export\s+)?({_NAME})\s+=\s+((?:.*\S)?)\s*$")
_ASSIGN_START_RE = re.compile(rf"(?:(?<=[\s;=(])|^)({_NAME})=")
_K8S_NAME_RE = re.compile(rf"^\s*-\s*name:\s*[\"']?({_NAME})[\"']?\s*$")
_K8S_INLINE_RE = re.compile(
    # the value ends at its last non-blank before the closing brace, found greedily: a lazy value
    # between two ``\s*`` tried every split of a run of blanks (cubic on a long line)
    rf"^\s*-\s*\{{\s*name:\s*[\"']?({_NAME})[\"']?\s*,\s*value:\s*+((?:.*\S)?)\s*\}}\s*$"
)
_K8S_VALUE_RE = re.compile(r"^\s*value:\s*((?:.*\S)?)\s*$")
_K8S_VALUEFROM_RE = re.compile(r"^\s*valueFrom:")
_MAP_RE = re.compile(r"^\s*([\"']?)(NCCL_[A-Z0-9_]+)\1\s*:\s+((?:.*\S)?)\s*$")
"""``NCCL_X: value`` (compose, YAML) and ``"NCCL_X": "value",`` (a Python or JSON dict)."""
_ENVIRON_RE = re.compile(rf"environ\[\s*[\"']({_NAME})[\"']\s*\]\s*=\s*(.*\S|\s)\s*$")
_DYNAMIC_RE = re.compile(r"\$|`")
_LAUNCHER_OPT_RE = re.compile(r"(?:^|\s)(-x|-e|--env|-genv)\s*$")
_NCCL_ASSIGN_LINE_RE = re.compile(
    r"^\s*(?:export\s+|-x\s+|-e\s+|--env[\s=]+|\+\s+)?NCCL_[A-Z0-9_]+\s*=|"
    r"^[+ ]?\s*-\s*(?:\{\s*)?name:\s*[\"']?NCCL_[A-Z0-9_]+|"
    r"^[+ ]?\s*[\"']?NCCL_[A-Z0-9_]+[\"']?\s*:\s+\S",
    re.MULTILINE,
)
_NCCL_ENVIRON_RE = re.compile(r"environ\[\s*[\"']NCCL_")
"""An assignment of an NCCL variable: at a line start (shell, launcher, YAML, Python dict), or
``os.environ["NCCL_..."]`` anywhere (kept apart: an unanchored branch would make the line scan
try every position)."""
_ENV_OPTS = frozenset({"-x", "-e", "--env", "-genv", "--env="})
_SHELL_WORD_RE = re.compile(r"^\s*(?:export|env|declare|local|readonly|set|if|then|for)\b")


def _detect(text: str) -> float:
    if "NCCL_" not in text:  # cheap exit before the line-anchored scan
        return 0.0
    hits = 0
    for _ in _NCCL_ASSIGN_LINE_RE.finditer(text):
        hits += 1
        if hits >= 2:
            return 0.9
    if "environ" in text:
        hits += len(_NCCL_ENVIRON_RE.findall(text, 0))
    if hits >= 2:
        return 0.9
    return 0.6 if hits == 1 else 0.0


def _is_diff(lines: list[str]) -> bool:
    """A unified-diff paste: some line added (``+`` then blank or quote) and every line a diff
    line (``+``, ``-``, a context line's leading blank, ``@@``). A Kubernetes ``- name:`` list
    has no ``+`` line; shell xtrace (``+ export ...``) reads the same either way."""
    body = [ln for ln in lines if ln.strip()]
    added = any(ln[:1] == "+" and ln[1:2] in (" ", "\t", '"', "'") for ln in body)
    return added and all(ln[:1] in ("+", "-", " ", "\t") or ln.startswith("@@") for ln in body)


def _strip_comment(line: str) -> str:
    """``line`` without a trailing ``# comment`` (a ``#`` outside quotes after whitespace)."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _read_value(line: str, pos: int) -> tuple[str, int]:
    """The shell word starting at ``pos`` (quotes joined and removed, ``$(...)`` kept whole)
    and the position after it."""
    out: list[str] = []
    i, n = pos, len(line)
    while i < n:
        ch = line[i]
        if ch in "'\"":
            end = line.find(ch, i + 1)
            if end < 0:
                end = n
            out.append(line[i + 1 : end])
            i = end + 1
        elif line.startswith("$(", i) or line.startswith("${", i):
            close = ")" if line[i + 1] == "(" else "}"
            depth, j = 0, i + 1
            while j < n:
                if line[j] == line[i + 1]:
                    depth += 1
                elif line[j] == close:
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            out.append(line[i : j + 1])
            i = j + 1
        elif ch == "`":
            end = line.find("`", i + 1)
            end = n - 1 if end < 0 else end
            out.append(line[i : end + 1])
            i = end + 1
        elif ch.isspace() or ch in ";&|)":
            break
        else:
            out.append(ch)
            i += 1
    return "".join(out), i


def _form(before: str) -> str:
    m = _LAUNCHER_OPT_RE.search(before)
    if m:
        return "mpirun" if m.group(1) in {"-x", "-genv"} else "docker"
    if before.rstrip().endswith("--env="):
        return "docker"
    return "shell"


@register(
    "nccl-env",
    summary="NCCL environment file: /etc/nccl.conf, export lines, mpirun -x, k8s env, env output",
    detect=_detect,
    refs=("S15",),
)
def parse_nccl_env(text: str) -> ParseResult:
    """Parse every variable assignment of an environment file or script (see module doc)."""
    res = ParseResult("nccl-env")
    seen: dict[str, int] = {}
    pending: tuple[str, int, str] | None = None  # k8s "- name:" waiting for its value

    def add(
        no: int, name: str, value: str, form: str, raw: str, dynamic: bool | None = None
    ) -> None:
        if dynamic is None:
            dynamic = bool(_DYNAMIC_RE.search(value))
        if name in seen and name.startswith("NCCL_"):
            res.warn(
                no, f"{name} set again (first at line {seen[name]}); the later value wins", raw
            )
        seen[name] = no
        res.records.append(
            EnvVar(
                line=no, name=name, value=value, form=form, dynamic=dynamic, text=raw.strip()[:200]
            )
        )

    lines = text.splitlines()
    diff = _is_diff(lines)
    for no, line_in in enumerate(lines, 1):
        raw = line_in
        if diff:
            # a review diff: removed lines are not in effect; added and context lines are
            if raw.startswith(("-", "@@", "---", "+++")):
                continue
            raw = raw[1:] if raw[:1] in ("+", " ") else raw
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if pending is not None:
            name, at, first = pending
            pending = None
            m = _K8S_VALUE_RE.match(raw)
            if m:
                add(no, name, _unquote(m.group(1)), "k8s", raw)
                continue
            if _K8S_VALUEFROM_RE.match(raw):
                add(at, name, stripped, "k8s", first, dynamic=True)
                continue
        m = _K8S_NAME_RE.match(raw)
        if m:
            pending = (m.group(1), no, raw)
            continue
        m = _K8S_INLINE_RE.match(raw) or _K8S_INLINE_RE.match(_strip_comment(raw))
        if m:  # "- { name: X, value: "1" }", possibly with a trailing "# comment"
            add(no, m.group(1), _unquote(m.group(2)), "k8s", raw)
            continue
        line = _strip_comment(raw).rstrip()
        if line.endswith("\\"):
            line = line[:-1].rstrip()
        m = _ENVIRON_RE.search(line)
        if m:
            add(no, m.group(1), _unquote(m.group(2)), "python", raw)
            continue
        m = _CONF_RE.match(line)
        if m and not _SHELL_WORD_RE.match(line) and " " not in m.group(2).strip().strip("'\""):
            # NAME=value on its own: conf / env output; the value is the rest of the line
            add(no, m.group(1), _unquote(m.group(2)), "conf", raw)
            continue
        m = _SPACED_RE.match(line)
        if m:
            add(no, m.group(1), _unquote(m.group(2)), "python", raw)
            continue
        m = _MAP_RE.match(line)
        if m:
            value = m.group(3)
            value = value[:-1].rstrip() if m.group(1) and value.endswith(",") else value
            add(no, m.group(2), _unquote(value), "map", raw)
            continue
        if _CONF_RE.match(line) and not _SHELL_WORD_RE.match(line):
            # a NAME=value line whose value has spaces (NCCL_RINGS=0 1|1 0): NCCL reads it whole
            m = _CONF_RE.match(line)
            assert m is not None
            value = m.group(2)
            if "$" not in value and not re.search(r"\s-{1,2}\w", value):
                add(no, m.group(1), _unquote(value), "conf", raw)
                continue
        pos = 0
        while True:
            a = _ASSIGN_START_RE.search(line, pos)
            if a is None:
                break
            value, end = _read_value(line, a.end())
            before = line[: a.start()].split()
            # "ssh -o Key=value", "--opt Key=value": an option's argument, not an environment
            if not (before and before[-1].startswith("-") and before[-1] not in _ENV_OPTS):
                add(no, a.group(1), value, _form(line[: a.start()]), raw)
            pos = max(end, a.end())
    return res

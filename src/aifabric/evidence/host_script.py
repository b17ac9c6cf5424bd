"""Host RoCE provisioning scripts: the *commands* that set a GPU server's NIC QoS, not their output.

Kind ``host-roce-script``. A bash script (or a snippet of one) that provisions lossless RoCE on a
server, as NVIDIA's "lossless RoCE configuration for Linux drivers in DSCP-based QoS mode"
article lays it out and public provisioning repositories keep it (``mlnx_qos -i eth0 --trust
dscp``, ``mlnx_qos -i eth0 --pfc 0,0,0,1,0,0,0,0``, ``cma_roce_tos -d mlx5_0 -t 106``, ``echo
106 > /sys/class/infiniband/mlx5_0/tc/1/traffic_class``), and what ``aifabric render --dialect
host`` writes (``roce-host.sh``). Records, each at the line its command starts on:

* :class:`ScriptQos`: one ``mlnx_qos`` call that sets something (mlnx-tools ``python/mlnx_qos``
  options): ``-i``/``--interface``, ``--trust pcp|dscp``, ``-f``/``--pfc`` (eight 0/1 values, one
  per priority 0-7) → the PFC-enabled priorities, ``--dscp2prio set,D,P`` / ``del,D,P`` /
  ``flush`` (may repeat). ``mlnx_qos`` applies ``--pfc`` first and then exits with "trust and
  dscp2prio commands cannot be used at the same time" when both of those are given: such a call
  keeps only its PFC setting, with a warning.
* :class:`ScriptTos`: the RoCE ToS byte the script sets, from ``cma_roce_tos [-d DEV] [-p PORT]
  -t TOS`` (mlx-tools; defaults ``mlx5_0`` port 1; rdma_cm's ``default_roce_tos``), an ``echo N >``
  (or ``| tee``) into ``/sys/class/infiniband/DEV/tc/PORT/traffic_class`` (mlx5 global traffic
  class) or into configfs ``rdma_cm/DEV/ports/PORT/default_roce_tos``; ``dscp = tos >> 2``
  (RFC 2474), ``ecn = tos & 3`` (RFC 3168).
* :class:`ScriptMtu`: ``ip link set [dev] IF mtu N`` (iproute2) or ``ifconfig IF mtu N``.
* :class:`ScriptSysctl`: ``sysctl [-w] name=value``.

Shell handled: comments, ``\\`` line continuations, quotes spanning lines, here-documents (their
body is skipped), ``;``/``&&``/``||``/``|`` lists, ``sudo``/``env``/``VAR=x`` prefixes and
``sh -c '...'`` / ``bash -c '...'`` bodies, ``set -x`` trace prefixes (``+ ``). A word holding a
shell expansion (``$INTERFACE``) is kept as written and marked ``dynamic``; a number the script
does not fix (``-t $TOS``) is a warning, as is a line that is not shell at all. Other commands
are skipped silently: the kind reads the settings above and nothing else.

Detection: 0.9 for a line setting one of them (0.95 for two kinds of setting); nothing when the
text carries command *output* (``Priority trust state``, ``Global tclass=``, a bare number after
``cma_roce_tos``), which the ``mlnx-qos``, ``rdma-traffic-class`` and ``cma-roce-tos`` kinds read.

Sources: mlnx-tools ``python/mlnx_qos`` (options, order of application)
https://github.com/Mellanox/mlnx-tools; https://enterprise-support.nvidia.com/s/article/mlnx-qos;
kernel ``Documentation/ABI/testing/configfs-rdma_cm`` (default_roce_tos, 0-255); the real scripts
under ``tests/fixtures/evidence/host-roce-script/``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = [
    "KIND",
    "ScriptMtu",
    "ScriptQos",
    "ScriptSysctl",
    "ScriptTos",
    "parse_host_script",
]

KIND = "host-roce-script"
_ECN_NAMES = ("Not-ECT", "ECT(1)", "ECT(0)", "CE")


@dataclass(slots=True, kw_only=True)
class ScriptQos(Record):
    """One ``mlnx_qos`` call that sets trust, PFC or the DSCP → priority map."""

    record_type: ClassVar[str] = "script_mlnx_qos"

    interface: str | None
    """``-i`` as written (``$INTERFACE`` when a shell variable: see ``dynamic``)."""
    dynamic: bool = False
    trust: str | None = None
    """``dscp`` or ``pcp`` (lower case)."""
    pfc_priorities: list[int] | None = None
    """Priorities ``--pfc`` enables (None: the call does not set PFC)."""
    dscp_set: dict[int, int] = field(default_factory=dict)
    """``--dscp2prio set,D,P`` entries: DSCP → priority."""
    dscp_deleted: list[int] = field(default_factory=list)
    dscp_flush: bool = False
    text: str = ""


@dataclass(slots=True, kw_only=True)
class ScriptTos(Record):
    """A RoCE ToS byte the script sets for a device port."""

    record_type: ClassVar[str] = "script_roce_tos"

    via: str
    """``cma_roce_tos``, ``traffic_class`` (mlx5 sysfs) or ``default_roce_tos`` (configfs)."""
    device: str | None
    port: int | None
    tos: int
    dscp: int
    ecn: int
    ecn_name: str
    dynamic: bool = False
    """The device name is a shell expansion."""
    text: str = ""


@dataclass(slots=True, kw_only=True)
class ScriptMtu(Record):
    """An interface MTU the script sets."""

    record_type: ClassVar[str] = "script_mtu"

    interface: str
    mtu_bytes: int
    dynamic: bool = False
    text: str = ""


@dataclass(slots=True, kw_only=True)
class ScriptSysctl(Record):
    """A kernel parameter the script sets."""

    record_type: ClassVar[str] = "script_sysctl"

    name: str
    value: str
    text: str = ""


# One character class each, anchored or literal: linear on any line.
_SHELL_START_RE = re.compile(r"^\s*[\w#$\"'/.~{}()\[\]!:&|;<>=+@\\`*-]")
_HEREDOC_RE = re.compile(r"(?<!<)<<(?!<)-?\s*+[\"']?([A-Za-z_]\w*)")
_ASSIGN_RE = re.compile(r"^[A-Za-z_]\w*=")
_TC_PATH_RE = re.compile(r"/sys/class/infiniband/([^/\s]+)/tc/(\d+)/traffic_class$")
_CFS_PATH_RE = re.compile(r"rdma_cm/([^/\s]+)/ports/(\d+)/default_roce_tos$")
_INT_RE = re.compile(r"^\d{1,6}$")
_BARE_RE = re.compile(r"^\s*\d{1,3}\s*$")
_QOS_SET_RE = re.compile(r"(?:^|\s)(?:--(?:trust|pfc|dscp2prio)\b|-f\s*+[\d$])")
_CMA_SET_RE = re.compile(r"\s-t\s*+[\d$]")
_ECHO_RE = re.compile(r"\b(?:echo|printf)\s")
_OUTPUT_MARKERS = (
    "Priority trust state",
    "Global tclass=",
    "PFC configuration:",
    "dscp2prio mapping",
)
_PREFIX_WORDS = frozenset(
    {"sudo", "exec", "command", "time", "nohup", "then", "do", "else", "elif", "if", "while",
     "until", "!", "{", "}", "+", "++", "env"}
)  # fmt: skip
_SUDO_ARG_OPTS = frozenset({"-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t"})
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&", "((", "))"})
_MAX_LOGICAL_LINES = 400
"""Physical lines one command (quotes, continuations) may span before it is given up."""


def _detect(text: str) -> float:
    if not any(w in text for w in ("mlnx_qos", "cma_roce_tos", "traffic_class", "default_roce")):
        return 0.0
    if any(m in text for m in _OUTPUT_MARKERS):
        return 0.0  # a capture of the commands' output: mlnx-qos / rdma-traffic-class read it
    kinds: set[str] = set()
    lines = text.splitlines()
    for i, raw in enumerate(lines[:20000]):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "mlnx_qos" in line and _QOS_SET_RE.search(line):
            kinds.add("qos")
        elif "cma_roce_tos" in line and _CMA_SET_RE.search(line):
            if i + 1 < len(lines) and _BARE_RE.match(lines[i + 1]):
                return 0.0  # the command, then the value it prints: a cma-roce-tos capture
            kinds.add("tos")
        elif ("traffic_class" in line or "default_roce_tos" in line) and _ECHO_RE.search(line):
            kinds.add("tos")
        elif "ip" in line and " mtu " in line and "link" in line:
            kinds.add("mtu")
    if not kinds - {"mtu"}:
        return 0.0
    return 0.95 if len(kinds) > 1 else 0.9


def _scan(line: str, quote: str | None) -> tuple[str | None, bool]:
    """The quote still open at the end of ``line`` (given the one open at its start), and
    whether the line continues on the next (an unquoted trailing backslash). Comments end the
    scan. One pass over the characters: linear."""
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if quote == "'":
            if ch == "'":
                quote = None
        elif ch == "\\":
            if i + 1 >= n:
                return quote, quote is None
            i += 1  # the escaped character
        elif quote == '"':
            if ch == '"':
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t;&|("):
            return quote, False
        i += 1
    return quote, False


def _tokens(text: str) -> list[str]:
    """Shell words and operators of one logical line (quotes removed, comments dropped)."""
    lex = shlex.shlex(text, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    try:
        return list(lex)
    except ValueError:  # an unbalanced quote shlex cannot close: plain words
        return text.split()


def _strip_prefix(argv: list[str]) -> list[str]:
    """``argv`` without ``sudo [opts]``, ``env``, ``VAR=value`` and keyword prefixes."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word in _PREFIX_WORDS or _ASSIGN_RE.match(word):
            i += 1
            continue
        if i > 0 and argv[i - 1] == "sudo" and word.startswith("-"):
            i += 2 if word in _SUDO_ARG_OPTS else 1
            continue
        break
    return argv[i:]


def _dynamic(word: str) -> bool:
    return "$" in word or "`" in word


def _tos_record(
    res: ParseResult, no: int, text: str, via: str, value: str, device: str | None, port: str
) -> None:
    if not _INT_RE.match(value):
        res.warn(no, f"{via}: the ToS is not a number the script fixes ({value[:40]})", text)
        return
    tos = int(value)
    if tos > 255:
        res.warn(no, f"{via}: ToS {tos} outside 0-255", text)
        return
    res.records.append(
        ScriptTos(
            line=no, via=via, device=device, port=int(port) if _INT_RE.match(port) else None,
            tos=tos, dscp=tos >> 2, ecn=tos & 3, ecn_name=_ECN_NAMES[tos & 3],
            dynamic=device is not None and _dynamic(device), text=text[:200],
        )
    )  # fmt: skip


def _write_target(res: ParseResult, no: int, text: str, value: str, path: str) -> None:
    m = _TC_PATH_RE.search(path)
    if m is not None:
        _tos_record(res, no, text, "traffic_class", value, m.group(1), m.group(2))
        return
    m = _CFS_PATH_RE.search(path)
    if m is not None:
        _tos_record(res, no, text, "default_roce_tos", value, m.group(1), m.group(2))


def _options(
    args: list[str], takes_arg: frozenset[str], no_arg: frozenset[str]
) -> list[tuple[str, str]]:
    """(option, value) pairs of an optparse-style argument list: ``--name=value``, ``--name
    value``, ``-xvalue``, ``-x value``; options in ``no_arg`` take none."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if not eq and name not in no_arg and i < len(args):
                value = args[i]
                i += 1
            out.append((name, value))
        elif word.startswith("-") and len(word) >= 2:
            name = word[:2]
            if name in no_arg:
                out.append((name, ""))
            elif len(word) > 2:
                out.append((name, word[2:]))
            elif name in takes_arg and i < len(args):
                out.append((name, args[i]))
                i += 1
            else:
                out.append((name, ""))
    return out


def _mlnx_qos(res: ParseResult, no: int, text: str, args: list[str]) -> None:
    opts = _options(args, frozenset({"-i", "-f", "-F", "-P", "-p", "-s", "-t", "-r", "-d"}),
                    frozenset({"-a", "-h", "--help", "--version"}))  # fmt: skip
    rec = ScriptQos(line=no, interface=None, text=text[:200])
    touched = False
    d2p_given = False
    for name, value in opts:
        if name in ("-i", "--interface"):
            rec.interface = value or None
            rec.dynamic = _dynamic(value)
        elif name == "--trust":
            touched = True
            if value.lower() in ("dscp", "pcp"):
                rec.trust = value.lower()
            else:
                res.warn(no, f"mlnx_qos --trust {value[:40]!r}: not pcp or dscp", text)
        elif name in ("-f", "--pfc"):
            touched = True
            bits = value.split(",")
            if len(bits) == 8 and all(b in ("0", "1") for b in bits):
                rec.pfc_priorities = [p for p, b in enumerate(bits) if b == "1"]
            else:
                res.warn(no, "mlnx_qos --pfc: not eight comma-separated 0/1 values", text)
        elif name == "--dscp2prio":
            touched = d2p_given = True
            _dscp2prio(res, no, text, rec, value)
    if not touched:
        return  # a query, or settings this kind does not read (--prio_tc, --tsa, ...)
    if rec.trust is not None and d2p_given:
        res.warn(
            no,
            "mlnx_qos refuses --trust with --dscp2prio in one call (after applying --pfc); "
            "only the PFC setting of this line is read",
            text,
        )
        rec.trust, rec.dscp_set, rec.dscp_deleted, rec.dscp_flush = None, {}, [], False
    if rec.interface is None:
        res.warn(no, "mlnx_qos without -i INTERFACE (it refuses to run)", text)
        return
    if (
        rec.trust is not None
        or rec.pfc_priorities is not None
        or rec.dscp_set
        or rec.dscp_deleted
        or rec.dscp_flush
    ):
        res.records.append(rec)


def _dscp2prio(res: ParseResult, no: int, text: str, rec: ScriptQos, value: str) -> None:
    if value == "flush":
        rec.dscp_flush = True
        rec.dscp_set.clear()
        return
    parts = value.split(",")
    if (
        len(parts) == 3
        and parts[0] in ("set", "del")
        and _INT_RE.match(parts[1])
        and _INT_RE.match(parts[2])
        and int(parts[1]) <= 63
        and int(parts[2]) <= 7
    ):
        dscp, prio = int(parts[1]), int(parts[2])
        if parts[0] == "set":
            rec.dscp_set[dscp] = prio
        else:
            rec.dscp_set.pop(dscp, None)
            rec.dscp_deleted.append(dscp)
        return
    res.warn(
        no, f"mlnx_qos --dscp2prio {value[:40]!r}: expected set,DSCP,PRIO or del,DSCP,PRIO", text
    )


def _cma_roce_tos(res: ParseResult, no: int, text: str, args: list[str]) -> None:
    opts = dict(_options(args, frozenset({"-d", "-p", "-t", "-m"}), frozenset({"-h"})))
    if "-t" not in opts:
        return  # a read-back, not a setting
    _tos_record(res, no, text, "cma_roce_tos", opts["-t"], opts.get("-d", "mlx5_0"),
                opts.get("-p", "1"))  # fmt: skip


def _mtu(res: ParseResult, no: int, text: str, iface: str | None, value: str) -> None:
    if iface is None:
        return
    if not _INT_RE.match(value) or not 68 <= int(value) <= 65535:
        res.warn(no, f"MTU {value[:40]!r} of {iface[:40]} is not a number in 68-65535", text)
        return
    res.records.append(
        ScriptMtu(line=no, interface=iface, mtu_bytes=int(value), dynamic=_dynamic(iface),
                  text=text[:200])
    )  # fmt: skip


def _ip(res: ParseResult, no: int, text: str, args: list[str]) -> None:
    words = [a for a in args if not a.startswith("-")]
    if len(words) < 4 or not "link".startswith(words[0]) or words[1] != "set":
        return
    rest = words[2:]
    if rest[0] == "dev" and len(rest) > 1:
        rest = rest[1:]
    iface = rest[0]
    if "mtu" in rest[1:]:
        at = rest.index("mtu", 1)
        if at + 1 < len(rest):
            _mtu(res, no, text, iface, rest[at + 1])


def _command(res: ParseResult, no: int, text: str, argv: list[str], stdin: str | None,
             depth: int) -> str | None:  # fmt: skip
    """Read one simple command; returns what it prints when that is a literal (``echo N``),
    for a ``| tee`` after it."""
    argv = _strip_prefix(argv)
    if not argv:
        return None
    words: list[str] = []
    targets: list[str] = []
    i = 0
    while i < len(argv):
        if argv[i] in (">", ">>", ">|") and i + 1 < len(argv):
            targets.append(argv[i + 1])
            i += 2
            continue
        words.append(argv[i])
        i += 1
    if not words:
        return None
    name = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if name in ("sh", "bash") and "-c" in args and depth < 3:
        at = args.index("-c")
        if at + 1 < len(args):
            _logical(res, no, args[at + 1], depth + 1)
        return None
    if name == "mlnx_qos":
        _mlnx_qos(res, no, text, args)
    elif name == "cma_roce_tos":
        _cma_roce_tos(res, no, text, args)
    elif name == "ip":
        _ip(res, no, text, args)
    elif name == "ifconfig" and len(args) >= 3 and "mtu" in args[1:]:
        at = args.index("mtu", 1)
        if at + 1 < len(args):
            _mtu(res, no, text, args[0], args[at + 1])
    elif name == "sysctl":
        for a in args:
            key, eq, value = a.partition("=")
            if eq and key and not key.startswith("-"):
                res.records.append(ScriptSysctl(line=no, name=key.strip(), value=value.strip(),
                                                text=text[:200]))  # fmt: skip
    elif name in ("echo", "printf"):
        values = [a for a in args if not a.startswith("-")]
        if name == "printf" and len(values) > 1:
            values = values[1:]  # printf FORMAT VALUE: the value
        printed = values[0].strip() if values else None
        if printed is not None:
            for t in targets:
                _write_target(res, no, text, printed, t)
        return printed
    elif name == "tee" and stdin is not None:
        for t in args:
            if not t.startswith("-"):
                _write_target(res, no, text, stdin, t)
    return None


def _logical(res: ParseResult, no: int, text: str, depth: int = 0) -> None:
    """Every simple command of one logical line (``;``, ``&&``, ``||``, ``|`` lists)."""
    shown = " ".join(text.split())
    argv: list[str] = []
    printed: str | None = None
    piped: str | None = None
    for tok in [*_tokens(text), ";"]:
        if tok in _SEPARATORS or (tok and set(tok) <= set(";&|()")):
            printed = _command(res, no, shown, argv, piped, depth) if argv else None
            piped = printed if tok == "|" else None
            argv = []
            continue
        argv.append(tok)


@register(
    KIND,
    summary="a host RoCE provisioning script: mlnx_qos --trust/--pfc/--dscp2prio, cma_roce_tos -t, "
    "echo N > .../traffic_class, ip link set IF mtu N, sysctl",
    detect=_detect,
    refs=("S11", "S12", "S14", "S15"),
)
def parse_host_script(text: str) -> ParseResult:
    """Parse a provisioning script into its RoCE settings (see the module doc)."""
    res = ParseResult(KIND)
    quote: str | None = None
    heredoc: tuple[str, bool] | None = None
    buf: list[str] = []
    start = 0
    for no, raw in enumerate(text.splitlines(), 1):
        if heredoc is not None:
            end, tabs = heredoc
            if (raw.lstrip("\t") if tabs else raw).rstrip() == end:
                heredoc = None
            continue
        if not buf:
            if not raw.strip():
                continue
            if not _SHELL_START_RE.match(raw):
                res.warn(no, "not a shell command line", raw)
                continue
            start = no
        buf.append(raw)
        quote, continued = _scan(raw, quote)
        if (quote is not None or continued) and len(buf) < _MAX_LOGICAL_LINES:
            continue
        if quote is not None or continued:
            res.warn(start, f"a command spans over {_MAX_LOGICAL_LINES} lines; not read", buf[0])
            buf, quote = [], None
            continue
        logical = _join(buf)
        buf = []
        if logical.lstrip().startswith("#"):
            continue  # a comment (a "<<EOF" in it opens no here-document)
        hd = _HEREDOC_RE.search(logical)
        if hd is not None:
            heredoc = (hd.group(1), "<<-" in logical)
        _logical(res, start, logical)
    if buf:
        res.warn(start, "unterminated quote at the end of the script; the command is not read",
                 buf[0])  # fmt: skip
    return res


def _join(lines: list[str]) -> str:
    """Physical lines of one command as one string: continuations joined with a space (the
    backslash-newline pair is removed, as the shell does), quoted newlines kept."""
    out = lines[0]
    for nxt in lines[1:]:
        if out.endswith("\\") and (len(out) - len(out.rstrip("\\"))) % 2 == 1:
            out = out[:-1] + " " + nxt
        else:
            out = out + "\n" + nxt
    return out

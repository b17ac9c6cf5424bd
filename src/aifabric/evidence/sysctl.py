"""Kernel parameters as printed by ``sysctl [-a] [NAME...]`` (``net.ipv4.ip_forward = 1``),
``grep . /proc/sys/...`` (``/proc/sys/net/ipv4/ip_forward:1``) and ``cat /proc/sys/PATH`` after
a shell prompt naming the file(s) → one :class:`SysctlValue` per key.

Only a generic key/value record: what a value means is for the verdicts
(:mod:`aifabric.checks.diagnose.verdicts_lab` reads ``net.ipv4.fib_multipath_hash_policy``).
A ``/proc/sys`` path becomes the sysctl name the way procps ``sysctl`` prints it: ``/`` between
components becomes ``.``, and a ``.`` inside a component (a VLAN interface ``eth0.100``) becomes
``/`` (``net.ipv4.conf.eth0/100.rp_filter``). Values are kept as printed (tabs between the
numbers of ``ip_local_port_range`` become one space).

Detection is deliberately conservative, so that ``key = value`` text of other tools is not
taken: most lines must be sysctl names under one of the kernel's top-level directories
(``net``, ``kernel``, ``vm``, ``fs``, ``dev``, ``user``, ``abi``, ``debug``, ``crypto``,
``sunrpc``), or ``/proc/sys`` paths.

``sysctl: permission denied on key ...`` (``sysctl -a`` as a user) and ``sysctl: reading key
...`` lines are skipped; ``sysctl: cannot stat /proc/sys/...: No such file or directory`` (a
key this kernel or namespace lacks: a protocol or module not loaded, an interface that does not
exist) is a :class:`SysctlMissing` record, since a setting the user meant to apply and that does
not exist is a fact about the host; any other unrecognised line is a warning.

Sources: sysctl(8) (procps-ng, https://man7.org/linux/man-pages/man8/sysctl.8.html), the
kernel's Documentation/admin-guide/sysctl/ and networking/ip-sysctl.rst
(https://docs.kernel.org/networking/ip-sysctl.html); captures under
``tests/fixtures/evidence/sysctl/``. Seed refs: S6/S20 (ECMP hash policy).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = ["SysctlMissing", "SysctlSetFailed", "SysctlValue", "parse_sysctl", "proc_path_to_key"]

_TOP = r"(?:net|kernel|vm|fs|dev|user|abi|debug|crypto|sunrpc)"
_KEY_RE = re.compile(rf"^({_TOP}\.[\w.\-/:@+]+)\s*=\s?(.*)$")
_PROC_RE = re.compile(rf"^/proc/sys/({_TOP}/[\w.\-/:@+]+):(.*)$")
_CAT_RE = re.compile(rf"(?:^|\s)/proc/sys/({_TOP}/[\w.\-/:@+]+)")
_MISSING_RE = re.compile(rf"^sysctl: cannot stat /proc/sys/({_TOP}/[\w.\-/:@+]+)(?::|$)")
_SET_FAILED_RE = re.compile(rf"^sysctl: setting key \"({_TOP}\.[\w.\-/:@+]+)\"(?:: (.+))?$")
"""procps-ng ``sysctl -w``: ``sysctl: setting key "KEY": Invalid argument`` (sysctl.c's
``xwarn(_("setting key \"%s\""), ...)``, the errno text after it)."""
_ANY_KEY_RE = re.compile(rf"^\s*{_TOP}\.[\w.\-/:@+]+\s*=", re.MULTILINE)
"""A ``key = value`` line anywhere (leading blanks allowed, as the per-line strip does): the
detector's cheap first test."""
_VALUE_RE = re.compile(r"^[\w.,:/+@=\- \t]*$")
"""What a /proc/sys value looks like (numbers, words, addresses, ranges)."""
_PROMPT_RE = re.compile(r"^(?:[\w@.~:/\-\[\]()]*[$#]\s|\$$|#$)")
"""A shell prompt: what stands before ``$``/``#`` is a user, host, path or venv, never ``%``."""


@dataclass(slots=True, kw_only=True)
class SysctlValue(Record):
    """One kernel parameter and its value as printed."""

    record_type: ClassVar[str] = "sysctl"

    key: str
    """The sysctl name, ``net.ipv4.fib_multipath_hash_policy``."""
    value: str

    @property
    def int_value(self) -> int | None:
        v = self.value.strip()
        return int(v) if v.lstrip("-").isdecimal() and len(v) < 40 else None


@dataclass(slots=True, kw_only=True)
class SysctlMissing(Record):
    """A kernel parameter sysctl could not find (``sysctl: cannot stat /proc/sys/...``)."""

    record_type: ClassVar[str] = "sysctl_missing"

    key: str


@dataclass(slots=True, kw_only=True)
class SysctlSetFailed(Record):
    """A value ``sysctl -w`` could not set (``sysctl: setting key "KEY": Invalid argument``): the
    kernel refused it (out of range, read-only in a container's namespace, wrong type)."""

    record_type: ClassVar[str] = "sysctl_set_failed"

    key: str
    error: str | None = None


def proc_path_to_key(path: str) -> str:
    """``net/ipv4/conf/eth0.100/rp_filter`` → ``net.ipv4.conf.eth0/100.rp_filter``."""
    return ".".join(part.replace(".", "/") for part in path.strip("/").split("/"))


def _is_prompt(stripped: str) -> bool:
    if stripped.startswith(("> cat ", "% cat ")) and "/proc/sys/" in stripped:
        return True  # a ``>`` or ``%`` prompt (a notes page, csh) before the one command it can be
    return _PROMPT_RE.match(stripped) is not None or stripped.startswith("```")


def _parse(text: str, result: ParseResult) -> None:
    pending: list[str] = []  # keys named by a `cat /proc/sys/...` prompt, values to come
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        stripped = line.strip()
        if not stripped:
            continue
        if _is_prompt(stripped):
            pending = [proc_path_to_key(p) for p in _CAT_RE.findall(stripped)]
            continue
        if (m := _KEY_RE.match(stripped)) is not None:
            result.records.append(SysctlValue(line=lineno, key=m.group(1),
                                              value=" ".join(m.group(2).split())))
            continue
        if (m := _PROC_RE.match(stripped)) is not None:
            result.records.append(SysctlValue(line=lineno, key=proc_path_to_key(m.group(1)),
                                              value=" ".join(m.group(2).split())))
            continue
        if pending and _VALUE_RE.match(stripped) is not None:
            result.records.append(SysctlValue(line=lineno, key=pending.pop(0),
                                              value=" ".join(stripped.split())))
            continue
        if stripped.startswith(("sysctl: permission denied", "sysctl: reading key")):
            continue
        if (m := _MISSING_RE.match(stripped)) is not None:
            result.records.append(SysctlMissing(line=lineno, key=proc_path_to_key(m.group(1))))
            continue
        if (m := _SET_FAILED_RE.match(stripped)) is not None:
            result.records.append(SysctlSetFailed(line=lineno, key=m.group(1), error=m.group(2)))
            continue
        if stripped.startswith("sysctl: cannot stat"):
            result.warn(lineno, "key not present on this kernel", line)
            continue
        result.warn(lineno, "unrecognised line in sysctl output", line)


MIN_ECHO_RUN = 2
"""Consecutive ``key = value`` lines that make a log holding them a sysctl capture when nothing
else claims it: ``sysctl -p`` or ``sysctl -w`` run by an installer or a provisioning script
echoes each setting it applies, amid the other program's lines."""


def _detect(text: str) -> float:
    window = text[:65536]
    if (
        "/proc/sys/" not in window
        and "sysctl: setting key" not in window
        and _ANY_KEY_RE.search(window) is None
    ):
        return 0.0  # no line can be a hit (the loop below would score 0)
    total = hits = run = longest = 0
    cat_prompt = False
    for raw in text[:65536].split("\n")[:400]:
        s = raw.strip()
        if not s:
            continue
        if _is_prompt(s):
            cat_prompt = cat_prompt or (_CAT_RE.search(s) is not None and " cat " in f" {s}")
            continue
        total += 1
        named = any(
            rx.match(s) is not None for rx in (_KEY_RE, _PROC_RE, _MISSING_RE, _SET_FAILED_RE)
        )
        run = run + 1 if named else 0
        longest = max(longest, run)
        if named or (cat_prompt and len(s.split()) <= 3 and len(s) < 64):
            hits += 1
    if not total:
        return 0.0
    share = hits / total
    if share >= 0.8:
        return 0.9
    if share >= 0.5:
        return 0.5
    if longest >= MIN_ECHO_RUN:
        return 0.3  # sysctl's echo inside another program's log (a package's postinst, a script)
    return 0.0


@register(
    "sysctl",
    summary="sysctl [-a] [NAME...], grep . /proc/sys/PATH, cat /proc/sys/PATH: kernel parameters",
    detect=_detect,
    refs=("S6", "S20"),
)
def parse_sysctl(text: str) -> ParseResult:
    """Parse sysctl / /proc/sys output; never raises."""
    result = ParseResult(kind="sysctl")
    _parse(text, result)
    if not result.records and not result.warnings and text.strip():
        result.warn(None, "no kernel parameter found")
    return result

"""Read a directory of device configs, a probe bundle and an NCCL environment file into
:class:`Observed`.

Layout (any mix; ``DIR`` is ``--configs`` or ``--bundle``):

* ``DIR/<device>.<ext>``: one file per device, named after the fabric device (``leaf1.json``,
  ``spine2.cfg``, ``leaf3.running-config``: the name is the file name up to the first dot).
  When that is not a fabric device, the hostname the config states (EOS/NX-OS ``hostname``,
  SONiC ``DEVICE_METADATA.localhost.hostname``) is tried, then the longest device name the
  file name starts with before a ``-`` or ``_`` (``leaf1-config_db.json``).
* ``DIR/<device>/<files>``: several captures of one device (a switch's config, or a server's
  ``mlnx_qos``, ``ip link``, ``ibv_devinfo``, sysfs ``traffic_class``, ``default_roce_tos``,
  ``nccl.env`` ...), as a probe bundle stores them.

The kind of each file is detected by the evidence parsers; tiny sysfs/configfs files that carry
no marker are recognised by their file names. Files of kinds verify does not use, or that no
parser recognises, are listed in :attr:`Observed.skipped` with the reason, never silently lost.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol, cast

from aifabric.dialects import host as host_dialect
from aifabric.dialects.observed import Observed, ObservedDevice, Src, Val
from aifabric.errors import InputError
from aifabric.evidence import parse_file
from aifabric.evidence.base import ParseResult
from aifabric.inputs import is_parsed_companion

__all__ = ["SWITCH_KINDS", "interpreter", "load_observed"]


class _Interpret(Protocol):
    def __call__(self, result: ParseResult, *, file: str, name: str) -> ObservedDevice: ...


SWITCH_KINDS: dict[str, str] = {
    "sonic-config-db": "aifabric.dialects.sonic",
    "eos-config": "aifabric.dialects.eos",
    "nxos-config": "aifabric.dialects.nxos",
    "nvue": "aifabric.dialects.nvue",
    "cumulus-traffic-conf": "aifabric.dialects.cumulus",
}
"""Evidence kind of a switch config → module with its ``interpret(result, file=, name=)``."""

_NAMED_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^traffic_class$"), "rdma-traffic-class"),
    (re.compile(r"^(default_roce_tos|cma_roce_tos.*)$"), "cma-roce-tos"),
    (re.compile(r"^(nccl\.conf|.*\.env|nccl[-_.]?env.*)$"), "nccl-env"),
)
_HOSTNAME = (
    re.compile(r"^hostname\s+(\S+)", re.MULTILINE),
    re.compile(r'"hostname"\s*:\s*"([^"]+)"'),
)
_SKIP_NAMES = {
    "meta.yaml", "README", "README.md", ".gitkeep", "manifest.json", "_changes", "EXPLAIN.md"
}
"""Names the readers pass over: fixture metadata, probe manifests, render's change plans."""


def interpreter(kind: str) -> _Interpret:
    """The ``interpret(result, file=, name=)`` of a switch-config kind (``SWITCH_KINDS``): what
    verify and diagnose (``checks/diagnose/derive_switch.py``) read a parsed config with."""
    module = importlib.import_module(SWITCH_KINDS[kind])
    return cast(_Interpret, module.interpret)


def _kind_by_name(path: Path) -> str | None:
    for pattern, kind in _NAMED_KINDS:
        if pattern.match(path.name):
            return kind
    return None


def _files(root: Path) -> Iterable[tuple[Path, str | None]]:
    """Files under ``root`` with the device their location names (None: the file's own)."""
    for path in sorted(root.iterdir()):
        if path.name.startswith(".") or path.name in _SKIP_NAMES:
            continue
        if path.is_dir():
            for sub in sorted(path.rglob("*")):
                if (sub.is_file() and not sub.name.startswith(".")
                        and sub.name not in _SKIP_NAMES and not is_parsed_companion(sub)):
                    yield sub, path.name
        elif path.is_file():
            yield path, None


def _device_name(path: Path, given: str | None, known: set[str], text_head: str) -> str:
    if given is not None:
        return given
    stem = path.name.split(".", 1)[0]
    if stem in known or not known:
        return stem
    for pattern in _HOSTNAME:
        m = pattern.search(text_head)
        if m and m.group(1) in known:
            return m.group(1)
    # "leaf01-config_db", "leaf01_running": the longest device name the file name starts with
    prefixed = [k for k in known if stem.startswith(k) and stem[len(k) : len(k) + 1] in "-_"]
    return max(prefixed, key=len) if prefixed else stem


def load_observed(
    *,
    configs: Path | None = None,
    bundle: Path | None = None,
    nccl_env: Path | None = None,
    devices: Iterable[str] = (),
    switches: Iterable[str] = (),
    on_file: Callable[[Path], None] | None = None,
) -> Observed:
    """Read everything given into one :class:`Observed`. ``devices`` are the fabric's device
    names (to attribute files); ``switches`` those that are switches or middleboxes, whose
    Linux captures (``ip link`` of a SONiC, Cumulus or lab switch) describe switch ports;
    ``on_file`` is called per file (progress)."""
    known = set(devices)
    linux_switches = set(switches)
    obs = Observed()
    host_files: dict[str, list[tuple[str, ParseResult]]] = {}
    for root in (configs, bundle):
        if root is None:
            continue
        if not root.is_dir():
            raise InputError(f"{root}: not a directory (expected a directory of device files)")
        for path, given in _files(root):
            if on_file is not None:
                on_file(path)
            rel = str(path.relative_to(root.parent)) if root.parent != path else str(path)
            kind = _kind_by_name(path)
            try:
                result = parse_file(path, kind)
            except InputError as exc:
                obs.skipped.append(f"{rel}: {exc}")
                continue
            with path.open(encoding="utf-8", errors="replace") as fh:
                head = fh.read(20000)
            name = _device_name(path, given, known, head)
            for w in result.warnings[:5]:
                what = f"{w.message}: {w.text[:60]}" if w.text else w.message
                obs.skipped.append(f"{rel} line {w.line}: {what}")
            if len(result.warnings) > 5:
                obs.skipped.append(f"{rel}: {len(result.warnings) - 5} more unread lines")
            if result.kind in SWITCH_KINDS:
                dev = interpreter(result.kind)(result, file=rel, name=name)
                _add(obs, dev)
            elif result.kind in host_dialect.HOST_KINDS:
                host_files.setdefault(name, []).append((rel, result))
            elif result.kind == "nccl-env" or _has_env(result):
                _add_env(obs, rel, result)
            else:
                obs.skipped.append(f"{rel}: a {result.kind} capture; verify does not use it")
    for name, results in host_files.items():
        if name in linux_switches:
            _add(obs, host_dialect.interpret_linux_switch(results, name=name))
            continue
        existing = obs.devices.get(name)
        dev = host_dialect.interpret(
            results, name=name, dev=existing if existing and existing.role == "host" else None
        )
        obs.devices[name] = dev
    if nccl_env is not None:
        result = parse_file(nccl_env, "nccl-env" if _kind_by_name(nccl_env) else None)
        _add_env(obs, str(nccl_env), result)
    return obs


def _has_env(result: ParseResult) -> bool:
    return any(r.record_type in ("nccl_env", "env") for r in result.records)


def _add_env(obs: Observed, file: str, result: ParseResult) -> None:
    """NCCL variables of ``result``: the assignment in effect wins (the last in a file, and a
    later file over an earlier one, as a later ``export`` would). NCCL log lines ``NCCL_X set by
    environment to Y`` count as assignments too."""
    env = obs.nccl_env if obs.nccl_env is not None else {}
    for rec in result.records:
        if rec.record_type not in ("env", "nccl_env"):
            continue
        name = getattr(rec, "name", None)
        value = getattr(rec, "value", None)
        if isinstance(name, str) and isinstance(value, str):
            text = getattr(rec, "text", None) or f"{name}={value}"
            env[name] = Val(value, Src(file, rec.line, text))
    obs.nccl_env = env


def _add(obs: Observed, dev: ObservedDevice) -> None:
    """Add a switch; a second file for the same device fills in what the first left unknown."""
    old = obs.devices.get(dev.name)
    if old is None:
        obs.devices[dev.name] = dev
        return
    old.files += dev.files
    old.notes += dev.notes
    old.defaults = old.defaults.merged_over(dev.defaults)
    for port, view in dev.ports.items():
        mine = old.ports.get(port)
        old.ports[port] = view if mine is None else mine.merged_over(view)
    for neutral, vendor in dev.neutral.items():
        old.neutral.setdefault(neutral, vendor)
    for q, s in dev.schedulers.items():
        old.schedulers.setdefault(q, s)
    old.buffer_bytes = old.buffer_bytes or dev.buffer_bytes
    old.settle_defaults()

"""Input limits as policy (issue 16): regular files and stdin only, size caps, nesting depth,
and output errors, each one clear line with exit code 2 or 3, never a hang or a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from aifabric.errors import InputError
from aifabric.inputs import (
    MAX_NESTING,
    NestingError,
    check_nesting,
    close_truncated_json,
    input_limit,
    loads_json,
    nesting_depth,
    read_input,
)
from tests.conftest import EXAMPLES, run_cli

S7 = EXAMPLES / "s7-worked-example.yaml"


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# ------------------------------------------------------------------ nesting depth


def _json_depth(value: object) -> int:
    """Independent depth of a decoded JSON value (containers count one level each)."""
    if isinstance(value, dict):
        return 1 + max((_json_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_json_depth(v) for v in value), default=0)
    return 0


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=20,
)


@given(value=_JSON, indent=st.sampled_from([None, 1, 4, 8]))
def test_json_depth_matches_the_decoded_structure(value: object, indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    assert nesting_depth(text, yaml=False)[0] == _json_depth(value)


@given(value=_JSON)
def test_yaml_depth_bounds_the_structure_from_above(value: object) -> None:
    """Block YAML (as PyYAML writes it) is never reported shallower than it is."""
    text = yaml.safe_dump(value, default_flow_style=False)
    assert nesting_depth(text)[0] >= _json_depth(value)


def test_real_documents_are_far_below_the_limit() -> None:
    assert nesting_depth(S7.read_text())[0] < 10
    config_db = next(
        Path(__file__).resolve().parents[1].glob("fixtures/evidence/sonic-config-db/*/input.txt")
    )
    assert nesting_depth(config_db.read_text(), yaml=False)[0] < 10


def test_deep_json_is_refused_with_its_line() -> None:
    text = "{\n" + '"a": [' * 5000 + "]" * 5000 + "}"
    with pytest.raises(NestingError) as err:
        loads_json(text, "deep.json")
    assert err.value.lineno == 2
    assert f"nested deeper than {MAX_NESTING} levels" in str(err.value)
    assert isinstance(err.value, ValueError)  # parsers treating bad JSON as "not JSON" still do


def test_brackets_in_strings_do_not_count() -> None:
    assert nesting_depth('{"k": "[[[[[[{{{{"}', yaml=False)[0] == 1
    assert nesting_depth('{"k": "\\"[[["}', yaml=False)[0] == 1
    check_nesting("k: '[[[[[['\n", "a.yaml", limit=2)


def test_deep_yaml_block_and_flow_are_refused() -> None:
    block = "".join(" " * i + "k:\n" for i in range(MAX_NESTING + 5))
    with pytest.raises(NestingError):
        check_nesting(block, "block.yaml")
    with pytest.raises(NestingError):
        check_nesting("- " * (MAX_NESTING + 5) + "x\n", "seq.yaml")
    with pytest.raises(NestingError):
        check_nesting("k: " + "[" * 1000 + "]" * 1000, "flow.yaml")


# ------------------------------------------------------------------ files, devices, caps


def test_fifo_and_device_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        t = time.monotonic()
        res = run_cli("parse", str(path))
        assert res.code == 2
        line = _one_line(res.err)
        assert "not a regular file" in line
        assert time.monotonic() - t < 30  # a process start; the refusal itself is immediate
    with pytest.raises(InputError, match="FIFO"):
        read_input(fifo)


def test_stdin_of_zeros_is_refused_early() -> None:
    with open("/dev/zero", "rb") as zero:
        proc = subprocess.run(
            [sys.executable, "-m", "aifabric", "parse", "-"],
            stdin=zero,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert proc.returncode == 2
    assert "binary data" in _one_line(proc.stderr)


def test_size_cap_is_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "ping.txt"
    big.write_text("PING 10.0.0.2 (10.0.0.2) 8972(9000) bytes of data.\n" * 100)
    monkeypatch.setenv("AIFABRIC_MAX_INPUT", "1K")
    assert input_limit("capture") == 1024
    with pytest.raises(InputError, match=r"KiB is over the 1 KiB limit for capture input"):
        read_input(big)
    env = dict(os.environ, AIFABRIC_MAX_INPUT="1K")
    proc = subprocess.run(
        [sys.executable, "-m", "aifabric", "parse", str(big)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "AIFABRIC_MAX_INPUT" in _one_line(proc.stderr)
    monkeypatch.setenv("AIFABRIC_MAX_INPUT", "lots")
    with pytest.raises(InputError, match="AIFABRIC_MAX_INPUT"):
        input_limit("capture")


@pytest.mark.parametrize("command", ["show", "check", "estimate-fabric", "parse", "catalog"])
def test_deeply_nested_documents_exit_2(tmp_path: Path, command: str) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 5000 + "]" * 5000)
    deep_yaml = tmp_path / "deep.yaml"
    deep_yaml.write_text("k: " + "[" * 5000 + "]" * 5000 + "\n")
    args = {
        "show": ["show", str(deep)],
        "check": ["check", str(deep_yaml)],
        "estimate-fabric": ["estimate", str(deep_yaml)],
        "parse": ["parse", str(deep), "--kind", "ip-link"],
        "catalog": ["catalog", "--catalog", str(deep_yaml)],
    }[command]
    res = run_cli(*args)
    assert res.code == 2, res.err
    _one_line(res.err)


# ------------------------------------------------------------------ output errors


def test_full_disk_exits_3_with_one_line() -> None:
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "aifabric", "show", str(S7), "--format", "json"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    assert proc.returncode == 3
    assert "No space left on device" in _one_line(proc.stderr)


def test_closed_pipe_exits_3_with_one_line() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "aifabric", "show", str(S7), "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()  # the reader goes away, as `| head -c 10` does
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 3
    assert "Broken pipe" in _one_line(err)


# -- JSON cut short ------------------------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(_JSON, st.integers(min_value=0, max_value=10_000), st.sampled_from([None, 2]))
def test_truncated_json_closes_to_valid_json_or_none(
    doc: Any, cut: int, indent: int | None
) -> None:
    text = json.dumps(doc, indent=indent)
    prefix = text[: cut % (len(text) + 1)]
    closed = close_truncated_json(prefix)
    if closed is None:
        return
    value = json.loads(closed[0])  # always parses
    assert isinstance(value, (dict, list))
    assert 1 <= closed[1] <= prefix.count("\n") + 1
    assert prefix.startswith(closed[0].rstrip("]}"))  # only closers were added


def test_complete_json_is_not_truncated() -> None:
    assert close_truncated_json('{"a": [1, 2], "b": {"c": 3}}') is None
    assert close_truncated_json("[1, 2]") is None


def test_truncated_json_keeps_every_complete_member() -> None:
    text = '{\n "peers": {\n  "a": {"state": "Established"},\n  "b": {"state": "Act'
    closed = close_truncated_json(text)
    assert closed is not None
    assert json.loads(closed[0]) == {"peers": {"a": {"state": "Established"}}}
    assert closed[1] == 3

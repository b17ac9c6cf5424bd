"""Reading YAML files into strict models with errors that name the file, the line and the field.

The fast path parses with libyaml and validates once. Only when validation fails is the text
composed again into a node tree to find the line of the offending field, so that a 10 MB fabric
file loads at full speed and a typo still gets ``fabric.yaml:12: links[3].speeed_gbps: unknown
field (did you mean 'speed_gbps'?)``.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar, Union

import yaml
from pydantic import BaseModel, ValidationError

from aifabric.errors import FabricFileError
from aifabric.inputs import MAX_NESTING, NestingError, check_nesting, read_input

__all__ = [
    "format_loc",
    "line_of",
    "load_packaged_yaml",
    "read_text",
    "read_yaml_text",
    "validate_data",
    "yaml_error_to_input_error",
]

M = TypeVar("M", bound=BaseModel)

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_packaged_yaml(folder: str, model: type[M]) -> Iterator[tuple[str, M]]:
    """``(name, model)`` for every ``*.yaml`` in ``aifabric/<folder>`` (package data shipped
    with aifabric: rules, signature catalogues), by file name; errors name the file and line."""
    root = resources.files("aifabric").joinpath(folder)
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".yaml"):
            continue
        text = entry.read_text(encoding="utf-8")
        name = f"{folder}/{entry.name}"
        yield name, validate_data(model, read_yaml_text(text, file=name), file=name, text=text)


def read_yaml_text(text: str, *, file: str) -> Any:
    """Parse YAML text; syntax errors become :class:`FabricFileError` with the line (and a
    document nested deeper than :data:`aifabric.inputs.MAX_NESTING` is refused before)."""
    _check_nesting(text, file)
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise yaml_error_to_input_error(exc, file) from None


def yaml_error_to_input_error(exc: yaml.YAMLError, file: str) -> FabricFileError:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    line = mark.line + 1 if mark is not None else None
    return FabricFileError(f"invalid YAML: {problem}", file=file, line=line)


def format_loc(loc: Sequence[str | int]) -> str:
    """``("links", 3, "speed_gbps") -> "links[3].speed_gbps"``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def line_of(text: str, loc: Sequence[str | int]) -> int | None:
    """1-based line of the deepest node of ``loc`` found in the YAML ``text``."""
    try:
        _check_nesting(text, "<text>")
        node = yaml.compose(text, Loader=_Loader)
    except (yaml.YAMLError, FabricFileError):
        return None
    line: int | None = None
    for part in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            nxt = None
            for key, value in node.value:
                if str(key.value) == str(part):
                    line = key.start_mark.line + 1
                    nxt = value
                    break
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            node = node.value[part] if 0 <= part < len(node.value) else None
        else:
            node = None
    if node is not None:
        line = node.start_mark.line + 1
    return line


def _clean_loc(loc: Sequence[str | int]) -> tuple[str | int, ...]:
    """Drop pydantic's internal location parts (validator and union tags)."""
    return tuple(p for p in loc if isinstance(p, int) or "[" not in p)


def _unwrap(annotation: Any) -> list[Any]:
    """Candidate model/containers inside an annotation (Annotated, Optional, unions)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        out: list[Any] = []
        for arg in typing.get_args(annotation):
            if arg is not type(None):
                out.extend(_unwrap(arg))
        return out
    return [annotation]


def _fields_at(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """Field names of the model found at ``loc`` (for did-you-mean suggestions)."""
    current: list[Any] = [model]
    for part in loc:
        nxt: list[Any] = []
        for ann in current:
            origin = typing.get_origin(ann)
            if isinstance(ann, type) and issubclass(ann, BaseModel) and isinstance(part, str):
                info = ann.model_fields.get(part)
                if info is not None:
                    nxt.extend(_unwrap(info.annotation))
            elif origin in (tuple, list) and isinstance(part, int):
                nxt.extend(_unwrap(typing.get_args(ann)[0]))
            elif origin is dict:
                nxt.extend(_unwrap(typing.get_args(ann)[1]))
        current = nxt
    for ann in current:
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            return list(ann.model_fields)
    return []


def _describe(error: Any, model: type[BaseModel]) -> str:
    kind = error["type"]
    loc = _clean_loc(error["loc"])
    value = error.get("input")
    name = loc[-1] if loc else ""
    if kind == "extra_forbidden":
        known = _fields_at(model, loc[:-1])
        close = difflib.get_close_matches(str(name), known, n=1)
        hint = (
            f" (did you mean {close[0]!r}?)"
            if close
            else (f" (known fields: {', '.join(known)})" if known else "")
        )
        return f"unknown field {name!r}{hint}"
    if kind == "missing":
        return f"required field {name!r} is missing"
    if isinstance(value, str) and isinstance(name, str) and kind in {"int_type", "float_type"}:
        for suffix, unit in (
            ("_gbps", "Gb/s"),
            ("_bytes", "bytes"),
            ("_m", "metres"),
            ("_GBps", "GB/s"),
            ("_ms", "ms"),
            ("_ns", "ns"),
        ):
            if name.endswith(suffix):
                return (
                    f"expected a number in {unit} (the field name carries the unit), got {value!r}"
                )
    message = str(error["msg"])
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    if value is not None and not isinstance(value, dict | list) and kind != "value_error":
        message += f", got {value!r}"
    return message


def validate_data(model: type[M], data: Any, *, file: str, text: str | None = None) -> M:
    """Validate ``data`` (parsed from ``text``) as ``model``; errors name file, line, field.

    Only the first error is reported (one clear line, exit code 2); the count of the others
    is appended so nobody thinks it was the only one.
    """
    if data is None:
        raise FabricFileError("the file is empty", file=file)
    if not isinstance(data, dict):
        raise FabricFileError(
            f"expected a mapping at the top level, got {type(data).__name__}", file=file, line=1
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        # A typo in a field name shows up twice: an unknown field and a missing one. The
        # unknown one is the cause, so report it first.
        errors.sort(key=lambda e: e["type"] != "extra_forbidden")
        first = errors[0]
        loc = _clean_loc(first["loc"])
        line = line_of(text, loc) if text is not None else None
        message = _describe(first, model)
        if len(errors) > 1:
            message += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
        raise FabricFileError(
            message, file=file, line=line, field=format_loc(loc) or None
        ) from None


def _check_nesting(text: str, file: str) -> None:
    try:
        check_nesting(text, file)
    except NestingError as exc:
        raise FabricFileError(
            f"nested deeper than {MAX_NESTING} levels; refusing to decode it",
            file=file,
            line=exc.lineno,
        ) from None


def read_text(path: str | Path) -> str:
    """Read a fabric file or catalog as UTF-8 under the input policy (:mod:`aifabric.inputs`:
    regular files only, size cap); unreadable files become one-line input errors."""
    p = Path(path)
    try:
        if p.is_dir():
            raise FabricFileError("is a directory, expected a YAML file", file=str(p))
        if not p.exists():
            raise FabricFileError("no such file", file=str(p))
        return read_input(p, "fabric").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FabricFileError(f"cannot read: {exc}", file=str(p)) from None

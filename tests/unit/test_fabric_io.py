"""Fabric files: valid files load; every kind of mistake names file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aifabric.errors import FabricFileError
from aifabric.model import (
    DesignDocument,
    Fabric,
    dump_fabric,
    dump_fabric_json,
    fabric_json_schema,
    parse_document,
    read_document,
)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "fabrics" / "two-servers.yaml"


def _broken(tmp_path: Path, old: str, new: str) -> Path:
    text = FIXTURE.read_text()
    assert old in text
    path = tmp_path / "broken.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


def _line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(needle)


def test_fixture_loads() -> None:
    fabric = read_document(FIXTURE)
    assert isinstance(fabric, Fabric)
    assert [s.name for s in fabric.servers] == ["gpu1", "gpu2"]
    assert str(fabric.links[0].a) == "gpu1:nic0"
    assert fabric.links[1].b.port == "Ethernet2"


def test_typo_in_field_name(tmp_path: Path) -> None:
    path = _broken(tmp_path, "port_speed_gbps: 400", "port_sped_gbps: 400")
    with pytest.raises(FabricFileError) as info:
        read_document(path)
    err = info.value
    assert err.line == _line_of(path, "port_sped_gbps")
    assert err.field == "switches[0].port_sped_gbps"
    assert "did you mean 'port_speed_gbps'" in str(err)
    assert str(err).startswith(f"{path}:{err.line}: ")
    assert "\n" not in str(err)


def test_typo_inside_a_flow_mapping(tmp_path: Path) -> None:
    path = _broken(
        tmp_path,
        "kind: host, speed_gbps: 400, mtu_bytes: 9000, length_m: 2}\n- {a: gpu2",
        "kind: host, speeed_gbps: 400, mtu_bytes: 9000, length_m: 2}\n- {a: gpu2",
    )
    with pytest.raises(FabricFileError) as info:
        read_document(path)
    assert info.value.field == "links[0].speeed_gbps"
    assert info.value.line == _line_of(path, "speeed_gbps")


def test_unit_in_a_unit_suffixed_field(tmp_path: Path) -> None:
    path = _broken(tmp_path, "port_speed_gbps: 400", "port_speed_gbps: 400G")
    with pytest.raises(FabricFileError, match="field name carries the unit"):
        read_document(path)


def test_missing_required_field(tmp_path: Path) -> None:
    path = _broken(tmp_path, "  switch_class: datacenter\n", "")
    with pytest.raises(FabricFileError, match="required field 'switch_class'") as info:
        read_document(path)
    assert info.value.field == "switches[0].switch_class"
    assert info.value.line == _line_of(path, "- name: leaf1")


def test_yaml_syntax_error_has_line(tmp_path: Path) -> None:
    path = _broken(tmp_path, "role: leaf", "role: [leaf")
    with pytest.raises(FabricFileError, match="invalid YAML") as info:
        read_document(path)
    assert info.value.line is not None


def test_link_to_unknown_device(tmp_path: Path) -> None:
    path = _broken(tmp_path, "b: leaf1:Ethernet2", "b: leaf9:Ethernet2")
    with pytest.raises(FabricFileError, match="unknown device 'leaf9'") as info:
        read_document(path)
    assert info.value.field == "links[1].b"
    assert info.value.line == _line_of(path, "leaf9")


def test_port_cabled_twice(tmp_path: Path) -> None:
    path = _broken(tmp_path, "b: leaf1:Ethernet2", "b: leaf1:Ethernet1")
    with pytest.raises(FabricFileError, match="already cabled"):
        read_document(path)


def test_bad_endpoint_and_bad_ip(tmp_path: Path) -> None:
    path = _broken(tmp_path, "a: gpu2:nic0", "a: gpu2")
    with pytest.raises(FabricFileError, match="device:port"):
        read_document(path)
    path = _broken(
        tmp_path, "length_m: 2}\n- {a: gpu2", "length_m: 2, a_ipv4: 10.0.0.300/31}\n- {a: gpu2"
    )
    with pytest.raises(FabricFileError, match="pattern") as info:
        read_document(path)
    assert info.value.field == "links[0].a_ipv4"


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(FabricFileError, match="no such file"):
        read_document(tmp_path / "nope.yaml")
    with pytest.raises(FabricFileError, match="directory"):
        read_document(tmp_path)


def test_empty_and_non_mapping(tmp_path: Path) -> None:
    for text, match in (("", "empty"), ("- 1\n- 2\n", "mapping")):
        path = tmp_path / "x.yaml"
        path.write_text(text)
        with pytest.raises(FabricFileError, match=match):
            read_document(path)


def test_yaml_and_json_roundtrip() -> None:
    fabric = read_document(FIXTURE)
    assert isinstance(fabric, Fabric)
    assert parse_document(dump_fabric(fabric), file="x.yaml") == fabric
    assert parse_document(dump_fabric_json(fabric), file="x.json") == fabric


def test_json_error_has_line(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text('{\n  "name": "x",\n  "links": [,]\n}\n')
    with pytest.raises(FabricFileError, match="invalid JSON") as info:
        read_document(path)
    assert info.value.line == 3


def test_design_document(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(
        "design:\n  gpus: 64\n  gpus_per_server: 8\n  nic_speed_gbps: 400\n"
        "  switch_ports: 64\n  switch_speed_gbps: 400\n"
    )
    doc = read_document(path)
    assert isinstance(doc, DesignDocument)
    assert doc.design.servers == 8
    path.write_text(
        "design:\n  gpus: 60\n  gpus_per_server: 8\n  nic_speed_gbps: 400\n"
        "  switch_ports: 64\n  switch_speed_gbps: 400\n"
    )
    with pytest.raises(FabricFileError, match="not divisible"):
        read_document(path)


def test_schema_is_json_and_covers_both_forms() -> None:
    schema = json.loads(fabric_json_schema())
    assert len(schema["oneOf"]) == 2
    assert "Link" in schema["$defs"] and "DesignSpec" in schema["$defs"]
    link = schema["$defs"]["Link"]
    assert link["additionalProperties"] is False
    assert link["properties"]["a"]["type"] == "string"

"""SONiC config_db → observed model, on real configs (values read from the files by hand)."""

from __future__ import annotations

from pathlib import Path

from aifabric.dialects.observed import ObservedDevice
from aifabric.dialects.sonic import interpret
from aifabric.evidence import parse_file

EV = Path(__file__).resolve().parents[2] / "fixtures" / "evidence" / "sonic-config-db"


def _dev(case: str) -> ObservedDevice:
    path = EV / case / "input.json"
    return interpret(parse_file(path, "sonic-config-db"), file=f"{case}.json", name="leaf01")


def test_default_azure_maps_bound_per_port() -> None:
    dev = _dev("db-migrator-reference-format-3-0-1")
    v = dev.view("Ethernet0")
    # qos_config.j2 default: DSCP 26 -> TC 1 (lossy), 3 -> 3, 4 -> 4, 48 -> 6, 46 -> 5
    assert v.tc_of_dscp(26) == 1
    assert v.tc_of_dscp(3) == 3 and v.tc_of_dscp(4) == 4
    assert v.tc_of_dscp(48) == 6 and v.tc_of_dscp(46) == 5
    assert v.pfc_priorities.value == (3, 4)
    assert v.trust.value == "dscp"
    assert v.mtu_bytes.value == 9100
    # QUEUE|Ethernet0|3-4 binds WRED AZURE_LOSSLESS: ECN 1 MiB / 2 MiB
    ecn = [m for m in v.ecn if m.covers(3)]
    assert ecn and ecn[0].kmin_bytes == 1048576 and ecn[0].kmax_bytes == 2097152
    assert ecn[0].enabled is True
    # neutral names follow lane order: Ethernet0 is front-panel port 1
    assert dev.neutral["Ethernet1"] == "Ethernet0"


def test_pfc_watchdog_per_port_from_flat_redis_keys() -> None:
    dev = _dev("utilities-mock-tables-flat-redis-keys")
    assert dev.view("Ethernet0").pfc_watchdog.value is True
    assert dev.view("Ethernet4").pfc_watchdog.value is True
    assert dev.ports["Ethernet8"].pfc_watchdog is None


def test_fragment_without_maps_states_pfc_only() -> None:
    dev = _dev("pfcwd-issue-pfc-json-fragment")
    v = dev.view("Ethernet120")
    assert v.pfc_priorities.value == (0, 1)
    assert v.dscp_to_tc is None
    # the only port stating PFC sets the device default (a fabric port missing from the dump)
    assert dev.whole().pfc_priorities.value == (0, 1)


def test_headroom_and_cable_length() -> None:
    dev = _dev("utilities-qos-reload-t1-buffers")
    assert dev.ports["Ethernet0"].cable_length_m.value == 300.0
    assert dev.buffer_bytes is not None

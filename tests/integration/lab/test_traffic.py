"""Traffic through real labs: iperf3 patterns, per-link counters, and the seed's case study
(S17) as two labs side by side.

Expected values come from the fabric files (link speeds, the firewall's per-session limit, MTUs)
and from TCP/IP header sizes, not from what the code printed; each tolerance says where its
slack comes from."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from aifabric.catalog import load_catalog
from aifabric.cli.lab_traffic_cmd import traffic
from aifabric.design import load_fabric
from aifabric.lab.compare import compare_labs
from aifabric.lab.faults import add_fault, clear_faults
from aifabric.lab.lifecycle import lab_down, lab_up
from aifabric.lab.netns import lab_namespaces
from aifabric.lab.plan import LabPlan
from aifabric.lab.traffic import run_traffic
from aifabric.model import Fabric

from .conftest import EXAMPLES, needs_lab, new_name

pytestmark = needs_lab

LAB_2X4 = EXAMPLES / "lab-2x4x16.yaml"
S17_BEFORE = EXAMPLES / "s17-case-study-before.yaml"
S17_AFTER = EXAMPLES / "s17-case-study-after.yaml"


def _fabric(path: Path) -> Fabric:
    return load_fabric(path, load_catalog())


@pytest.fixture(scope="module")
def lab2x4() -> Iterator[LabPlan]:
    """examples/lab-2x4x16.yaml, 2 servers per leaf (srv01 srv02 | srv05 srv06 | srv09 srv10 |
    srv13 srv14), every link shaped to speed / 1000 (400G -> 400 Mb/s) so a few flows stay
    within what two cores move."""
    name = new_name("tr")
    try:
        state = lab_up(_fabric(LAB_2X4), name, rate_scale=1000)
        assert state.converged is True
        yield state.plan
    finally:
        lab_down(name)


def _spine_shares(result: dict[str, Any], leaves: set[str]) -> dict[str, float]:
    """Share of the named leaves' uplink bytes that went to each spine (all leaves summed)."""
    per_spine: dict[str, int] = {}
    for row in result["links"]:
        if row["uplink"] and row["link"].split(":")[0] in leaves:
            spine = row["peer"].split(":")[0]
            per_spine[spine] = per_spine.get(spine, 0) + row["tx_bytes"]
    total = sum(per_spine.values())
    return {s: b / total for s, b in per_spine.items()}


def test_l4_hashing_spreads_streams_over_both_spines_l3_pins_them(lab2x4: LabPlan) -> None:
    """L4 hashing (the lab's default): the pairwise pattern with -P 8 sends 16 TCP streams up
    from each of leaf01 and leaf02 (two flows each: srv01 -> srv09, srv02 -> srv10, ...); both
    spines carry a real share. With the ecmp-l3-hash fault every stream of one host pair
    hashes on the same two addresses, so one uplink carries (nearly) all of it.

    Slack: in this lab the path of a TCP stream is set by its socket's random flow hash (veth
    keeps the sender's skb hash, which the kernel's L4 policy reuses), so streams land on
    spines like coin flips. 32 streams over 2 spines fall outside 15-85 % with a probability
    of about 1e-4; one leaf's 16 streams all on one spine, about 3e-5. Under L3, only BGP
    keepalives (a few hundred bytes a second) use the other uplinks: > 95 %."""
    plan = lab2x4
    result = run_traffic(plan.name, "pairwise", duration_s=2, parallel=8)
    assert result["summary"]["flows_failed"] == 0, result["flows"]
    spread = result["summary"]["ecmp_spread"]
    assert set(spread) == {"leaf01", "leaf02"}  # the sources' leaves, not the receivers'
    shares = _spine_shares(result, {"leaf01", "leaf02"})
    assert set(shares) == {"spine01", "spine02"}
    assert all(0.15 <= s <= 0.85 for s in shares.values()), shares
    for leaf, sp in spread.items():
        assert len(sp["uplinks"]) == 4 and sp["even_share"] == 0.25
        assert all(v > 0.05 for v in sp["by_peer"].values()), (leaf, sp)
        assert abs(sum(sp["uplinks"].values()) - 1) < 1e-3

    add_fault(plan.name, "ecmp-l3-hash")
    try:
        l3 = run_traffic(plan.name, "pairs", pairs=["srv01:srv09"], duration_s=2, parallel=8)
    finally:
        clear_faults(plan.name)
    assert l3["pattern"] == "pairs" and l3["flows"][0]["streams"] == 8
    leaf01 = l3["summary"]["ecmp_spread"]["leaf01"]
    assert leaf01["max_share"] > 0.95, leaf01
    busy = [k for k, v in leaf01["uplinks"].items() if v > 0.95]
    assert len(busy) == 1
    # the pinned uplink ran near its shaped rate: 400 Mb/s of frames carry the flow's payload
    # (8 streams through one 400 Mb/s host NIC), minus the first counter read's lead time
    row = next(r for r in l3["links"] if r["link"] == busy[0])
    assert 60 <= row["util_percent"] <= 101


def _check_keys(result: dict[str, Any]) -> None:
    assert {"pattern", "flows", "links", "summary", "explanation"} <= set(result)
    for f in result["flows"]:
        assert {"src", "dst", "sent_bits_per_second", "received_bits_per_second",
                "retransmits", "streams", "error"} <= set(f)
    for row in result["links"]:
        assert {"link", "peer", "tx_bytes", "rx_bytes", "tx_mbps", "util_percent"} <= set(row)
    s = result["summary"]
    assert {"total_gbps", "mean_flow_gbps", "uplink_util_percent", "ecmp_spread"} <= set(s)
    assert {"max", "min"} <= set(s["uplink_util_percent"])
    assert "end.sum_received" in result["explanation"]


def test_traffic_command_json_has_the_documented_keys(lab2x4: LabPlan, tmp_path: Path) -> None:
    """`lab traffic NAME --pattern ring -F json --save DIR`: one JSON document on stdout with
    pattern/flows/links/summary/explanation; one iperf3 JSON per flow in DIR, named
    <src>-<dst>.iperf3.json; a ring over 8 servers is 8 flows, each to the next server."""
    app = typer.Typer()
    app.command()(traffic)
    save = tmp_path / "iperf3"
    res = CliRunner().invoke(app, [lab2x4.name, "--pattern", "ring", "--duration", "1",
                                   "--save", str(save), "-F", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    _check_keys(doc)
    servers = [n.name for n in lab2x4.nodes.values() if n.role == "server"]
    assert [(f["src"], f["dst"]) for f in doc["flows"]] == [
        (servers[i], servers[(i + 1) % len(servers)]) for i in range(len(servers))]
    files = sorted(p.name for p in save.iterdir())
    assert files == sorted(f"{f['src']}-{f['dst']}.iperf3.json" for f in doc["flows"])
    for name in files:
        raw = json.loads((save / name).read_text())
        assert "error" not in raw and raw["end"]["sum_received"]["bytes"] > 0
    # every link's counter delta is what its peer end saw: tx here = rx there, up to the few
    # packets in flight when the two namespaces were read a few ms apart
    rows = {r["link"]: r for r in doc["links"]}
    for r in rows.values():
        peer = rows.get(r["peer"])
        if peer is not None and r["tx_bytes"] > 1_000_000:
            assert abs(r["tx_bytes"] - peer["rx_bytes"]) <= 0.02 * r["tx_bytes"] + 20_000


def test_s17_compare_gain_matches_the_fabric_numbers() -> None:
    """The case study (S17) in the lab at rate scale 1000: cross-site traffic, two flows of
    P = 2 streams, through the before fabric (fw1: 10 Gb/s per session) and the after fabric
    (400G NICs, two 400G inter-site links).

    Expected from the fabric files (TCP payload per byte: (MTU - 52) / MTU for fw1's IP-byte
    limit, (MTU - 52) / (MTU + 14) for a shaped link):

    * before = 2 flows x 2 sessions x 10 Mb/s x 1448/1500 = 38.6 Mb/s;
    * after = min(2 NICs x 400, 2 inter-site links x 400) x 8948/9014 = 794 Mb/s with an even
      ECMP spread, 397 if every stream hashed onto one inter-site link;
    * ratio 20.6 (even) or 10.3 (polarised).

    Tolerance: before in [0.8, 1.5] x 38.6 - TCP under a policer runs a little below the limit,
    and the throttle lets each session through 1 MB free plus a 1.2 s burst (about 20 Mbit)
    that the 1 s iperf3 -O does not always cover, at most 20 Mbit / 4 s / 10 Mb/s = +50 %;
    after in [0.95 x 397, 1.02 x 794] (streams hash like coin flips in this lab: from all on
    one link to an even split). Hence the ratio lies in [6.5, 26]; the brief's floor is 3."""
    before, after = _fabric(S17_BEFORE), _fabric(S17_AFTER)
    fw = before.middleboxes[0]
    assert fw.session_rate_limit_gbps == 10
    inter = [ln for ln in after.links if ln.kind == "inter-site"]
    nic = after.servers[0].nics[0].ports[0].speed_gbps
    host_mtu = next(ln.mtu_bytes for ln in after.links if ln.kind == "host")
    scale, flows, p = 1000, 2, 2
    exp_before = flows * p * fw.session_rate_limit_gbps * 1e3 / scale * (1500 - 52) / 1500
    pay = (host_mtu - 52) / (host_mtu + 14)
    exp_after = min(flows * nic, sum(ln.speed_gbps for ln in inter)) * 1e3 / scale * pay
    exp_polar = inter[0].speed_gbps * 1e3 / scale * pay
    assert (round(exp_before, 1), round(exp_after), round(exp_polar)) == (38.6, 794, 397)

    base = new_name("c")
    result = compare_labs(before, after, name=base, rate_scale=scale, duration_s=4,
                          parallel=p, omit_s=1)
    assert lab_namespaces(f"{base}-before") == [] and lab_namespaces(f"{base}-after") == []
    b, a = result["before"], result["after"]
    # the module's own model agrees with the hand calculation
    assert b["expected_mbps"] == pytest.approx(exp_before, rel=1e-3)
    assert a["expected_mbps"] == pytest.approx(exp_after, rel=1e-3)
    assert a["expected_polarised_mbps"] == pytest.approx(exp_polar, rel=1e-3)
    assert b["flows"] == a["flows"] == flows
    for side in (b, a):
        assert side["traffic"]["summary"]["flows_failed"] == 0, side["traffic"]["flows"]
    assert 0.8 * exp_before <= b["total_mbps"] <= 1.5 * exp_before, b["total_mbps"]
    assert 0.95 * exp_polar <= a["total_mbps"] <= 1.02 * exp_after, a["total_mbps"]
    ratio = result["ratio"]
    assert ratio > 3
    assert 0.95 * exp_polar / (1.5 * exp_before) <= ratio <= 1.02 * exp_after / (
        0.8 * exp_before)
    assert ratio == pytest.approx(a["total_mbps"] / b["total_mbps"], rel=1e-3)
    it = result["iteration"]
    # 22 -> 9 min from the network alone: c = 13 / (22 (1 - 1/G))
    assert it["implied_comm_fraction"] == pytest.approx(13 / (22 * (1 - 1 / ratio)), rel=1e-3)
    assert it["implied_comm_fraction_infinite_gain"] == pytest.approx(13 / 22, rel=1e-3)
    assert "RoCEv2" in result["explanation"] and "PFC" in result["explanation"]

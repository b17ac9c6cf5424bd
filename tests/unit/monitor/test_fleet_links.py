"""Interface gauges from Prometheus become ``ip link`` records, so the interface verdicts judge
a fleet's series as they judge a bundle of ``ip link`` captures.

Known answers: five nodes with eth0, four at MTU 9000 and h3 at 1500: h3 is the odd one, 4 of
the 5 hosts hold the majority (``diagnose.fleet-mtu-differs``, fabric.mtu, naming h3 only). A
port administratively up without an operational link (admin 1, oper 0) is a missing carrier
(``diagnose.iface-no-carrier``); a port shut on purpose (admin 0) is not."""

from __future__ import annotations

from aifabric.checks.diagnose import diagnose, load_evidence
from aifabric.evidence.linux_net import IpLink
from aifabric.monitor.fleet import prometheus_captures

from .test_fleet import AT, START, FakeProm, s


def _fleet(mtus: dict[str, int], state: dict[str, tuple[int, int]] | None = None) -> list:  # type: ignore[type-arg]
    out = []
    for node, mtu in mtus.items():
        admin, oper = (state or {}).get(node, (1, 1))
        out += [
            s("aifabric_link_mtu_bytes", mtu, AT, node=node, interface="eth0"),
            s("aifabric_link_up", oper, AT, node=node, interface="eth0"),
            s("aifabric_link_admin_up", admin, AT, node=node, interface="eth0"),
        ]
    return out


def _run(samples: list) -> tuple[list[IpLink], list]:  # type: ignore[type-arg]
    fe = prometheus_captures(FakeProm(samples, samples), window_s=AT - START, at_s=AT)
    links = [r for c in fe.captures for r in c.result.records if isinstance(r, IpLink)]
    return links, diagnose(load_evidence([], captures=fe.captures)).findings


def test_the_odd_mtu_in_the_fleet() -> None:
    links, findings = _run(_fleet({"h1": 9000, "h2": 9000, "h3": 1500, "h4": 9000, "h5": 9000}))
    assert {(lk.name, lk.mtu_bytes, tuple(lk.flags)) for lk in links} == {
        ("eth0", 9000, ("UP", "LOWER_UP")), ("eth0", 1500, ("UP", "LOWER_UP"))}
    odd = [f for f in findings if f.check == "diagnose.fleet-mtu-differs"]
    assert [f.target for f in odd] == ["h3"]
    assert odd[0].cause == "fabric.mtu" and "1500" in odd[0].message and "9000" in odd[0].message
    assert "4 of the 5 hosts" in odd[0].message


def test_no_carrier_but_not_a_shut_port() -> None:
    mtus = {"h1": 9000, "h2": 9000, "h3": 9000}
    _links, findings = _run(_fleet(mtus, {"h1": (1, 0), "h2": (0, 0)}))
    carrier = [f for f in findings if f.check == "diagnose.iface-no-carrier"]
    assert [f.target for f in carrier] == ["h1"]
    assert not [f for f in findings if f.check == "diagnose.fleet-mtu-differs"]

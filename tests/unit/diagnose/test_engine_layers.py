"""The layers of a diagnosis over one input: rules, record verdicts, catalogue signatures and
error-looking lines nothing explains (engine.diagnose). Inputs are real captures; the catalogue
and verdict used here are built in the test so that the engine, not the shipped data, is what
is tested."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from aifabric.checks.diagnose import diagnose, load_evidence
from aifabric.checks.diagnose import engine as eng
from aifabric.checks.diagnose import verdicts as vmod
from aifabric.checks.diagnose.engine import UNRECOGNISED_CHECK, Evidence
from aifabric.checks.diagnose.signatures import Catalogue, SignatureIndex
from aifabric.checks.diagnose.verdicts import Verdict
from aifabric.evidence.base import Record

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "diagnose"
LIBIBVERBS = FIX / "socket-fallback-no-libibverbs" / "nccl.log"

_CATALOGUE = Catalogue.model_validate(
    {
        "program": "test",
        "title": "test",
        "entries": [
            {
                "id": "test.libibverbs",
                "pattern": r"NCCL WARN Failed to open libibverbs\.so",
                "examples": ["x misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]"],
                "severity": "error",
                "cause": "host.rdma-device",
                "meaning": "libibverbs is not installed in the container",
                "source": {"url": "https://github.com/NVIDIA/nccl"},
            },
            {
                "id": "test.no-plugin",
                "pattern": r"No plugin found \((?P<lib>\S+)\)",
                "examples": ["NCCL INFO NET/Plugin : No plugin found (libnccl-net.so)"],
                "severity": "benign",
                "cause": "config.nccl-env",
                "meaning": "no external net plugin: NCCL's own transports are used",
                "source": {"url": "https://github.com/NVIDIA/nccl"},
            },
        ],
    }
)


@pytest.fixture
def test_catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    index = SignatureIndex([_CATALOGUE])
    monkeypatch.setattr(eng, "signature_index", lambda: index)
    monkeypatch.setattr(
        "aifabric.checks.diagnose.signatures.signature_by_id",
        lambda: {e.id: (e, "test") for e in _CATALOGUE.entries},
    )


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def test_catalogue_hit_becomes_a_finding_with_its_cause(test_catalogue: None) -> None:
    ev = load_evidence([LIBIBVERBS])
    sigs = [i for i in ev.items if i.record.record_type == "signature"]
    assert {getattr(i.record, "id", None) for i in sigs} == {"test.libibverbs", "test.no-plugin"}
    findings = diagnose(ev).findings
    # the shipped rule diagnose.nccl-socket-fallback names host.rdma-device and quotes the WARN
    # line, so the catalogue finding for the same cause and line is dropped
    assert any(f.cause == "host.rdma-device" for f in findings)
    assert not [f for f in findings if f.check == "signature.test.no-plugin"]  # benign


def test_catalogue_finding_stands_alone_without_a_rule(test_catalogue: None) -> None:
    ev = load_evidence([LIBIBVERBS])
    res = diagnose(ev, rules=[])
    sig = [f for f in res.findings if f.check == "signature.test.libibverbs"]
    assert len(sig) == 1
    f = sig[0]
    assert f.severity == "error" and f.cause == "host.rdma-device"
    assert f.message.startswith("Host, not the fabric: libibverbs is not installed")
    n = next(i for i, t in enumerate(_lines(LIBIBVERBS), 1) if "Failed to open libibverbs" in t)
    assert (f.evidence[0].source, f.evidence[0].line) == (str(LIBIBVERBS), n)


def test_error_looking_lines_nothing_explains_are_reported(
    test_catalogue: None, tmp_path: Path
) -> None:
    log = tmp_path / "app.log"
    log.write_text(
        "starting job\n"
        "x misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
        "RuntimeError: frobnicator jammed: ERROR 17 in widget\n"
        "RuntimeError: frobnicator jammed: ERROR 18 in widget\n"
        "all done\n"
    )
    res = diagnose(load_evidence([log]), rules=[])
    unrec = [f for f in res.findings if f.check == UNRECOGNISED_CHECK]
    assert len(unrec) == 1  # the two lines differ only in a number: one message
    assert "frobnicator" in unrec[0].message and "(2 lines like it)" in unrec[0].message
    assert unrec[0].severity == "warning" and unrec[0].cause is None
    # the recognised line is not reported as unrecognised
    assert not any("libibverbs" in f.message for f in unrec)
    assert res.healthy == []  # a text file is never declared healthy


def test_clean_text_gives_no_finding(test_catalogue: None, tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text("epoch 1 loss 2.31\nepoch 2 loss 2.02\n")
    assert diagnose(load_evidence([log])).findings == []


@pytest.fixture
def port_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    def fn(rec: Record, ev: Evidence) -> Iterator[Verdict]:
        if getattr(rec, "state", "Active") != "Active":
            yield Verdict(
                id="diagnose.test-port",
                severity="error",
                cause="fabric.link-down",
                message=f"port {getattr(rec, 'port', '?')} is {getattr(rec, 'state', '?')}",
                explanation="e",
                fix="f",
            )

    table = {"ibstat_port": [fn]}
    monkeypatch.setattr(eng, "load_verdicts", lambda: table)
    monkeypatch.setattr(vmod, "_LOADED", True)


def test_verdict_on_a_record_of_a_paste(
    port_verdict: None, test_catalogue: None, tmp_path: Path
) -> None:
    paste = tmp_path / "paste.txt"
    paste.write_text(
        "root@node1:~# ibstat\n"
        "CA 'mlx5_0'\n"
        "\tCA type: MT4123\n"
        "\tNumber of ports: 1\n"
        "\tPort 1:\n"
        "\t\tState: Down\n"
        "\t\tPhysical state: Polling\n"
        "\t\tRate: 10\n"
        "\t\tLink layer: InfiniBand\n"
        "root@node1:~# ulimit -l\n"
        "64\n"
    )
    res = diagnose(load_evidence([paste]), rules=[])
    [f] = [f for f in res.findings if f.check == "diagnose.test-port"]
    assert f.cause == "fabric.link-down" and "port 1 is Down" in f.message
    assert (f.evidence[0].source, f.evidence[0].line) == (str(paste), 5)
    assert f.evidence[0].text.startswith("Port 1:")


def test_every_verdict_and_catalogue_finding_on_real_captures_is_explained() -> None:
    # S24: every finding says why (explanation), what to do (fix) and cites a seed id
    roots = [FIX.parent / "evidence", FIX, FIX.parent / "signatures"]
    files = [p for r in roots for p in r.rglob("*") if p.is_file() and p.suffix != ".yaml"]
    checked = 0
    for f in files:
        for finding in diagnose(load_evidence([f])).findings:
            if finding.check.startswith("diagnose.") and finding.cause is None:
                continue  # unrecognised lines: their own wording, tested above
            checked += 1
            assert finding.explanation and finding.fix, finding.check
            assert any(r[:1] == "S" and r[1:].split(".")[0].isdigit() for r in finding.refs), (
                finding.check,
                finding.refs,
            )
    assert checked > 100


def test_a_part_its_parser_read_nothing_from_is_scanned_like_text(tmp_path: Path) -> None:
    # a marker quoted in prose ("No IB devices found" is what ibv_devinfo prints) makes the part
    # look like ibv_devinfo output; the parser reads no device from it, and the line must still
    # reach the catalogues (source: a linux-rdma thread about siw, the frozen17 regression set)
    f = tmp_path / "note.txt"
    f.write_text(
        "After booting the new kernel I manually loaded the kernel module by\n\n"
        "     modprobe siw\n\n"
        'Then ibv_devinfo shows: "No IB devices found".\n',
        encoding="utf-8",
    )
    found = diagnose(load_evidence([f])).findings
    assert any(x.check == "signature.rdma-core.no-ib-devices" for x in found), found


SOCKETS_BY_CHOICE = (
    "node1:41449:41449 [6] NCCL INFO Bootstrap : Using [0]eth0:10.38.10.4<0>\n"
    "node1:41449:41449 [6] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).\n"
    "node1:41449:41449 [6] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n"
    "node1:41449:41449 [6] NCCL INFO NET/Socket : Using [0]eth0:10.38.10.4<0>\n"
    "node1:41449:41449 [6] NCCL INFO Using network Socket\n"
    "node1:41449:43711 [6] NCCL INFO Ring 00 : 1 -> 0 [receive] via NET/Socket/0\n"
)
"""NCCL's own INFO lines (init.c, net_socket.c) of a run whose environment chose sockets."""


def test_sockets_chosen_by_the_environment_are_an_error_only_beside_an_rdma_adapter(
    tmp_path: Path,
) -> None:
    log = tmp_path / "nccl.log"
    log.write_text(SOCKETS_BY_CHOICE)
    alone = [f for f in diagnose(load_evidence([log])).findings if f.severity == "error"]
    assert alone == []  # an Ethernet-only cluster sets NCCL_IB_DISABLE=1 on purpose
    warned = [f for f in diagnose(load_evidence([log])).findings
              if f.check == "diagnose.nccl-socket-no-rdma-seen"]  # fmt: skip
    assert warned and warned[0].cause == "config.nccl-env"  # the setting that chose it
    ibstat = Path(__file__).resolve().parents[2] / "fixtures/evidence/ibstat/l2fwd-nv-6-cx6dx"
    both = diagnose(load_evidence([log, next(ibstat.glob("input.*"))])).findings
    assert any(f.check == "diagnose.nccl-socket-fallback" and f.severity == "error" for f in both)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (  # the 2018 device plugin printed no resource name: its field reads "?"
            "2018/11/27 03:44:27 Could not start device plugin: context deadline exceeded",
            "GPU device plugin could not start resource ?: context deadline exceeded",
        ),
        (
            "E0613 08:12:44.120331       1 server.go:135] Could not start device plugin for "
            "'nvidia.com/gpu': exit status 1",
            "GPU device plugin could not start resource nvidia.com/gpu: exit status 1",
        ),
    ],
)
def test_a_message_field_the_line_did_not_print_reads_a_question_mark(
    tmp_path: Path, line: str, message: str
) -> None:
    log = tmp_path / "plugin.log"
    log.write_text(line + "\n", encoding="utf-8")
    [f] = [f for f in diagnose(load_evidence([log])).findings
           if f.check == "signature.k8s-gpu.nvdp-start-failed"]  # fmt: skip
    assert f.message.endswith(message)
    assert "{" not in f.message


def test_the_next_step_names_the_host_and_port_the_line_printed(tmp_path: Path) -> None:
    log = tmp_path / "rank3.log"
    log.write_text(
        "[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to "
        "connect to 10.1.2.3:29500\n",
        encoding="utf-8",
    )
    [f] = [f for f in diagnose(load_evidence([log])).findings
           if f.check == "signature.pytorch.store-client-timeout"]  # fmt: skip
    assert "nc -vz 10.1.2.3 29500" in f.fix  # the entry's {host} {port} filled from the line
    assert "grep 29500" in f.fix
    assert "{" not in f.fix and "{" not in f.explanation

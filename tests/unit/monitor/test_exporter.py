"""The exporter over real HTTP on 127.0.0.1: text format, gzip, source failures counted, basic
auth with bcrypt hashes and TLS as in the exporter-toolkit web configuration, and the CLI."""

from __future__ import annotations

import base64
import datetime
import gzip
import ipaddress
import json
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import bcrypt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from typer.testing import CliRunner

from aifabric.cli.app import app
from aifabric.errors import EnvironmentProblem, InputError
from aifabric.monitor.catalogue import load_catalogue
from aifabric.monitor.exporter import Exporter, WebConfig, load_web_config, parse_listen, serve
from aifabric.monitor.exposition import Scrape
from tests.conftest import run_cli

CAT = load_catalogue()


class Fixed:
    """A collector with known values (the PFC counters of one NIC port)."""

    name = "fixed"

    def collect(self, scrape: Scrape) -> None:
        scrape.add_raw(
            "ethtool",
            (("node", "h1"), ("interface", "eth0")),
            {"rx_prio3_pause": 7, "rx_prio3_pause_duration": 2_500_000},
        )

    def close(self) -> None:
        return


class Broken:
    name = "broken"

    def collect(self, scrape: Scrape) -> None:
        raise EnvironmentProblem("sonic-db-cli: not found")

    def close(self) -> None:
        return


def _serve(web: WebConfig | None = None) -> Iterator[str]:
    exporter = Exporter(CAT, [Fixed(), Broken()])
    server = serve(exporter, "127.0.0.1", 0, web)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def plain() -> Iterator[str]:
    yield from _serve()


def _get(
    url: str, headers: dict[str, str] | None = None, ctx: ssl.SSLContext | None = None
) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5, context=ctx) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_metrics_text_and_own_metrics(plain: str) -> None:
    status, headers, body = _get(f"http://{plain}/metrics")
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    text = body.decode()
    assert (
        'aifabric_port_pfc_frames_total{node="h1",interface="eth0",direction="rx",priority="3"} 7'
    ) in text
    # 2,500,000 µs of pause is 2.5 s
    assert (
        'aifabric_port_pfc_pause_duration_seconds_total{node="h1",interface="eth0",'
        'direction="rx",priority="3"} 2.5'
    ) in text
    assert 'aifabric_exporter_source_up{source="fixed"} 1' in text
    assert 'aifabric_exporter_source_up{source="broken"} 0' in text
    assert 'aifabric_exporter_source_errors_total{source="broken"} 1' in text
    assert "aifabric_exporter_series 2" in text
    _get(f"http://{plain}/metrics")
    _, _, again = _get(f"http://{plain}/metrics")
    assert 'aifabric_exporter_source_errors_total{source="broken"} 3' in again.decode()


def test_gzip_health_and_404(plain: str) -> None:
    _, headers, body = _get(f"http://{plain}/metrics", {"Accept-Encoding": "gzip"})
    assert headers.get("Content-Encoding") == "gzip"
    assert b"aifabric_port_pfc_frames_total" in gzip.decompress(body)
    assert _get(f"http://{plain}/-/healthy")[0] == 200
    assert _get(f"http://{plain}/nope")[0] == 404


def test_basic_auth_with_bcrypt(tmp_path: Path) -> None:
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
    cfg = tmp_path / "web.yml"
    cfg.write_text(f"basic_auth_users:\n  prom: '{hashed}'\n")
    web = load_web_config(cfg)
    for addr in _serve(web):
        assert _get(f"http://{addr}/metrics")[0] == 401
        bad = base64.b64encode(b"prom:wrong").decode()
        assert _get(f"http://{addr}/metrics", {"Authorization": f"Basic {bad}"})[0] == 401
        good = base64.b64encode(b"prom:s3cret").decode()
        for _ in range(2):  # the second answer comes from the cache
            assert _get(f"http://{addr}/metrics", {"Authorization": f"Basic {good}"})[0] == 200


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)

    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    crt, pem = tmp_path / "tls.crt", tmp_path / "tls.key"
    crt.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pem.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return crt, pem


def test_tls_from_web_config(tmp_path: Path) -> None:
    crt, _key = _self_signed(tmp_path)
    cfg = tmp_path / "web.yml"
    cfg.write_text("tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n")
    web = load_web_config(cfg)
    ctx = ssl.create_default_context(cafile=str(crt))
    for addr in _serve(web):
        status, _, body = _get(f"https://{addr}/metrics", ctx=ctx)
        assert status == 200 and b"aifabric_port_pfc_frames_total" in body


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("basic_auth_users:\n  prom: plaintext\n", "bcrypt hash"),
        ("tls_server_config:\n  cert_file: a.crt\n", "both cert_file and key_file"),
        ("tls_config: {}\n", "unknown keys"),
        ("- a\n", "expected a mapping"),
    ],
)
def test_bad_web_config(tmp_path: Path, body: str, message: str) -> None:
    cfg = tmp_path / "web.yml"
    cfg.write_text(body)
    with pytest.raises(InputError, match=message):
        load_web_config(cfg)


def test_parse_listen() -> None:
    assert parse_listen(":9877") == ("0.0.0.0", 9877)
    for bad in ("9877", "host:", "h:99999", "h:x"):
        with pytest.raises(InputError):
            parse_listen(bad)


def test_cli_catalogue_json_and_bad_input(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app,
        ["monitor", "catalogue", "-F", "json", "--allow", "aifabric_port_priority_packets_total"],
    )
    assert res.exit_code == 0, res.output
    rows = {r["name"]: r for r in json.loads(res.stdout)["metrics"]}
    assert rows["aifabric_port_priority_packets_total"]["enabled"] is True
    assert rows["aifabric_port_pfc_frames_total"]["labels"] == [
        "node",
        "interface",
        "direction",
        "priority",
    ]
    got = run_cli("monitor", "exporter", "--listen", "nope", "--once")
    assert got.code == 2 and "HOST:PORT" in got.err and "Traceback" not in got.err
    got = run_cli("monitor", "exporter", "--lab", "x", "--node", "y", "--once")
    assert got.code == 2
    bad = tmp_path / "cat.yaml"
    bad.write_text("metrics: [1]\n")
    got = run_cli("monitor", "catalogue", "--catalogue", str(bad))
    assert got.code == 2 and "Traceback" not in got.err, got.err


def test_cli_once_prints_this_hosts_counters() -> None:
    got = run_cli("monitor", "exporter", "--once", "--no-optics", "--node", "t1")
    assert got.code == 0, got.err
    assert 'aifabric_tcp_sent_segments_total{node="t1"}' in got.out
    assert 'aifabric_exporter_source_up{source="net"} 1' in got.out

"""The exporter: runs the collectors on every scrape and serves ``/metrics`` over HTTP(S).

* ``GET /metrics`` runs every collector (one scrape at a time: a second scraper waits for the
  first rather than doubling the kernel reads), then renders the text format, gzip-compressed
  when the scraper accepts it (Prometheus does). A collector that fails is counted in
  ``aifabric_exporter_source_errors_total{source}`` and ``aifabric_exporter_source_up{source}``
  is 0 for that scrape; the other sources still answer.
* Own metrics: ``aifabric_exporter_scrape_duration_seconds{source}``,
  ``aifabric_exporter_series``, ``aifabric_exporter_series_dropped_total`` (past
  ``--max-series``), ``aifabric_exporter_build_info{version}``.
* ``GET /`` (a page naming the metrics path) and ``GET /-/healthy``.
* TLS and basic auth from a web configuration file in the format of the Prometheus
  exporter-toolkit (https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md):
  ``tls_server_config`` (``cert_file``, ``key_file``, ``client_ca_file``,
  ``client_auth_type``, ``min_version``) and ``basic_auth_users`` (user → bcrypt hash, as
  ``htpasswd -nBC 10 user`` prints it). A checked password is cached (bcrypt is slow on purpose;
  a scraper sends the same credentials every few seconds).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import ssl
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

from aifabric import __version__
from aifabric.errors import AifabricError, InputError
from aifabric.monitor.catalogue import Catalogue
from aifabric.monitor.exposition import ExtraFamily, Scrape
from aifabric.monitor.sources import Collector
from aifabric.yamlfile import read_text, read_yaml_text

__all__ = ["Exporter", "WebConfig", "load_web_config", "parse_listen", "serve"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def parse_listen(text: str) -> tuple[str, int]:
    """``127.0.0.1:9877``, ``[::1]:9877``, ``:9877`` (all addresses) → (host, port).

    >>> parse_listen("127.0.0.1:9877"), parse_listen("[::1]:80")
    (('127.0.0.1', 9877), ('::1', 80))
    """
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdecimal() or not 0 < int(port) < 65536:
        raise InputError(f"--listen {text!r}: expected HOST:PORT, e.g. 127.0.0.1:9877")
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port)


class Exporter:
    """Collectors plus the scrape bookkeeping; :meth:`scrape` is one ``/metrics`` answer."""

    def __init__(
        self, catalogue: Catalogue, collectors: Sequence[Collector], *, max_series: int = 200_000
    ) -> None:
        self.catalogue = catalogue
        self.collectors = list(collectors)
        self.max_series = max_series
        self._lock = threading.Lock()
        self._errors: dict[str, int] = {c.name: 0 for c in self.collectors}
        self._dropped = 0
        self.last_errors: dict[str, str] = {}

    def scrape(self) -> bytes:
        with self._lock:
            scrape = Scrape(self.catalogue, max_series=self.max_series)
            durations = ExtraFamily(
                "aifabric_exporter_scrape_duration_seconds",
                "Time each source took in the last scrape.",
                "gauge",
            )
            up = ExtraFamily(
                "aifabric_exporter_source_up",
                "1 if the source answered in the last scrape, else 0.",
                "gauge",
            )
            errors = ExtraFamily(
                "aifabric_exporter_source_errors_total",
                "Scrapes in which the source failed.",
                "counter",
            )
            for c in self.collectors:
                t0 = time.perf_counter()
                ok = 1
                try:
                    c.collect(scrape)
                    self.last_errors.pop(c.name, None)
                except (OSError, AifabricError) as exc:
                    ok = 0
                    self._errors[c.name] = self._errors.get(c.name, 0) + 1
                    self.last_errors[c.name] = str(exc)
                label = (("source", c.name),)
                durations.series[label] = time.perf_counter() - t0
                up.series[label] = ok
                errors.series[label] = self._errors.get(c.name, 0)
            self._dropped += scrape.dropped
            series = ExtraFamily(
                "aifabric_exporter_series",
                "Series in the last scrape.",
                "gauge",
                {(): scrape.series},
            )
            dropped = ExtraFamily(
                "aifabric_exporter_series_dropped_total",
                "Series dropped because the scrape reached --max-series.",
                "counter",
                {(): self._dropped},
            )
            info = ExtraFamily(
                "aifabric_exporter_build_info",
                "aifabric version.",
                "gauge",
                {(("version", __version__),): 1},
            )
            return scrape.render([durations, up, errors, series, dropped, info])

    def close(self) -> None:
        for c in self.collectors:
            c.close()


# -- web configuration -------------------------------------------------------------------------


@dataclass
class WebConfig:
    """TLS and basic-auth settings (exporter-toolkit ``web-config.yml`` keys)."""

    cert_file: Path | None = None
    key_file: Path | None = None
    client_ca_file: Path | None = None
    client_auth_type: str = "NoClientCert"
    min_version: str | None = None
    users: dict[str, bytes] = field(default_factory=dict)
    _ok: set[bytes] = field(default_factory=set)

    def ssl_context(self) -> ssl.SSLContext | None:
        if self.cert_file is None:
            return None
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        versions = {"TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}
        ctx.minimum_version = versions.get(self.min_version or "TLS12", ssl.TLSVersion.TLSv1_2)
        try:
            ctx.load_cert_chain(str(self.cert_file), str(self.key_file or self.cert_file))
            if self.client_ca_file is not None:
                ctx.load_verify_locations(str(self.client_ca_file))
        except (OSError, ssl.SSLError) as exc:
            raise InputError(f"web config: cannot load the TLS certificate or key: {exc}") from None
        if self.client_auth_type == "RequireAndVerifyClientCert":
            ctx.verify_mode = ssl.CERT_REQUIRED
        elif self.client_auth_type in {"VerifyClientCertIfGiven", "RequestClientCert"}:
            ctx.verify_mode = ssl.CERT_OPTIONAL
        return ctx

    def authorised(self, header: str | None) -> bool:
        """Whether an ``Authorization`` header carries a configured user's password."""
        if not self.users:
            return True
        if not header or not header.startswith("Basic "):
            return False
        token = header[6:].strip().encode()
        key = hashlib.sha256(token).digest()
        if key in self._ok:
            return True
        try:
            user, _, password = base64.b64decode(token, validate=True).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        stored = self.users.get(user)
        if stored is None:
            return False
        import bcrypt  # noqa: PLC0415 - only for exporters with basic auth

        try:
            good = bcrypt.checkpw(password.encode(), stored)
        except ValueError:
            return False
        if good:
            if len(self._ok) > 1000:
                self._ok.clear()
            self._ok.add(key)
        return good


def load_web_config(path: Path) -> WebConfig:
    """Read an exporter-toolkit style web configuration (relative paths: to the file)."""
    text = read_text(path)
    data = read_yaml_text(text, file=str(path)) or {}
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping with tls_server_config / basic_auth_users")
    unknown = set(data) - {"tls_server_config", "basic_auth_users", "http_server_config"}
    if unknown:
        raise InputError(f"{path}: unknown keys {sorted(unknown)}")
    cfg = WebConfig()
    tls: dict[str, Any] = data.get("tls_server_config") or {}
    if not isinstance(tls, dict):
        raise InputError(f"{path}: tls_server_config must be a mapping")

    def rel(key: str) -> Path | None:
        v = tls.get(key)
        if v is None:
            return None
        p = Path(str(v))
        return p if p.is_absolute() else path.parent / p

    cfg.cert_file, cfg.key_file, cfg.client_ca_file = (
        rel("cert_file"),
        rel("key_file"),
        rel("client_ca_file"),
    )
    if (cfg.cert_file is None) != (cfg.key_file is None):
        raise InputError(f"{path}: tls_server_config needs both cert_file and key_file")
    cfg.client_auth_type = str(tls.get("client_auth_type", "NoClientCert"))
    cfg.min_version = tls.get("min_version")
    users = data.get("basic_auth_users") or {}
    if not isinstance(users, dict):
        raise InputError(f"{path}: basic_auth_users must map user names to bcrypt hashes")
    for user, hashed in users.items():
        h = str(hashed)
        if not h.startswith(("$2a$", "$2b$", "$2y$")):
            raise InputError(f"{path}: basic_auth_users.{user}: expected a bcrypt hash ($2y$...)")
        cfg.users[str(user)] = h.encode()
    return cfg


# -- HTTP --------------------------------------------------------------------------------------

_INDEX = (
    "<html><head><title>aifabric exporter</title></head><body><h1>aifabric exporter</h1>"
    '<p><a href="/metrics">Metrics</a></p></body></html>'
)


class _Handler(BaseHTTPRequestHandler):
    server_version = "aifabric-exporter"
    exporter: ClassVar[Exporter]
    web: ClassVar[WebConfig]

    def log_message(self, format: str, *args: Any) -> None:
        return  # scrapes every few seconds: no access log

    def _send(
        self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if not self.web.authorised(self.headers.get("Authorization")):
            self._send(
                HTTPStatus.UNAUTHORIZED,
                b"Unauthorized\n",
                "text/plain",
                {"WWW-Authenticate": 'Basic realm="aifabric"'},
            )
            return
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            body = self.exporter.scrape()
            extra = {}
            if "gzip" in (self.headers.get("Accept-Encoding") or ""):
                body = gzip.compress(body, compresslevel=1)
                extra["Content-Encoding"] = "gzip"
            self._send(HTTPStatus.OK, body, CONTENT_TYPE, extra)
        elif path == "/":
            self._send(HTTPStatus.OK, _INDEX.encode(), "text/html; charset=utf-8")
        elif path == "/-/healthy":
            self._send(HTTPStatus.OK, b"OK\n", "text/plain")
        else:
            self._send(HTTPStatus.NOT_FOUND, b"Not found\n", "text/plain")


class _Server(ThreadingHTTPServer):
    daemon_threads = True


def serve(
    exporter: Exporter, host: str, port: int, web: WebConfig | None = None
) -> ThreadingHTTPServer:
    """A started-on-demand HTTP(S) server (call ``serve_forever``; ``shutdown`` to stop)."""
    import socket  # noqa: PLC0415

    web = web or WebConfig()
    handler = type("Handler", (_Handler,), {"exporter": exporter, "web": web})
    server_cls: type[_Server] = _Server
    if ":" in host:
        server_cls = type("Server6", (_Server,), {"address_family": socket.AF_INET6})
    try:
        server = server_cls((host, port), handler)
    except OSError as exc:
        raise InputError(f"--listen {host}:{port}: {exc.strerror or exc}") from None
    ctx = web.ssl_context()
    if ctx is not None:
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    return server

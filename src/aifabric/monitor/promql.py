"""A small client for the Prometheus HTTP API (``/api/v1``), on the standard library.

Endpoints and response shapes follow https://prometheus.io/docs/prometheus/latest/querying/api/:

* ``POST /api/v1/query`` (form ``query``, ``time``, ``timeout``): an instant query, a result of
  ``resultType`` ``vector`` (``[{"metric": {...}, "value": [t, "v"]}]``), ``scalar`` or
  ``string`` (``[t, "v"]``) or ``matrix`` (a range selector);
* ``POST /api/v1/query_range`` (``query``, ``start``, ``end``, ``step``): a ``matrix``,
  ``[{"metric": {...}, "values": [[t, "v"], ...]}]``;
* ``POST /api/v1/series`` (``match[]``, ``start``, ``end``): the label sets of the series that
  had samples in the range (stale ones included);
* ``GET /api/v1/label/<name>/values`` (``match[]``, ``start``, ``end``): the values of a label.

Every answer is the envelope ``{"status": "success" | "error", "data": ..., "errorType": ...,
"error": ..., "warnings": [...]}``; sample values are strings (``"NaN"``, ``"+Inf"``), times
float unix seconds. POST with a form body is accepted for query, query_range and series and
keeps long selectors out of URL length limits.

Errors (:mod:`aifabric.errors`): a URL that is not ``http(s)://host[:port][/prefix]`` →
:class:`~aifabric.errors.InputError` (exit 2); a server that cannot be reached (connection
refused, DNS, TLS, timeout) or answers with an HTTP error or something that is not the API's
JSON → :class:`~aifabric.errors.EnvironmentProblem` (exit 3), one line naming the URL and
quoting Prometheus' own ``errorType: error`` when it sent one (``bad_data: invalid parameter
"query": 1:5: parse error: ...``). Basic auth (``user``/``password``) and a CA file for a
private TLS certificate authority are optional.
"""

from __future__ import annotations

import base64
import json
import math
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aifabric.errors import EnvironmentProblem, InputError

__all__ = [
    "PromClient",
    "Sample",
    "Series",
    "format_time",
    "parse_value",
]

DEFAULT_TIMEOUT_S = 30.0
"""Seconds to wait for one HTTP answer (also sent as the query's ``timeout``)."""

MAX_RESPONSE_BYTES = 256 * 1024 * 1024
"""Largest API answer read (a fleet's every ``aifabric_*`` series at one time is a few MB)."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample of an instant vector: the series' labels (``__name__`` included), the
    evaluation time (unix seconds) and the value."""

    labels: Mapping[str, str]
    time_s: float
    value: float


@dataclass(frozen=True, slots=True)
class Series:
    """One series of a range result: labels and ``(time_s, value)`` points in time order."""

    labels: Mapping[str, str]
    points: tuple[tuple[float, float], ...]


def parse_value(text: object) -> float:
    """A sample value as Prometheus writes it (a string: ``"12"``, ``"0.5"``, ``"NaN"``,
    ``"+Inf"``) → float.

    >>> parse_value("12"), parse_value("+Inf"), math.isnan(parse_value("NaN"))
    (12.0, inf, True)
    """
    try:
        return float(str(text))
    except ValueError:
        raise EnvironmentProblem(
            f"Prometheus sent a sample value that is not a number: {text!r}"
        ) from None


def format_time(t: float) -> str:
    """Unix seconds → RFC 3339 UTC, whole seconds unless the time has a fraction.

    >>> format_time(1700000000), format_time(1700000000.5)
    ('2023-11-14T22:13:20Z', '2023-11-14T22:13:20.5Z')
    """
    dt = datetime.fromtimestamp(t, UTC)
    if t == int(t):
        return dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%f").rstrip("0") + "Z"


def _check_url(url: str) -> str:
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(
            f"--prometheus {url!r}: expected http://HOST:PORT or https://HOST:PORT "
            "(optionally with a path prefix)"
        )
    try:
        _ = parts.port
    except ValueError:
        raise InputError(
            f"--prometheus {url!r}: the port is not a number from 1 to 65535"
        ) from None
    if parts.query or parts.fragment:
        raise InputError(f"--prometheus {url!r}: give the server's base URL without ?query or #")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


class PromClient:
    """The Prometheus HTTP API at ``url`` (``http://127.0.0.1:9090``, or with a path prefix
    when Prometheus runs with ``--web.route-prefix``)."""

    def __init__(
        self,
        url: str,
        *,
        user: str | None = None,
        password: str | None = None,
        ca_file: Path | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.url = _check_url(url)
        self.timeout_s = timeout_s
        self._headers = {"Accept": "application/json", "User-Agent": "aifabric"}
        if user is not None:
            token = base64.b64encode(f"{user}:{password or ''}".encode()).decode("ascii")
            self._headers["Authorization"] = f"Basic {token}"
        self._context: ssl.SSLContext | None = None
        if ca_file is not None:
            if not ca_file.is_file():
                raise InputError(f"--prometheus-ca {ca_file}: no such file")
            try:
                self._context = ssl.create_default_context(cafile=str(ca_file))
            except (ssl.SSLError, OSError) as exc:
                raise InputError(f"--prometheus-ca {ca_file}: not a PEM CA file ({exc})") from None

    # -- the endpoints -----------------------------------------------------------------------

    def query(self, expr: str, *, at: float | None = None) -> list[Sample]:
        """Instant query ``expr`` at unix time ``at`` (now by default): its vector samples
        (a scalar comes back as one sample without labels)."""
        form: dict[str, str] = {"query": expr, "timeout": f"{self.timeout_s:g}s"}
        if at is not None:
            form["time"] = _num(at)
        data = self._call("query", form)
        rtype, result = data.get("resultType"), data.get("result")
        if rtype == "vector" and isinstance(result, list):
            return [
                Sample(_labels(r), float(r["value"][0]), parse_value(r["value"][1]))
                for r in result
                if isinstance(r, dict) and isinstance(r.get("value"), list)
            ]
        if rtype in ("scalar", "string") and isinstance(result, list) and len(result) == 2:
            return [Sample({}, float(result[0]), parse_value(result[1]))]
        raise EnvironmentProblem(
            f"{self.url}: query {expr!r} gave a {rtype} result, expected an instant vector"
        )

    def query_range(self, expr: str, *, start: float, end: float, step_s: float) -> list[Series]:
        """Range query ``expr`` from ``start`` to ``end`` (unix seconds) every ``step_s``."""
        if step_s <= 0 or end < start:
            raise InputError(f"range query: need start <= end and step > 0 (got step {step_s})")
        form = {
            "query": expr,
            "start": _num(start),
            "end": _num(end),
            "step": _num(step_s),
            "timeout": f"{self.timeout_s:g}s",
        }
        data = self._call("query_range", form)
        result = data.get("result")
        if data.get("resultType") != "matrix" or not isinstance(result, list):
            raise EnvironmentProblem(f"{self.url}: query_range {expr!r} did not give a matrix")
        return [
            Series(_labels(r), tuple((float(t), parse_value(v)) for t, v in r.get("values", ())))
            for r in result
            if isinstance(r, dict)
        ]

    def series(
        self, match: Sequence[str], *, start: float | None = None, end: float | None = None
    ) -> list[dict[str, str]]:
        """Label sets of the series matching any selector of ``match`` in [start, end]."""
        form: list[tuple[str, str]] = [("match[]", m) for m in match]
        if start is not None:
            form.append(("start", _num(start)))
        if end is not None:
            form.append(("end", _num(end)))
        data = self._call("series", form)
        if not isinstance(data, list):
            raise EnvironmentProblem(f"{self.url}: /api/v1/series did not give a list")
        return [{str(k): str(v) for k, v in d.items()} for d in data if isinstance(d, dict)]

    def label_values(
        self,
        label: str,
        *,
        match: Sequence[str] = (),
        start: float | None = None,
        end: float | None = None,
    ) -> list[str]:
        """The values label ``label`` takes (in series matching ``match``, when given)."""
        query: list[tuple[str, str]] = [("match[]", m) for m in match]
        if start is not None:
            query.append(("start", _num(start)))
        if end is not None:
            query.append(("end", _num(end)))
        path = f"label/{urllib.parse.quote(label, safe='')}/values"
        data = self._call(path, query, method="GET")
        if not isinstance(data, list):
            raise EnvironmentProblem(f"{self.url}: label values of {label!r} are not a list")
        return [str(v) for v in data]

    # -- transport ---------------------------------------------------------------------------

    def _call(
        self,
        endpoint: str,
        form: Mapping[str, str] | Sequence[tuple[str, str]],
        *,
        method: str = "POST",
    ) -> Any:
        """One API call; the envelope's ``data`` on success, else one-line errors."""
        encoded = urllib.parse.urlencode(form)
        url = f"{self.url}/api/v1/{endpoint}"
        headers = dict(self._headers)
        body: bytes | None = None
        if method == "GET":
            url = f"{url}?{encoded}" if encoded else url
        else:
            body = encoded.encode("ascii")
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        req = urllib.request.Request(url, data=body, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s, context=self._context) as r:
                raw = r.read(MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as exc:
            text = _read_error(exc)
            raise EnvironmentProblem(
                f"Prometheus at {self.url} answered {endpoint} with HTTP {exc.code}"
                f" {exc.reason}{_api_error(text)}"
            ) from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            why = getattr(reason, "strerror", None) or str(reason)
            raise EnvironmentProblem(f"cannot reach Prometheus at {self.url}: {why}") from None
        except TimeoutError:
            raise EnvironmentProblem(
                f"Prometheus at {self.url} did not answer {endpoint} within {self.timeout_s:g} s"
            ) from None
        except OSError as exc:  # reset connections, TLS errors outside URLError
            raise EnvironmentProblem(
                f"cannot reach Prometheus at {self.url}: {exc.strerror or exc}"
            ) from None
        if len(raw) > MAX_RESPONSE_BYTES:
            raise EnvironmentProblem(
                f"Prometheus at {self.url}: the {endpoint} answer is larger than "
                f"{MAX_RESPONSE_BYTES >> 20} MiB; narrow the query"
            )
        try:
            doc = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise EnvironmentProblem(
                f"{url}: not a Prometheus API answer (not JSON: {raw[:80]!r}); is this the "
                "Prometheus base URL?"
            ) from None
        if not isinstance(doc, dict) or "status" not in doc:
            raise EnvironmentProblem(f"{url}: not a Prometheus API answer (no status field)")
        if doc["status"] != "success":
            raise EnvironmentProblem(
                f"Prometheus at {self.url} refused {endpoint}{_api_error(json.dumps(doc))}"
            )
        return doc.get("data")


def _num(t: float) -> str:
    if not math.isfinite(t):
        raise InputError(f"time or step {t!r} is not a finite number")
    return f"{t:.3f}".rstrip("0").rstrip(".")


def _labels(r: Mapping[str, Any]) -> dict[str, str]:
    metric = r.get("metric")
    if not isinstance(metric, dict):
        return {}
    return {str(k): str(v) for k, v in metric.items()}


def _read_error(exc: urllib.error.HTTPError) -> str:
    try:
        return exc.read(64 * 1024).decode("utf-8", "replace")
    except OSError:
        return ""


def _api_error(text: str) -> str:
    """``: errorType: error`` from an API error envelope, else the start of the body."""
    try:
        doc = json.loads(text)
    except ValueError:
        first = text.strip().splitlines()[0][:160] if text.strip() else ""
        return f": {first}" if first else ""
    if isinstance(doc, dict) and doc.get("error"):
        kind = doc.get("errorType")
        return f": {kind}: {doc['error']}" if kind else f": {doc['error']}"
    return ""

"""Load, validate, scrub, match and write vcrpy cassettes (format version 1) with provenance metadata.

Loading never patches anything: the YAML is read with vcrpy's own safe `_CassetteLoader`.
"""

from __future__ import annotations

import datetime as _dt
import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import yaml
from vcr.serializers import yamlserializer

from harness.cassette.bodies import parse_json_body, stream_flag
from harness.errors import CassetteError

CASSETTE_FORMAT_VERSION = 1


# Here, beside the recorded request that reads it, so matching.py depends on the cassette and not back.
# Header values that are obviously not credentials. Anything else in a credential header is refused.
_PLACEHOLDER = re.compile(
    r"^(?:(?:Bearer|Basic)\s+)?(?:<[^<>]*>|\[[^\[\]]*\]|\{[^{}]*\}|REDACTED|redacted|\*+|x+|X+|dummy|test|fake|)$"
)
# Substrings that look like a live credential wherever they appear (header values, scrubbed bodies).
_SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{20,}"),
    re.compile(r"\bBearer\s+(?!<)[A-Za-z0-9._~+/=\-]{20,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"),  # Google API keys (relay's Gemini adapter)
)
# Headers that carry credentials: any non-placeholder value is a secret, however short.
CREDENTIAL_HEADERS = frozenset(
    {"authorization", "x-api-key", "api-key", "proxy-authorization", "x-goog-api-key", "cookie", "set-cookie"}
)
# Response headers that identify an account; dropped by `scrub`, harmless when already absent.
ACCOUNT_HEADERS = frozenset(
    {
        "set-cookie",
        "anthropic-organization-id",
        "openai-organization",
        "openai-project",
        "cf-ray",
        "x-envoy-upstream-service-time",
    }
)
# Query parameters that carry credentials (Gemini accepts `?key=`); never stored, refused when real-looking.
CREDENTIAL_QUERY_PARAMS = frozenset({"key", "api_key", "apikey", "access_token"})
REDACTED = "<REDACTED>"

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# `host` or `host:port` (IPv6 in brackets): no scheme, no path, no `user@`.
_HOST = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9.\-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$")


@dataclass(frozen=True)
class Provenance:
    origin: Literal["recorded", "synthesized"]
    date: str
    provider: str
    api_version: str | None = None
    model: str | None = None
    description: str | None = None
    source: str | None = None
    host: str | None = None  # recorded: the API host, when it was not the provider's public API
    sdk: str | None = None  # recorded: the SDK and its version that sent the requests (`anthropic 0.75.0`)
    non_stream: str | None = (
        None  # recorded: how the non-stream answer was made (`derived from the recorded stream`)
    )

    def to_dict(self) -> dict[str, str]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    uri: str
    path: str
    headers: Mapping[str, tuple[str, ...]]  # lower-case names, every value a tuple as vcrpy stores lists
    body: bytes
    json: Any = None  # the parsed body when it was JSON

    @property
    def stream(self) -> bool:
        return stream_flag(self.json, self.path)


@dataclass(frozen=True)
class RecordedResponse:
    status: int
    message: str
    headers: Mapping[str, tuple[str, ...]]
    body: bytes

    @property
    def content_type(self) -> str:
        values = self.headers.get("content-type", ())
        return values[0] if values else ""

    @property
    def is_sse(self) -> bool:
        return self.content_type.split(";")[0].strip().lower() == "text/event-stream"


@dataclass(frozen=True)
class Interaction:
    request: RecordedRequest
    response: RecordedResponse


@dataclass(frozen=True)
class Cassette:
    name: str  # path under cassettes/ without `.yaml`, e.g. `anthropic/text-basic`
    path: Path
    metadata: Provenance
    interactions: tuple[Interaction, ...]
    # The scenario block as written (harness/cassette/scenario.py parses and checks it); None: the cassette has none.
    scenario: Mapping[str, Any] | None = None


# ---------------------------------------------------------------------------------------------
# Secrets


def find_secrets(headers: Mapping[str, Iterable[str]]) -> list[str]:
    """Names of headers whose values look like a real credential (placeholders such as `<REDACTED>` pass)."""
    found = []
    for name, values in headers.items():
        lname = name.lower()
        for value in values:
            text = str(value).strip()
            if lname in CREDENTIAL_HEADERS and not _PLACEHOLDER.match(text):
                found.append(lname)
                break
            if any(p.search(text) for p in _SECRET_PATTERNS):
                found.append(lname)
                break
    return found


def redact_text(text: str) -> str:
    """`text` with every secret-looking substring replaced by `<REDACTED>`."""
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(REDACTED, text)
    return text


def has_secret_text(text: str) -> bool:
    """True when `text` (a whole cassette file, a body) holds a substring `redact_text` would replace."""
    return any(p.search(text) for p in _SECRET_PATTERNS)


def scrub_headers(
    headers: Mapping[str, Iterable[str]], *, drop: Iterable[str] = ()
) -> dict[str, tuple[str, ...]]:
    """Lower-cased headers with credentials replaced by placeholders and `drop` names removed."""
    dropped = {d.lower() for d in drop}
    out: dict[str, tuple[str, ...]] = {}
    for name, values in headers.items():
        lname = name.lower()
        if lname in dropped:
            continue
        scrubbed = []
        for value in values:
            text = str(value)
            if lname in CREDENTIAL_HEADERS and not _PLACEHOLDER.match(text.strip()):
                # Keep the scheme so a reader still sees how the key travelled.
                text = f"Bearer {REDACTED}" if text.lower().startswith("bearer ") else REDACTED
            scrubbed.append(redact_text(text))
        out[lname] = (*out.get(lname, ()), *scrubbed)
    return out


def scrub_uri(uri: str) -> str:
    """`uri` without credential query parameters (`?key=` and kin); the rest of the query is kept in order."""
    parts = urlsplit(uri)
    if not parts.query:
        return uri
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(k, v) for k, v in pairs if k.lower() not in CREDENTIAL_QUERY_PARAMS]
    if len(kept) == len(pairs):
        return uri
    return urlunsplit(parts._replace(query=urlencode(kept)))


def _redact_body(body: bytes) -> bytes:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return body
    return redact_text(text).encode("utf-8")


def scrub(interaction: Interaction) -> Interaction:
    """The interaction without credentials or account identifiers, ready to be written."""
    req = interaction.request
    resp = interaction.response
    body = _redact_body(req.body)
    return Interaction(
        request=replace(
            req,
            uri=scrub_uri(req.uri),
            headers=scrub_headers(req.headers),
            body=body,
            json=parse_json_body(body),
        ),
        response=replace(
            resp,
            headers=scrub_headers(resp.headers, drop=ACCOUNT_HEADERS),
            body=_redact_body(resp.body),
        ),
    )


# ---------------------------------------------------------------------------------------------
# Loading


def load_cassette(path: str | Path, name: str | None = None) -> Cassette:
    """Read and validate one cassette file. `name` defaults to the file stem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise CassetteError(p, "no such cassette") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(p, f"cannot read: {exc}") from exc
    try:
        data = yaml.load(text, Loader=yamlserializer._CassetteLoader)  # vcrpy's safe loader: no python/* tags
    except yaml.YAMLError as exc:
        raise CassetteError(p, f"not valid cassette YAML: {exc}") from exc
    return cassette_from_dict(data, path=p, name=name or p.stem)


def load_named(name: str, cassettes_dir: str | Path) -> Cassette:
    """The cassette `<cassettes_dir>/<name>.yaml`; `name` may not leave the directory."""
    base = Path(cassettes_dir).resolve()
    path = (base / f"{name}.yaml").resolve()
    if base not in path.parents:
        raise CassetteError(path, f"cassette name {name!r} leaves {base}")
    return load_cassette(path, name=name)


def cassette_from_dict(data: Any, *, path: Path, name: str) -> Cassette:
    if not isinstance(data, dict):
        raise CassetteError(path, "not a cassette: the top level must be a mapping")
    version = data.get("version")
    if version != CASSETTE_FORMAT_VERSION:
        raise CassetteError(
            path, f"unsupported cassette version {version!r} (expected {CASSETTE_FORMAT_VERSION})"
        )
    metadata = _provenance(data.get("metadata"), path)
    raw = data.get("interactions")
    if not isinstance(raw, list) or not raw:
        raise CassetteError(path, "`interactions` must be a non-empty list")
    interactions = tuple(_interaction(item, path, i) for i, item in enumerate(raw))
    scenario = data.get("scenario")
    if scenario is not None and not isinstance(scenario, dict):
        raise CassetteError(path, "`scenario` must be a mapping")
    return Cassette(name=name, path=path, metadata=metadata, interactions=interactions, scenario=scenario)


def _provenance(meta: Any, path: Path) -> Provenance:
    if not isinstance(meta, dict):
        raise CassetteError(
            path, "missing provenance: top-level `metadata` mapping with origin, date, provider, ..."
        )
    origin = meta.get("origin")
    if origin not in ("recorded", "synthesized"):
        raise CassetteError(path, f"metadata.origin must be 'recorded' or 'synthesized', not {origin!r}")
    required = ("date", "provider", "api_version", "model") if origin == "recorded" else ("date", "provider")
    missing = [k for k in required if meta.get(k) in (None, "")]
    if missing:
        raise CassetteError(path, f"{origin} cassette lacks metadata: {', '.join(missing)}")
    values: dict[str, str | None] = {}
    for key in (
        "date",
        "provider",
        "api_version",
        "model",
        "description",
        "source",
        "host",
        "sdk",
        "non_stream",
    ):
        value = meta.get(key)
        if isinstance(value, _dt.date):  # an unquoted YAML date
            value = value.isoformat()
        if value is not None and not isinstance(value, str):
            raise CassetteError(path, f"metadata.{key} must be a string")
        values[key] = value
    date = values["date"]
    if date is None or not _DATE.match(date):
        raise CassetteError(path, f"metadata.date must be YYYY-MM-DD, not {date!r}")
    host = values["host"]
    if host is not None and origin != "recorded":
        raise CassetteError(
            path, "metadata.host names where a recording came from; a synthesized cassette has none"
        )
    if host is not None and not _HOST.match(host):
        raise CassetteError(path, f"metadata.host must be host or host:port, not {host!r}")
    unknown = set(meta) - {"origin", *values}
    if unknown:
        raise CassetteError(path, f"unknown metadata keys: {', '.join(sorted(unknown))}")
    return Provenance(
        origin=origin,
        date=date,
        provider=values["provider"] or "",
        api_version=values["api_version"],
        model=values["model"],
        description=values["description"],
        source=values["source"],
        host=host,
        sdk=values["sdk"],
        non_stream=values["non_stream"],
    )


def _headers(raw: Any, path: Path, where: str) -> dict[str, tuple[str, ...]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise CassetteError(path, f"{where}.headers must be a mapping")
    out: dict[str, tuple[str, ...]] = {}
    for name, values in raw.items():
        seq = values if isinstance(values, list | tuple) else [values]
        out[str(name).lower()] = (*out.get(str(name).lower(), ()), *(str(v) for v in seq))
    secrets = find_secrets(out)
    if secrets:
        raise CassetteError(path, f"{where} header {secrets[0]!r} holds a real-looking secret; scrub it")
    return out


def _body_bytes(raw: Any) -> bytes:
    if isinstance(raw, dict):  # vcrpy's response shape {"string": ...}
        raw = raw.get("string")
    if raw is None:
        return b""
    if isinstance(raw, bytes):
        return raw
    if isinstance(raw, io.BytesIO):  # legacy request bodies
        return raw.getvalue()
    if isinstance(raw, str):
        return raw.encode("utf-8")
    return b"".join(x if isinstance(x, bytes) else str(x).encode() for x in raw)


def _interaction(item: Any, path: Path, index: int) -> Interaction:
    where = f"interactions[{index}]"
    if (
        not isinstance(item, dict)
        or not isinstance(item.get("request"), dict)
        or not isinstance(item.get("response"), dict)
    ):
        raise CassetteError(path, f"{where} needs `request` and `response` mappings")
    req, resp = item["request"], item["response"]
    uri = req.get("uri")
    if not isinstance(uri, str) or not uri:
        raise CassetteError(path, f"{where}.request.uri is missing")
    if _query_secret(uri):
        raise CassetteError(path, f"{where}.request.uri carries a credential in its query string; scrub it")
    body = _body_bytes(req.get("body"))
    request = RecordedRequest(
        method=str(req.get("method", "POST")).upper(),
        uri=uri,
        path=_uri_path(uri),
        headers=_headers(req.get("headers"), path, f"{where}.request"),
        body=body,
        json=parse_json_body(body),
    )
    status = resp.get("status")
    if not isinstance(status, dict) or not isinstance(status.get("code"), int):
        raise CassetteError(path, f"{where}.response.status must be {{code: int, message: str}}")
    response = RecordedResponse(
        status=status["code"],
        message=str(status.get("message") or ""),
        headers=_headers(resp.get("headers"), path, f"{where}.response"),
        body=_body_bytes(resp.get("body")),
    )
    return Interaction(request=request, response=response)


def _query_secret(uri: str) -> bool:
    for name, value in parse_qsl(urlsplit(uri).query, keep_blank_values=True):
        if name.lower() in CREDENTIAL_QUERY_PARAMS and not _PLACEHOLDER.match(value.strip()):
            return True
    return has_secret_text(urlsplit(uri).query)


def _uri_path(uri: str) -> str:
    return urlsplit(uri).path or "/"


# ---------------------------------------------------------------------------------------------
# Writing


def cassette_to_dict(cassette: Cassette) -> dict[str, Any]:
    """The vcrpy dict form: decoded bodies (bytes only when not UTF-8), lower-case names, lists of values."""

    def text_or_bytes(body: bytes) -> str | bytes:
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            return body  # the dumper writes !!binary, as vcrpy does

    interactions = []
    for it in cassette.interactions:
        req, resp = it.request, it.response
        interactions.append(
            {
                "request": {
                    "body": text_or_bytes(req.body) if req.body else None,
                    "headers": {k.lower(): list(v) for k, v in req.headers.items()},
                    "method": req.method,
                    "uri": req.uri,
                },
                "response": {
                    "body": {"string": text_or_bytes(resp.body)},
                    "headers": {k.lower(): list(v) for k, v in resp.headers.items()},
                    "status": {"code": resp.status, "message": resp.message},
                },
            }
        )
    out: dict[str, Any] = {"metadata": cassette.metadata.to_dict(), "interactions": interactions}
    if cassette.scenario is not None:
        out["scenario"] = dict(cassette.scenario)
    out["version"] = CASSETTE_FORMAT_VERSION
    return out


def write_cassette(path: str | Path, cassette: Cassette) -> Path:
    """Write `cassette` as vcrpy YAML; refuses (CassetteError) anything `load_cassette` would refuse."""
    p = Path(path)
    data = cassette_to_dict(cassette)
    # Validate the exact data that will be written, so a written cassette always loads back.
    cassette_from_dict(data, path=p, name=cassette.name)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(cassette_text(data), encoding="utf-8")
    return p


def cassette_text(data: Mapping[str, Any]) -> str:
    """The one way a cassette is written (by `record` and by the generators alike): its provenance first, then
    the interactions, the scenario and the format version; keys in the order given; multi-line bodies (SSE) as
    literal blocks; no YAML anchors."""
    return yaml.dump(dict(data), Dumper=_ReadableDumper, allow_unicode=True, width=120, sort_keys=False)


class _ReadableDumper(yamlserializer._CassetteDumper):  # type: ignore[misc,name-defined]
    """vcrpy's dumper, but multi-line bodies (SSE) as literal blocks, so a reviewer sees the events, and no
    anchors (each value written where it is, as a reader expects)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    # PyYAML falls back to a quoted scalar by itself when a literal block cannot hold the text exactly.
    style = "|" if "\n" in value and "\r" not in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_ReadableDumper.add_representer(str, _represent_str)

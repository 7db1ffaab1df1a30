"""`gateway-conformance record`: re-record cassettes from a live provider with the official SDK and vcrpy.

Each scenario's recorded requests are sent again; the answers are scrubbed, stamped `origin: recorded`, and
compared semantically (ids, timestamps, signatures and rate limits ignored) with the cassette they replace.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import fnmatch
import inspect
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit, urlunsplit

import yaml
from vcr.serializers import yamlserializer

from harness import paths, sse
from harness.errors import ConfigError
from harness.outcomes import EXIT_CONFIG, EXIT_FAILURES, EXIT_OK
from harness.replay.cassette import (
    ACCOUNT_HEADERS,
    CREDENTIAL_HEADERS,
    REDACTED,
    Cassette,
    CassetteError,
    Interaction,
    Provenance,
    cassette_from_dict,
    endpoint_kind,
    has_secret_text,
    load_cassette,
    load_named,
    redact_text,
    scrub,
    scrub_headers,
    write_cassette,
)

EXIT_FAILED = EXIT_FAILURES  # a scenario could not be recorded
SUPPORTED_PROVIDERS = ("anthropic",)
PROVIDER_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY"}
DEFAULT_BASE_URL = {"anthropic": "https://api.anthropic.com"}
KEY_PLACEHOLDER = "<ANTHROPIC_API_KEY>"

# Request headers a recorded cassette keeps: what shapes the API's answer, plus the SDK's identity.
# The rest is transport (host, content-length) or a fingerprint of the recorder's machine (x-stainless-os).
KEPT_REQUEST_HEADERS = frozenset(
    {"accept", "anthropic-version", "anthropic-beta", "content-type", "user-agent", "x-stainless-retry-count"}
)
# Sent again from the old cassette because they change what the API does (the SDK sets anthropic-version).
FORWARDED_REQUEST_HEADERS = ("anthropic-beta",)
# Response headers never stored: account identifiers, hop-by-hop framing (the body is stored decoded),
# and retry hints that would make replaying SDKs really sleep (wire-reference §3.3 point 4).
DROPPED_RESPONSE_HEADERS = ACCOUNT_HEADERS | {
    "retry-after",
    "retry-after-ms",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
}
# Response headers whose presence or value says nothing about the provider's behaviour; the diff skips them.
_VOLATILE_HEADER = re.compile(
    r"^(?:anthropic-ratelimit-.*|x-ratelimit-.*|retry-after(?:-ms)?|request-id|x-request-id|date|server|via|alt-svc"
    r"|cf-.*|x-envoy-.*|server-timing|strict-transport-security|x-robots-tag|content-length|content-encoding"
    r"|transfer-encoding|connection|keep-alive|vary|set-cookie|anthropic-organization-id)$"
)


# ---------------------------------------------------------------------------------------------
# Which scenarios can be recorded (pure)


def fault_reason(cassette: Cassette) -> str | None:
    """Why a live provider cannot reproduce this cassette on demand (a fault), or None when it can."""
    for i, it in enumerate(cassette.interactions):
        status = it.response.status
        if not 200 <= status < 300:
            return f"interaction #{i} answers HTTP {status}"
        if it.response.is_sse and any(ev.event == "error" for ev in sse.decode(it.response.body).events):
            return f"interaction #{i} ends in a mid-stream `event: error`"
    return None


# ---------------------------------------------------------------------------------------------
# Semantic summary and diff (pure)


@dataclass(frozen=True)
class Summary:
    """What a gateway can observe in one answer, without ids, timestamps, signatures, text or token counts."""

    status: int
    body: str  # json | sse | the media type
    model: str | None = None
    stop_reason: str | None = None
    error_type: str | None = None
    blocks: tuple[str, ...] = ()  # content block types in order; tool uses with their tool name
    events: tuple[str, ...] = ()  # SSE event names, runs of one name collapsed to `name*`
    message_fields: frozenset[str] = frozenset()
    usage_fields: frozenset[str] = frozenset()  # the message's (or message_start's) usage, flattened
    delta_usage_fields: frozenset[str] = frozenset()  # message_delta's usage (streams)
    headers: frozenset[str] = frozenset()  # response header names, volatile ones left out


def _flatten_keys(value: Any, prefix: str = "") -> frozenset[str]:
    if not isinstance(value, dict):
        return frozenset()
    keys: set[str] = set()
    for k, v in value.items():
        name = f"{prefix}{k}"
        keys.add(name)
        keys |= _flatten_keys(v, f"{name}.")
    return frozenset(keys)


def _block_label(block: Any) -> str:
    if not isinstance(block, dict):
        return "?"
    kind = str(block.get("type"))
    if kind in ("tool_use", "server_tool_use") and isinstance(block.get("name"), str):
        return f"{kind}({block['name']})"
    return kind


def _collapse(names: Iterable[str]) -> tuple[str, ...]:
    # Live streams split text into a varying number of deltas; only the shape of the sequence is semantic.
    out: list[str] = []
    for name in names:
        if out and out[-1].rstrip("*") == name:
            out[-1] = f"{name}*"
        else:
            out.append(name)
    return tuple(out)


def _json(text: str | bytes | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def summarize(interaction: Interaction) -> Summary:
    resp = interaction.response
    headers = frozenset(h for h in resp.headers if not _VOLATILE_HEADER.match(h))
    media = resp.content_type.split(";")[0].strip().lower()
    if resp.is_sse:
        return _summarize_sse(resp.status, resp.body, headers)
    data = _json(resp.body)
    if media != "application/json" and data is None:
        return Summary(status=resp.status, body=media or "none", headers=headers)
    if isinstance(data, dict) and data.get("type") == "error":
        error = data.get("error")
        return Summary(
            status=resp.status,
            body="json",
            error_type=str(error.get("type")) if isinstance(error, dict) else None,
            headers=headers,
        )
    if not isinstance(data, dict):
        return Summary(status=resp.status, body="json", headers=headers)
    content = data.get("content")
    return Summary(
        status=resp.status,
        body="json",
        model=data.get("model") if isinstance(data.get("model"), str) else None,
        stop_reason=data.get("stop_reason"),
        blocks=tuple(_block_label(b) for b in content) if isinstance(content, list) else (),
        message_fields=frozenset(data),
        usage_fields=_flatten_keys(data.get("usage")),
        headers=headers,
    )


def _summarize_sse(status: int, body: bytes, headers: frozenset[str]) -> Summary:
    names: list[str] = []
    blocks: list[str] = []
    message: dict[str, Any] = {}
    stop_reason = error_type = None
    delta_usage: frozenset[str] = frozenset()
    for ev in sse.decode(body).events:
        names.append(ev.event or "(unnamed)")
        data = _json(ev.data)
        if not isinstance(data, dict):
            continue
        if ev.event == "message_start" and isinstance(data.get("message"), dict):
            message = data["message"]
        elif ev.event == "content_block_start":
            blocks.append(_block_label(data.get("content_block")))
        elif ev.event == "message_delta":
            delta = data.get("delta")
            if isinstance(delta, dict) and "stop_reason" in delta:
                stop_reason = delta["stop_reason"]
            delta_usage |= _flatten_keys(data.get("usage"))
        elif ev.event == "error" and isinstance(data.get("error"), dict):
            error_type = str(data["error"].get("type"))
    return Summary(
        status=status,
        body="sse",
        model=message.get("model") if isinstance(message.get("model"), str) else None,
        stop_reason=stop_reason,
        error_type=error_type,
        blocks=tuple(blocks),
        events=_collapse(names),
        message_fields=frozenset(message),
        usage_fields=_flatten_keys(message.get("usage")),
        delta_usage_fields=delta_usage,
        headers=headers,
    )


_SCALARS = (
    ("status", "status"),
    ("body", "body"),
    ("model", "model"),
    ("stop_reason", "stop_reason"),
    ("error_type", "error type"),
    ("blocks", "content blocks"),
    ("events", "SSE events"),
)
_SETS = (
    ("message_fields", "message fields"),
    ("usage_fields", "usage fields"),
    ("delta_usage_fields", "message_delta usage fields"),
    ("headers", "response headers"),
)


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    return "null" if value is None else str(value)


def diff_summaries(old: Summary, new: Summary) -> list[str]:
    """One line per semantic difference, e.g. `stop_reason end_turn → max_tokens`."""
    lines = []
    for attr, label in _SCALARS:
        a, b = getattr(old, attr), getattr(new, attr)
        if a != b:
            lines.append(f"{label} {_show(a)} → {_show(b)}")
    for attr, label in _SETS:
        a, b = getattr(old, attr), getattr(new, attr)
        parts = []
        if b - a:
            parts.append("appeared: " + ", ".join(sorted(b - a)))
        if a - b:
            parts.append("disappeared: " + ", ".join(sorted(a - b)))
        if parts:
            lines.append(f"{label} " + "; ".join(parts))
    return lines


def diff_cassettes(old: Cassette, new: Cassette) -> list[str]:
    """Semantic differences between the cassette being replaced and its new recording, per interaction."""
    lines = []
    if len(old.interactions) != len(new.interactions):
        lines.append(f"interactions {len(old.interactions)} → {len(new.interactions)}")
    for i, (a, b) in enumerate(zip(old.interactions, new.interactions, strict=False)):
        label = f"#{i} ({'stream' if a.request.stream else 'non-stream'})"
        lines.extend(f"{label}: {line}" for line in diff_summaries(summarize(a), summarize(b)))
    return lines


# ---------------------------------------------------------------------------------------------
# vcrpy hooks: what the temporary recording may hold


def _redact_credential(key: str, value: str, request: Any) -> str:
    # Keep the scheme so a reader sees how the SDK sent the key (2.14.0: `Authorization: Bearer`).
    return f"Bearer {REDACTED}" if str(value).lower().startswith("bearer ") else REDACTED


def _keep_request_headers(request: Any) -> Any:
    request.headers = {
        k: v for k, v in request.headers.items() if k.lower() in KEPT_REQUEST_HEADERS | CREDENTIAL_HEADERS
    }
    return request


def _scrub_response_headers(response: dict[str, Any]) -> dict[str, Any]:
    response["headers"] = {
        k: v for k, v in response["headers"].items() if k.lower() not in DROPPED_RESPONSE_HEADERS
    }
    return response


# ---------------------------------------------------------------------------------------------
# Recording one scenario


@dataclass(frozen=True)
class Failure:
    """A scenario the provider did not answer as a recording needs (or whose recording could not be kept)."""

    interaction: int | None
    status: int | None
    error_type: str | None
    message: str

    def describe(self) -> str:
        where = f" at interaction #{self.interaction}" if self.interaction is not None else ""
        status = f" HTTP {self.status}" if self.status is not None else ""
        kind = f" {self.error_type}" if self.error_type else ""
        message = f": {self.message}" if self.message else ""
        return f"FAILED{where}:{status}{kind}{message}"


def _clean(message: str, key: str) -> str:
    text = redact_text(message.replace(key, KEY_PLACEHOLDER) if key else message)
    return text if len(text) <= 200 else text[:200] + "…"


def _send_all(old: Cassette, client: Any, key: str) -> Failure | None:
    """Send every recorded request again, in order; the first failure stops the scenario."""
    import anthropic
    import httpx2

    for i, it in enumerate(old.interactions):
        body = it.request.json
        if not isinstance(body, dict):
            return Failure(i, None, None, "the recorded request body is not a JSON object")
        if endpoint_kind(it.request.path) != "anthropic.messages":
            return Failure(i, None, None, f"not an Anthropic Messages request: {it.request.path}")
        headers = {
            h: it.request.headers[h][0] for h in FORWARDED_REQUEST_HEADERS if it.request.headers.get(h)
        }
        try:
            # cast_to=httpx2.Response: the SDK returns the raw response without parsing, so SSE and JSON are
            # read whole and vcrpy stores the exact wire bytes; `stream` stays as recorded in the body.
            client.post("/v1/messages", body=body, cast_to=httpx2.Response, options={"headers": headers})
        except anthropic.APIStatusError as exc:
            return Failure(i, exc.status_code, exc.type, _clean(exc.api_message or "", key))
        except anthropic.APIConnectionError as exc:
            return Failure(i, None, type(exc).__name__, _clean(str(exc), key))
    return None


def record_scenario(
    old: Cassette, *, base_url: str, key: str, workdir: Path, today: str
) -> Cassette | Failure:
    """Record `old`'s requests against the provider; the result is scrubbed and stamped, not yet written."""
    import anthropic
    import vcr

    options: dict[str, Any] = {
        "record_mode": "all",
        "decode_compressed_response": True,
        "filter_headers": [(h, _redact_credential) for h in sorted(CREDENTIAL_HEADERS)],
        "before_record_request": _keep_request_headers,
        "before_record_response": _scrub_response_headers,
    }
    if "filter_sensitive_data" in inspect.signature(vcr.VCR).parameters:
        # vcrpy >= 9 (Python >= 3.11): replaces the key wherever it shows up (an error body echoing it)
        # before the file is saved. Older vcrpy: the final scan below refuses a file that still holds it.
        options["filter_sensitive_data"] = {KEY_PLACEHOLDER: key}
    recorder = vcr.VCR(**options)
    tmp = workdir / f"{old.path.stem}.vcr.yaml"
    with (
        anthropic.Anthropic(base_url=base_url, api_key=key, max_retries=0) as client,
        recorder.use_cassette(str(tmp)),
    ):
        failure = _send_all(old, client, key)
    if failure is not None:
        return failure
    if not tmp.is_file():
        return Failure(None, None, None, "vcrpy recorded nothing (is the SDK's transport patched?)")
    try:
        new = _to_cassette(tmp, old, today)
    except CassetteError as exc:
        return Failure(None, None, None, f"recording refused: {exc.problem}")
    # A transient fault (a mid-stream `event: error` after HTTP 200) must not become the scenario's answer.
    fault = fault_reason(new)
    return Failure(None, None, "fault", f"the provider answered with a fault: {fault}") if fault else new


def _to_cassette(tmp: Path, old: Cassette, today: str) -> Cassette:
    raw = yaml.load(tmp.read_text(encoding="utf-8"), Loader=yamlserializer._CassetteLoader)
    for item in raw.get("interactions") or []:
        # vcrpy's hooks already scrubbed; this second pass is the cassette module's own rules.
        item["request"]["headers"] = _lists(scrub_headers(item["request"].get("headers") or {}))
        item["response"]["headers"] = _lists(
            scrub_headers(item["response"].get("headers") or {}, drop=DROPPED_RESPONSE_HEADERS)
        )
    # Provisional provenance: api_version and model are read from the recording itself, below.
    raw["metadata"] = {"origin": "synthesized", "date": today, "provider": old.metadata.provider}
    parsed = cassette_from_dict(raw, path=old.path, name=old.name)
    interactions = tuple(scrub(it) for it in parsed.interactions)
    versions = [v for it in interactions for v in it.request.headers.get("anthropic-version", ())]
    models = [m for it in interactions if (m := summarize(it).model)]
    bodies = [it.request.json for it in interactions if isinstance(it.request.json, dict)]
    asked = [m for body in bodies if isinstance(m := body.get("model"), str)]
    provenance = Provenance(
        origin="recorded",
        date=today,
        provider=old.metadata.provider,
        api_version=versions[0] if versions else None,
        # The model the provider says answered; the requested one only when no answer names it.
        model=next(iter([*models, *asked]), None),
        description=old.metadata.description,
    )
    return replace(parsed, metadata=provenance, interactions=interactions)


def _lists(headers: Mapping[str, tuple[str, ...]]) -> dict[str, list[str]]:
    return {k: list(v) for k, v in headers.items()}


def write_checked(cassette: Cassette, dest: Path, key: str, *, staging: Path) -> None:
    """Write via a staging file that must load back and hold no secret; only then replace `dest`.

    With `staging` outside `dest`'s folder nothing is replaced (a dry run still proves the file would be clean).
    """
    staging.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{dest.stem}.", suffix=".yaml.tmp", dir=staging)
    os.close(fd)
    tmp = Path(name)
    try:
        write_cassette(tmp, cassette)
        text = tmp.read_text(encoding="utf-8")
        # A key shorter than 8 characters is no real key, and would match ordinary text.
        if has_secret_text(text) or (len(key) >= 8 and key in text):
            raise CassetteError(dest, "the recording still holds a secret after scrubbing; nothing written")
        load_cassette(tmp, name=cassette.name)
        if staging.resolve() == dest.parent.resolve():
            os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------------
# Command line


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gateway-conformance record",
        description="Regenerate cassettes against a live provider and show what changed.",
    )
    p.add_argument("--provider", required=True, help="the provider to record from (anthropic)")
    p.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="GLOB",
        help="only cassettes whose name matches (repeatable; default: all)",
    )
    p.add_argument("--base-url", help="the provider's API base URL (default: its public API)")
    p.add_argument("--cassettes-dir", type=Path, help="the cassettes folder (default: the suite's own)")
    p.add_argument("--dry-run", action="store_true", help="record and show the diff, but write nothing")
    return p


def _safe_url(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))  # no user:password@, no query


def _select(folder: Path, globs: Sequence[str]) -> list[Path]:
    files = sorted(folder.glob("*.yaml"))
    if not globs:
        return files
    # `text-*` and `anthropic/text-*` both select anthropic/text-basic.
    names = {f: (f.stem, f"{folder.name}/{f.stem}") for f in files}
    return [f for f in files if any(fnmatch.fnmatchcase(n, g) for n in names[f] for g in globs)]


def main(argv: list[str]) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return EXIT_CONFIG if exc.code not in (0, None) else EXIT_OK
    try:
        return _run(args, sys.stdout)
    except ConfigError as exc:
        print(f"gateway-conformance record: configuration error: {exc}", file=sys.stderr)
        return EXIT_CONFIG


def _run(args: argparse.Namespace, out: TextIO) -> int:
    provider: str = args.provider
    if provider not in SUPPORTED_PROVIDERS:
        raise ConfigError(
            f"provider {provider!r} is not supported yet (supported: {', '.join(SUPPORTED_PROVIDERS)})"
        )
    key = os.environ.get(PROVIDER_KEY_ENV[provider], "").strip()
    if not key:
        raise ConfigError(
            f"{PROVIDER_KEY_ENV[provider]} is not set: export the {provider} API key to record with"
        )
    folder = (args.cassettes_dir or paths.cassettes_dir()) / provider
    if not folder.is_dir():
        raise ConfigError(f"no cassettes folder {folder}")
    files = _select(folder, args.scenario)
    if not files:
        raise ConfigError(f"no cassette under {folder} matches {', '.join(args.scenario) or '*'}")
    base_url: str = args.base_url or DEFAULT_BASE_URL[provider]
    today = _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    dry = " (dry run: nothing is written)" if args.dry_run else ""
    print(f"recording {len(files)} {provider} scenario(s) from {_safe_url(base_url)}{dry}", file=out)

    counts = {"recorded": 0, "not recordable": 0, "failed": 0}
    with tempfile.TemporaryDirectory(prefix="gc-record-") as work:
        for path in files:
            name = f"{provider}/{path.stem}"
            try:
                old = load_named(name, folder.parent)
            except CassetteError as exc:
                print(f"{name}: FAILED: cannot read the cassette it replaces: {exc.problem}", file=out)
                counts["failed"] += 1
                continue
            reason = fault_reason(old)
            if reason is not None:
                print(f"{name}: not recordable (fault scenario): {reason}", file=out)
                counts["not recordable"] += 1
                continue
            result = record_scenario(old, base_url=base_url, key=key, workdir=Path(work), today=today)
            if isinstance(result, Cassette):
                try:
                    write_checked(result, path, key, staging=Path(work) if args.dry_run else path.parent)
                except CassetteError as exc:
                    result = Failure(None, None, None, f"recording refused: {exc.problem}")
            if isinstance(result, Failure):
                print(f"{name}: {result.describe()}", file=out)
                counts["failed"] += 1
                continue
            verb = "would replace" if args.dry_run else "replaced"
            meta = result.metadata
            print(
                f"{name}: recorded {len(result.interactions)} interaction(s), model {meta.model}, "
                f"anthropic-version {meta.api_version}; {verb} {path}",
                file=out,
            )
            changes = diff_cassettes(old, result)
            for line in changes or ["no semantic change"]:
                print(f"  {line}", file=out)
            counts["recorded"] += 1
    print("summary: " + ", ".join(f"{n} {label}" for label, n in counts.items()), file=out)
    return EXIT_FAILED if counts["failed"] else EXIT_OK

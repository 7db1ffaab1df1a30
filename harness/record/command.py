"""`gateway-conformance record`: refresh cassettes from a live provider with its official SDK and vcrpy.

Each cassette states its scenario (scenario.py). Record sends the scenario's own request (primed first when a
cache read needs it), records the stream only and derives the non-stream answer from it (derive.py: one
generation per pair), and keeps the recording only when it shows every property of the scenario, retrying up to
`--attempts` times; otherwise the old cassette stays and the line says what was missing. Recordings are
scrubbed, stamped `origin: recorded` (date, host, model, SDK) with a description of what they show, and compared
semantically (record_diff.py) with the cassette they replace. The provider families are data in providers.py.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import fnmatch
import inspect
import json
import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit, urlunsplit

import yaml
from vcr.serializers import yamlserializer

from harness import paths
from harness.cassette.bodies import parse_json_body
from harness.cassette.document import (
    ACCOUNT_HEADERS,
    CREDENTIAL_HEADERS,
    CREDENTIAL_QUERY_PARAMS,
    REDACTED,
    Cassette,
    Interaction,
    Provenance,
    RecordedRequest,
    cassette_from_dict,
    has_secret_text,
    load_cassette,
    load_named,
    redact_text,
    scrub,
    scrub_headers,
    scrub_uri,
    write_cassette,
)
from harness.cassette.scenario import Scenario, parse_scenario, with_nonce
from harness.cassette.summary import summarize
from harness.errors import CassetteError, ConfigError, DeriveError, ProviderError
from harness.families import EndpointKind, endpoint_kind
from harness.outcomes import EXIT_FAILURES, EXIT_OK
from harness.record.derive import derive_nonstream, nonstream_request
from harness.record.diff import diff_cassettes, fault_reason
from harness.record.providers import PROVIDERS, Provider
from harness.record.scenario_check import describe_recording, problems

__all__ = [
    "Failure",
    "NotReproduced",
    "diff_cassettes",
    "fault_reason",
    "record_scenario",
    "write_checked",
]

EXIT_FAILED = EXIT_FAILURES  # a scenario could not be recorded

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


# ---------------------------------------------------------------------------------------------
# Where and as whom one run records


@dataclass(frozen=True)
class RecordTarget:
    provider: Provider
    base_url: str
    key: str
    key_var: str  # the environment variable the key came from; `<NAME>` is its placeholder
    host: str | None  # the base URL's host[:port] when it is not the provider's public API

    @property
    def placeholder(self) -> str:
        return f"<{self.key_var}>"


def api_host(base_url: str, provider: Provider) -> str | None:
    """`host[:port]` of `base_url`, or None when it is the provider's public API (https, default port)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if host == provider.public_host and parts.scheme == "https" and parts.port in (None, 443):
        return None
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{parts.port}" if parts.port else shown


# ---------------------------------------------------------------------------------------------
# vcrpy hooks: what the temporary recording may hold


def _redact_credential(key: str, value: str, request: Any) -> str:
    # Keep the scheme so a reader sees how the SDK sent the key (2.14.0: `Authorization: Bearer`).
    return f"Bearer {REDACTED}" if str(value).lower().startswith("bearer ") else REDACTED


def _keep_request_headers(provider: Provider) -> Any:
    kept = provider.kept_request_headers | CREDENTIAL_HEADERS

    def hook(request: Any) -> Any:
        request.headers = {k: v for k, v in request.headers.items() if k.lower() in kept}
        return request

    return hook


def _scrub_response_headers(response: dict[str, Any]) -> dict[str, Any]:
    response["headers"] = {
        k: v for k, v in response["headers"].items() if k.lower() not in DROPPED_RESPONSE_HEADERS
    }
    return response


def _recorder(target: RecordTarget) -> Any:
    import vcr

    options: dict[str, Any] = {
        "record_mode": "all",
        "decode_compressed_response": True,
        "filter_headers": [(h, _redact_credential) for h in sorted(CREDENTIAL_HEADERS)],
        # `?key=` (Gemini's other way to send it) is removed from the URI before anything is stored.
        "filter_query_parameters": [(q, None) for q in sorted(CREDENTIAL_QUERY_PARAMS)],
        "before_record_request": _keep_request_headers(target.provider),
        "before_record_response": _scrub_response_headers,
    }
    if "filter_sensitive_data" in inspect.signature(vcr.VCR).parameters:
        # vcrpy >= 9 (Python >= 3.11): replaces the key wherever it shows up (an error body echoing it)
        # before the file is saved. Older vcrpy: the final scan in write_checked refuses a file still holding it.
        options["filter_sensitive_data"] = {target.placeholder: target.key}
    return vcr.VCR(**options)


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


def _clean(message: str, target: RecordTarget) -> str:
    text = redact_text(message.replace(target.key, target.placeholder) if target.key else message)
    return text if len(text) <= 200 else text[:200] + "…"


@dataclass(frozen=True)
class NotReproduced:
    """Recordings that did not show the scenario (what the last attempt lacked); the old cassette stays."""

    problems: tuple[str, ...]
    attempts: int

    def describe(self) -> str:
        tries = f"{self.attempts} attempts" if self.attempts > 1 else "1 attempt"
        return f"not reproduced: {'; '.join(self.problems)} (after {tries}); the old cassette stays"


def _send(client: Any, target: RecordTarget, request: RecordedRequest, index: int | None) -> Failure | None:
    try:
        target.provider.send(client, request)
    except ProviderError as exc:
        return Failure(index, exc.status, exc.error_type, _clean(exc.message, target))
    return None


def _stream_request(stream: RecordedRequest, body: Mapping[str, Any], kind: EndpointKind) -> RecordedRequest:
    """The scenario's body sent as the cassette's stream request (Gemini streams by path, the others by flag;
    OpenAI is asked for its usage chunk, which the derived non-stream answer needs)."""
    sent = dict(body)
    if kind != "gemini.generate":
        sent["stream"] = True
    if kind == "openai.chat":
        sent["stream_options"] = {"include_usage": True}
    raw = json.dumps(sent, separators=(",", ":"), ensure_ascii=False).encode()
    return replace(stream, body=raw, json=parse_json_body(raw))


def record_scenario(
    old: Cassette, scenario: Scenario, target: RecordTarget, *, workdir: Path, today: str, attempts: int = 1
) -> Cassette | Failure | NotReproduced:
    """Provoke `scenario` against the provider until a recording shows it (at most `attempts` times).

    One generation per pair: only the stream is recorded; the non-stream answer is derived from it (derive.py).
    The result is scrubbed and stamped, not yet written.
    """
    kind = target.provider.endpoint
    streams = [i for i, it in enumerate(old.interactions) if it.request.stream]
    plain = [i for i, it in enumerate(old.interactions) if not it.request.stream]
    if len(streams) != 1 or len(plain) > 1 or scenario.request is None:
        return Failure(
            None, None, None, "a recordable scenario is one stream interaction and its non-stream pair"
        )
    for it in old.interactions:
        if endpoint_kind(it.request.path) != kind:
            return Failure(None, None, None, f"not a {kind} request: {scrub_uri(it.request.path)}")
    found: tuple[str, ...] = ()
    for attempt in range(1, max(attempts, 1) + 1):
        nonce = secrets.token_hex(6)
        result = _record_once(
            old, scenario, target, workdir / f"{old.path.stem}.{attempt}.vcr.yaml", nonce, today
        )
        if not isinstance(result, Cassette):
            return result
        fault = fault_reason(result)
        found = (f"the provider answered with a fault: {fault}",) if fault else _missing(result, scenario)
        if not found:
            return result
    return NotReproduced(found, max(attempts, 1))


def _missing(cassette: Cassette, scenario: Scenario) -> tuple[str, ...]:
    """What the recording lacks: the stream's problems, then any the derived non-stream answer adds."""
    streamed = [problems(scenario.expect, it) for it in cassette.interactions if it.request.stream]
    derived = [problems(scenario.expect, it) for it in cassette.interactions if not it.request.stream]
    seen = [p for found in streamed for p in found]
    return (*seen, *(f"non-stream: {p}" for found in derived for p in found if p not in seen))


def _record_once(
    old: Cassette, scenario: Scenario, target: RecordTarget, tmp: Path, nonce: str, today: str
) -> Cassette | Failure:
    kind = target.provider.endpoint
    index = next(i for i, it in enumerate(old.interactions) if it.request.stream)
    body = with_nonce(scenario.request, nonce)
    stream = _stream_request(old.interactions[index].request, body, kind)
    with target.provider.connect(target.base_url, target.key) as client:
        if scenario.prime is not None:
            # Outside the recorder: the priming answer is not kept, it only puts the prefix in the cache.
            prime = nonstream_request(stream, with_nonce(scenario.prime, nonce), kind)
            failure = _send(client, target, prime, None)
            if failure is not None:
                return replace(failure, message=f"priming request: {failure.message}")
        with _recorder(target).use_cassette(str(tmp)):
            failure = _send(client, target, stream, index)
    if failure is not None:
        return failure
    if not tmp.is_file():
        return Failure(None, None, None, "vcrpy recorded nothing (is the SDK's transport patched?)")
    try:
        recorded = _recorded(tmp, old)
        (streamed,) = recorded
        interactions = list(old.interactions)
        interactions[index] = streamed
        if fault_reason(replace(old, interactions=tuple(interactions))) is not None:
            # A fault: record_scenario names it (by the stream's own index); nothing is derived from it.
            return replace(old, interactions=tuple(interactions))
        if len(old.interactions) == 2:
            interactions[1 - index] = scrub(derive_nonstream(streamed, body, kind))
    except (CassetteError, DeriveError, ValueError) as exc:
        return Failure(None, None, None, f"recording refused: {getattr(exc, 'problem', exc)}")
    return _stamped(old, scenario, tuple(interactions), target, today, index)


def _recorded(tmp: Path, old: Cassette) -> tuple[Interaction, ...]:
    raw = yaml.load(tmp.read_text(encoding="utf-8"), Loader=yamlserializer._CassetteLoader)
    for item in raw.get("interactions") or []:
        # vcrpy's hooks already scrubbed; this second pass is the cassette module's own rules.
        item["request"]["uri"] = scrub_uri(str(item["request"].get("uri") or ""))
        item["request"]["headers"] = _lists(scrub_headers(item["request"].get("headers") or {}))
        item["response"]["headers"] = _lists(
            scrub_headers(item["response"].get("headers") or {}, drop=DROPPED_RESPONSE_HEADERS)
        )
    raw["metadata"] = {"origin": "synthesized", "date": "2000-01-01", "provider": old.metadata.provider}
    parsed = cassette_from_dict(raw, path=old.path, name=old.name)
    return tuple(scrub(it) for it in parsed.interactions)


def _stamped(
    old: Cassette,
    scenario: Scenario,
    interactions: tuple[Interaction, ...],
    target: RecordTarget,
    today: str,
    stream_index: int,
) -> Cassette:
    models = [m for it in interactions if (m := summarize(it).model)]
    asked = [m for it in interactions if (m := _requested_model(it))]
    pair = len(interactions) == 2
    provenance = Provenance(
        origin="recorded",
        date=today,
        provider=old.metadata.provider,
        api_version=_api_version(interactions, target.provider),
        # The model the provider says answered; the requested one only when no answer names it.
        model=next(iter([*models, *asked]), None),
        description=describe_recording(scenario, interactions[stream_index]),
        host=target.host,
        sdk=target.provider.sdk_version(),
        non_stream=f"derived from the recorded stream (interaction #{stream_index})" if pair else None,
    )
    return replace(old, metadata=provenance, interactions=interactions, scenario=scenario.to_dict())


def _api_version(interactions: Sequence[Interaction], provider: Provider) -> str | None:
    """The version header the SDK sent (anthropic-version), else the path's version segment (`v1`, `v1beta`)."""
    if provider.version_header is not None:
        sent = [v for it in interactions for v in it.request.headers.get(provider.version_header, ())]
        return sent[0] if sent else None
    for it in interactions:
        for segment in it.request.path.split("/"):
            if segment[:1] == "v" and segment[1:2].isdigit():
                return segment
    return None


def _requested_model(interaction: Interaction) -> str | None:
    body = interaction.request.json
    model = body.get("model") if isinstance(body, dict) else None
    if isinstance(model, str):
        return model
    # Gemini names the model in the path: /v1beta/models/{model}:generateContent
    _, found, rest = interaction.request.path.partition("/models/")
    return (rest.split(":", 1)[0] or None) if found else None


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


def run(args: argparse.Namespace) -> int:
    """`record` with the arguments harness/cli/record.py parsed."""
    return _run(args, sys.stdout)


def _target(args: argparse.Namespace) -> RecordTarget:
    provider = PROVIDERS.get(args.provider)
    if provider is None:
        raise ConfigError(f"unknown provider {args.provider!r} (known: {', '.join(PROVIDERS)})")
    found = [(var, value) for var in provider.key_env if (value := os.environ.get(var, "").strip())]
    if not found:
        names = " or ".join(provider.key_env)
        raise ConfigError(f"{names} is not set: export the {provider.name} API key to record with")
    base_url: str = args.base_url or provider.base_url
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--base-url must be an http(s) URL, not {_safe_url(base_url)!r}")
    if parts.query or parts.username or parts.password:
        # A key in the URL would bypass the scrubbing of headers; the environment is its only way in.
        raise ConfigError(
            "--base-url must not carry a query string or user:password@ (the key comes from the environment)"
        )
    var, key = found[0]
    return RecordTarget(provider, base_url, key, var, api_host(base_url, provider))


def cassettes_folder(given: Path | None, *, dry_run: bool, out: TextIO) -> Path:
    """Where record reads and writes: `--cassettes-dir`, else `./cassettes` of the current project; either one
    seeded from the suite's set when it does not exist yet (so a refresh keeps what it cannot reproduce). Never the
    installed package's own copy."""
    suite = paths.cassettes_dir().resolve()
    folder = (given or Path.cwd() / "cassettes").resolve()
    installed = Path(paths.__file__).resolve().parent / "_data"
    if folder == installed / "cassettes" or installed in folder.parents:
        raise ConfigError(
            f"{folder} is inside the installed package; pass --cassettes-dir DIR (a folder of your project)"
        )
    if not folder.is_dir():
        if dry_run:
            where = "no ./cassettes here" if given is None else f"no {folder} yet"
            print(f"{where}: reading the suite's set at {suite} (dry run: nothing is written)", file=out)
            return suite
        shutil.copytree(suite, folder, ignore=shutil.ignore_patterns("_*.py", "__pycache__"))
        print(f"writing to {folder} (seeded from the suite's set at {suite})", file=out)
    elif given is None:
        print(f"writing to {folder} (./cassettes of the current project)", file=out)
    return folder


def _run(args: argparse.Namespace, out: TextIO) -> int:
    target = _target(args)
    name = target.provider.name
    base = cassettes_folder(args.cassettes_dir, dry_run=args.dry_run, out=out)
    folder = base / name
    if not folder.is_dir():
        raise ConfigError(f"no cassettes folder {folder}")
    files = _select(folder, args.scenario)
    if not files:
        raise ConfigError(f"no cassette under {folder} matches {', '.join(args.scenario) or '*'}")
    if args.attempts < 1:
        raise ConfigError("--attempts must be at least 1")
    today = _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    dry = " (dry run: nothing is written)" if args.dry_run else ""
    print(f"recording {len(files)} {name} scenario(s) from {_safe_url(target.base_url)}{dry}", file=out)
    counts = {"recorded": 0, "not recordable": 0, "not reproduced": 0, "failed": 0}
    missed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="gc-record-") as work:
        for path in files:
            outcome = _record_file(path, target, Path(work), today, args=args, out=out)
            counts[outcome] += 1
            if outcome in ("not reproduced", "failed"):
                missed.append(f"{name}/{path.stem}")
    print("summary: " + ", ".join(f"{n} {label}" for label, n in counts.items()), file=out)
    if missed:
        print(f"not written (the old cassettes stay): {', '.join(missed)}", file=out)
    return EXIT_FAILED if missed else EXIT_OK


def _record_file(
    path: Path, target: RecordTarget, work: Path, today: str, *, args: argparse.Namespace, out: TextIO
) -> str:
    """Record one cassette file, print what happened; the outcome is a key of `_run`'s counts."""
    name = f"{target.provider.name}/{path.stem}"
    try:
        old = load_named(name, path.parent.parent)
        scenario = parse_scenario(old.scenario, old.path)
    except CassetteError as exc:
        print(f"{name}: FAILED: cannot read the cassette it replaces: {exc.problem}", file=out)
        return "failed"
    if scenario is None:
        print(
            f"{name}: FAILED: the cassette states no scenario (see harness/cassette/synthesize/scenarios.py)",
            file=out,
        )
        return "failed"
    if not scenario.recordable:
        print(f"{name}: not recordable: {scenario.why}", file=out)
        return "not recordable"
    result = record_scenario(old, scenario, target, workdir=work, today=today, attempts=args.attempts)
    if isinstance(result, Cassette):
        try:
            write_checked(result, path, target.key, staging=work if args.dry_run else path.parent)
        except CassetteError as exc:
            result = Failure(None, None, None, f"recording refused: {exc.problem}")
    if isinstance(result, NotReproduced):
        print(f"{name}: {result.describe()}", file=out)
        return "not reproduced"
    if isinstance(result, Failure):
        print(f"{name}: {result.describe()}", file=out)
        return "failed"
    meta = result.metadata
    version = target.provider.version_header or "api version"
    host = f", host {meta.host}" if meta.host else ""
    print(
        f"{name}: recorded {len(result.interactions)} interaction(s), model {meta.model}, "
        f"{version} {meta.api_version}{host}; {'would replace' if args.dry_run else 'replaced'} {path}",
        file=out,
    )
    for line in diff_cassettes(old, result) or ["no semantic change"]:
        print(f"  {line}", file=out)
    return "recorded"

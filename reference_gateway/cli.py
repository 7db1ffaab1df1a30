"""`reference-gateway`: run the reference gateway for one profile in front of its upstream channels (Anthropic
Messages, OpenAI-compatible Chat Completions and Responses, Gemini, as its model catalog names them), serving
Chat Completions, Messages and Responses (over HTTP and a WebSocket) on one base URL."""

from __future__ import annotations

import argparse
import inspect
import json
import os
import socket
import sys
from collections.abc import Sequence
from typing import Any

from reference_gateway.app import GatewaySettings, create_app
from reference_gateway.auth import KeyRing
from reference_gateway.policy.keys import KeyPolicyError, parse_key_policies
from reference_gateway.policy.models import ModelCatalogError, load_catalog
from reference_gateway.policy.profiles import PROFILES, get_profile
from reference_gateway.upstream.client import UpstreamSettings
from reference_gateway.upstream.images import AllowList
from reference_gateway.web import logs

KEYS_ENV = "REFERENCE_GATEWAY_API_KEYS"
STATE_ENV = "REFERENCE_GATEWAY_STATE_URL"


def default_state_url() -> str:
    """The default store (relay's idempotency and cache; every profile's kept Responses): a SQLite file in the
    user's state directory (kept across restarts)."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return "sqlite:///" + os.path.join(base, "reference-gateway", "relay-state.sqlite3")


# uvicorn's h11 protocol answers a plain-text 400 and resets when a request head grows past this buffer (h11's
# default is 16 KB), before the app sees it; with room up to 2 MB the app answers headers over its own limit
# (`GatewaySettings.max_header_bytes`) with the 431 envelope instead.
HEADER_BUFFER_BYTES = 2 * 1024 * 1024


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reference-gateway",
        description="The suite's reference gateway, one documented profile (ezat, lyrouter, relay) per process. It "
        "serves OpenAI Chat Completions (POST …/chat/completions), Anthropic Messages (POST …/messages, with "
        "count_tokens) and OpenAI Responses (POST …/responses, its WebSocket, compaction and kept responses) on "
        "one base URL (the profile's, e.g. /openai/v1), and GET …/models; it calls each model's channel in its "
        "provider family: Anthropic Messages, OpenAI-compatible Chat Completions or Responses, or Gemini "
        "generateContent.",
    )
    parser.add_argument(
        "--profile", choices=sorted(PROFILES), default="ezat", help="documented gateway to implement"
    )
    parser.add_argument(
        "--upstream-url",
        required=True,
        help="upstream base URL for every channel, e.g. https://api.anthropic.com (channels add their base path)",
    )
    parser.add_argument(
        "--upstream-key", help="the gateway's own Anthropic key (default: $ANTHROPIC_API_KEY)"
    )
    parser.add_argument(
        "--openai-upstream-key",
        help="the gateway's own key for OpenAI-compatible channels (default: $OPENAI_API_KEY, else --upstream-key)",
    )
    for family, env in (
        ("anthropic", "ANTHROPIC_BASE_URL"),
        ("openai", "OPENAI_BASE_URL"),
        ("gemini", "GEMINI_BASE_URL"),
    ):
        parser.add_argument(
            f"--{family}-url",
            metavar="URL",
            help=f"base URL of the {family} family's channels (default: ${env}, else --upstream-url)",
        )
    parser.add_argument(
        "--gemini-upstream-key",
        help="the gateway's own Gemini key (default: $GEMINI_API_KEY, else --upstream-key)",
    )
    parser.add_argument(
        "--state-url",
        metavar="URL",
        help=f"the state store (relay: idempotency and response cache; every profile: kept Responses), "
        f"sqlite:///FILE or redis://HOST:PORT/DB "
        f"(default: ${STATE_ENV}, else a SQLite file under $XDG_STATE_HOME/reference-gateway)",
    )
    parser.add_argument(
        "--cache-ttl-seconds",
        type=float,
        default=0.0,
        help="relay: Gateway:Cache:TtlSeconds, the response cache's TTL (default 0: the cache is off)",
    )
    parser.add_argument(
        "--max-image-bytes",
        type=int,
        help="relay: Gateway:MaxImageBytes, decoded bytes per image (default 5 MB)",
    )
    parser.add_argument(
        "--api-key",
        action="append",
        default=[],
        metavar="KEY",
        help=f"a client key the gateway accepts (repeatable; also ${KEYS_ENV}, comma-separated)",
    )
    parser.add_argument("--no-auth", action="store_true", help="accept requests without a client key")
    parser.add_argument(
        "--rate-limit",
        action="append",
        default=[],
        metavar="KEY=N",
        help="a client key (accepted like --api-key) limited to N requests a minute, 0 for none: the gateway's own "
        "429, with Retry-After and the header x-gateway-ratelimited (repeatable)",
    )
    parser.add_argument(
        "--over-budget-key",
        action="append",
        default=[],
        metavar="KEY",
        help="a client key (accepted like --api-key) whose budget is spent: refused before any provider call in the "
        "profile's words (repeatable)",
    )
    parser.add_argument(
        "--models",
        metavar="FILE",
        help="model catalog YAML (default: the one shipped for the profile, e.g. models-lyrouter.yaml)",
    )
    default = parser.add_mutually_exclusive_group()
    default.add_argument(
        "--default-model",
        metavar="ID",
        help="the workspace's default model for requests without `model` (default: the catalog's default_model)",
    )
    default.add_argument(
        "--no-default-model",
        action="store_true",
        help="no default model: a request without `model` is refused (the catalog's default_model is ignored)",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080, help="0 picks a free port (printed on start)")
    parser.add_argument(
        "--ping-interval", type=float, default=10.0, help="seconds of silence before `: ping`"
    )
    parser.add_argument(
        "--upstream-timeout", type=float, default=590.0, help="non-streaming limit (504 after)"
    )
    parser.add_argument("--upstream-connect-timeout", type=float, default=10.0)
    parser.add_argument(
        "--stream-idle-timeout", type=float, default=600.0, help="upstream stream silence limit"
    )
    parser.add_argument("--anthropic-version", default="2023-06-01")
    parser.add_argument(
        "--allow-image-host",
        action="append",
        default=[],
        metavar="HOST_OR_CIDR",
        help="exempt a host name, IP or network from the public-address rule for image downloads (tests only)",
    )
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    parser.add_argument(
        "--log-format",
        default="text",
        choices=["text", "json"],
        help="text lines, or one JSON object a line for a log shipper (every error the gateway answers has a "
        "line naming its cause: README, Operations)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes sharing the port (each runs one event loop, so one core's worth; default 1)",
    )
    return parser


ARGV_ENV = "REFERENCE_GATEWAY_ARGV"  # how `--workers` hands the command line to the worker processes


class _Refused(Exception):
    """The command line cannot start a gateway (the message says why)."""


def _settings(args: argparse.Namespace) -> GatewaySettings:
    try:
        policies = parse_key_policies(args.rate_limit, args.over_budget_key)
    except KeyPolicyError as exc:
        raise _Refused(str(exc)) from exc
    keys = [*args.api_key, *os.environ.get(KEYS_ENV, "").split(","), *policies]
    ring = KeyRing.of(keys)
    if not ring.keys and not args.no_auth:
        raise _Refused(f"give --api-key KEY (or ${KEYS_ENV}), or --no-auth")
    profile = get_profile(args.profile)
    try:
        catalog = load_catalog(args.models, shipped=profile.catalog)
    except (OSError, ModelCatalogError) as exc:
        raise _Refused(f"cannot load the model catalog: {exc}") from exc
    default_model = None if args.no_default_model else (args.default_model or catalog.default_model)
    if default_model is not None and catalog.get(default_model) is None:
        raise _Refused(f"the default model {default_model!r} is not in the catalog")
    return GatewaySettings(
        profile=profile,
        catalog=catalog,
        default_model=default_model,
        upstream=UpstreamSettings(
            base_url=args.upstream_url,
            api_key=args.upstream_key or os.environ.get("ANTHROPIC_API_KEY"),
            openai_api_key=args.openai_upstream_key or os.environ.get("OPENAI_API_KEY"),
            gemini_api_key=args.gemini_upstream_key or os.environ.get("GEMINI_API_KEY"),
            family_urls={
                family: url
                for family, url in (
                    ("anthropic", args.anthropic_url or os.environ.get("ANTHROPIC_BASE_URL")),
                    ("openai", args.openai_url or os.environ.get("OPENAI_BASE_URL")),
                    ("gemini", args.gemini_url or os.environ.get("GEMINI_BASE_URL")),
                )
                if url
            },
            anthropic_version=args.anthropic_version,
            request_timeout=args.upstream_timeout,
            connect_timeout=args.upstream_connect_timeout,
            stream_idle_timeout=args.stream_idle_timeout,
        ),
        keys=None if args.no_auth and not ring.keys else ring,
        ping_interval=args.ping_interval,
        image_allow=AllowList.parse(args.allow_image_host),
        # relay's idempotency store and response cache; every profile's kept Responses (inbound/responses.py)
        state_url=args.state_url or os.environ.get(STATE_ENV) or default_state_url(),
        cache_ttl_seconds=args.cache_ttl_seconds,
        max_image_bytes=args.max_image_bytes,
        key_policies=policies,
    )


def app_from_env() -> Any:
    """The app of one `--workers` worker process: built from the command line the supervisor was given."""
    args = build_parser().parse_args(json.loads(os.environ[ARGV_ENV]))
    logs.configure(args.log_level, args.log_format)
    return create_app(_settings(args))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    logs.configure(args.log_level, args.log_format)
    try:
        settings = _settings(args)
    except _Refused as exc:
        print(f"reference-gateway: {exc}", file=sys.stderr)
        return 2
    if args.workers < 1:
        print("reference-gateway: --workers must be at least 1", file=sys.stderr)
        return 2
    import uvicorn  # the server is only needed when actually serving

    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    # proto=IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP; without it
    # Nagle holds each answer's body behind its headers until the client's delayed ACK (+40 ms per request).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    print(f"reference-gateway ({args.profile}) listening on http://{shown}:{port}", flush=True)
    # loop/http "auto": uvloop and httptools when installed (uvicorn[standard]), else asyncio and h11.
    common: dict[str, Any] = {
        "log_level": args.log_level,
        "access_log": False,
        "lifespan": "on",
        "h11_max_incomplete_event_size": HEADER_BUFFER_BYTES,
    }
    if args.workers == 1:
        uvicorn.Server(uvicorn.Config(create_app(settings), **common)).run(sockets=[sock])
        return 0
    from uvicorn.supervisors import Multiprocess

    # Each worker is a fresh process (spawned): it rebuilds the app from the same command line, and all of
    # them accept on the one socket bound here.
    os.environ[ARGV_ENV] = json.dumps([*argv, "--port", str(port)])
    config = uvicorn.Config(
        "reference_gateway.cli:app_from_env", factory=True, workers=args.workers, **common
    )
    older: dict[str, Any] = {}
    if "target" in inspect.signature(Multiprocess).parameters:  # older uvicorn took the worker's target
        older["target"] = uvicorn.Server(config).run
    Multiprocess(config, sockets=[sock], **older).run()
    return 0

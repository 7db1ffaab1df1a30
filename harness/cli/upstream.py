"""`serve-upstream`: the replay upstream standalone, for a gateway started by hand."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.outcomes import EXIT_OK


def add_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "serve-upstream",
        help="run the replay upstream standalone for any gateway",
        description="Run the replay upstream (cassettes by case marker, fault injection, image fixtures) "
        "so a gateway started by hand can be pointed at it.",
    )
    p.add_argument(
        "--port", type=int, default=8765, help="port to listen on (0 picks a free one; default 8765)"
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument(
        "--cassettes", type=Path, default=None, help="cassettes directory (default: the bundled cassettes/)"
    )
    p.add_argument(
        "--allow-non-loopback",
        action="store_true",
        help="allow binding a non-loopback address. Off by default: the control API lets anyone who can "
        "reach it register cases and read every request the gateway forwarded, including its upstream "
        "API key headers.",
    )
    p.add_argument(
        "--simulate",
        action="store_true",
        help="serve the live provider simulator instead: Anthropic Messages and OpenAI-compatible Chat "
        "Completions answered from the request alone, like a real model (try --upstream live offline)",
    )
    p.add_argument(
        "--log-level",
        choices=("warning", "info", "debug"),
        default="warning",
        help="warning (default): problems only; info: a line per request the gateway sends; debug: the harness's "
        "control calls (/__gc/…) too",
    )
    p.set_defaults(func=serve_upstream)


def serve_upstream(args: argparse.Namespace) -> int:
    from harness import paths
    from harness.replay.server import bind_foreground, is_loopback, serve_foreground

    if not is_loopback(args.host) and not args.allow_non_loopback:
        raise ConfigError(
            f"refusing to bind {args.host}: not a loopback address (pass --allow-non-loopback to "
            "override; anyone who can reach the port can read the forwarded requests and their API key "
            "headers)"
        )
    try:
        sock, url = bind_foreground(args.host, args.port)
    except OSError as exc:
        raise ConfigError(f"cannot bind {args.host}:{args.port}: {exc}") from exc
    if args.simulate:
        from harness.simulator.app import serve_simulator_foreground

        print(f"live provider simulator listening on {url} (answers from the request alone; no cassettes)")
        print(f"  Anthropic base URL for the gateway:           {url}   (it will POST {url}/v1/messages)")
        print(f"  OpenAI-compatible upstream base URL:          {url}/v1")
        print("  then: pytest --gateway-url <your gateway's OpenAI base URL> --upstream live")
        print("Ctrl-C to stop.", flush=True)
        serve_simulator_foreground(sock)
        print("simulator stopped.")
        return EXIT_OK
    cassettes = args.cassettes if args.cassettes is not None else paths.cassettes_dir()
    print(f"replay upstream listening on {url} (cassettes: {cassettes})")
    print(f"  Anthropic base URL for the gateway:           {url}   (it will POST {url}/v1/messages)")
    print(f"  OpenAI-compatible upstream base URL:          {url}/v1")
    print(f"  image fixtures (${{images_url}}):              {url}/__gc/files")
    print(f"  then: pytest --gateway-url <your gateway's OpenAI base URL> --replay-url {url}")
    print("Ctrl-C to stop.", flush=True)
    serve_foreground(sock, cassettes, args.log_level)
    print("replay upstream stopped.")
    return EXIT_OK

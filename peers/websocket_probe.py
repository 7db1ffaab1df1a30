"""A stand-alone probe of a gateway's Responses WebSocket mode and compaction endpoints (issue 44): what a client
dialing `{base}/responses` as a WebSocket meets (the upgrade's status, how long it took, its body), what one turn
and a `store: false` continuation on the socket answer when the upgrade is accepted, and how `POST
{base}/responses/compact` and `POST {base}/responses/input_tokens` are answered. It needs no replay upstream: point
the gateway at any provider that answers (`gateway-conformance serve-upstream --simulate`), and judge with the
catalog (`certify --rule 'responses/websocket/*' --rule 'responses/compact/*'`) for verdicts.

    python3 peers/websocket_probe.py --base-url http://127.0.0.1:4000/v1 --key sk-... --model claude-test [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import httpx
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException
from websockets.sync.client import connect
from websockets.sync.connection import Connection

TERMINAL = ("response.completed", "response.incomplete", "response.failed", "error")


def _short(raw: Any, limit: int = 300) -> str:
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)
    return text if len(text) <= limit else text[:limit] + "…"


def _turn(ws: Connection, body: dict[str, Any], timeout: float) -> dict[str, Any]:
    started = time.monotonic()
    ws.send(json.dumps({"type": "response.create", **body}))
    kinds: list[str] = []
    last: dict[str, Any] = {}
    try:
        while True:
            last = json.loads(ws.recv(timeout=timeout))
            kinds.append(str(last.get("type")))
            if last.get("type") in TERMINAL:
                break
    except TimeoutError:
        return {"events": kinds, "end": f"no terminal event within {timeout:g}s"}
    except ConnectionClosed as exc:
        return {"events": kinds, "end": f"socket closed ({exc.rcvd.code if exc.rcvd else 'no close frame'})"}
    found = last.get("response")
    response: dict[str, Any] = found if isinstance(found, dict) else {}
    said = last.get("error")
    error = said if isinstance(said, dict) else None
    return {"events": kinds, "end": last.get("type"), "seconds": round(time.monotonic() - started, 3),
            "id": response.get("id"), "status": last.get("status"), "error": error}  # fmt: skip


def probe_socket(url: str, key: str, model: str, timeout: float) -> dict[str, Any]:
    ws_url = url.replace("https://", "wss://").replace("http://", "ws://").rstrip("/") + "/responses"
    headers = {"authorization": f"Bearer {key}"}
    started = time.monotonic()
    try:
        ws = connect(ws_url, additional_headers=headers, proxy=None, open_timeout=timeout, ping_interval=None)
    except InvalidStatus as exc:
        answer = exc.response
        return {"upgrade": answer.status_code, "seconds": round(time.monotonic() - started, 3),
                "headers": {k.lower(): v for k, v in answer.headers.raw_items()
                            if k.lower() in ("content-type", "upgrade", "connection")},
                "body": _short(answer.body or b"")}  # fmt: skip
    except TimeoutError:
        return {
            "upgrade": None,
            "seconds": round(time.monotonic() - started, 3),
            "body": "no answer (timeout)",
        }
    except (WebSocketException, OSError) as exc:
        return {
            "upgrade": None,
            "seconds": round(time.monotonic() - started, 3),
            "body": f"{type(exc).__name__}: {exc}",
        }
    out: dict[str, Any] = {"upgrade": 101, "seconds": round(time.monotonic() - started, 3)}
    with ws:
        first = _turn(ws, {"model": model, "store": False, "input": "Say hello in one sentence."}, timeout)
        out["turn"] = first
        if first.get("id"):
            out["continuation"] = _turn(
                ws,
                {"model": model, "store": False, "previous_response_id": first["id"], "input": "Again."},
                timeout,
            )
    if first.get("id"):
        try:
            with connect(ws_url, additional_headers=headers, proxy=None, open_timeout=timeout) as other:
                body = {
                    "model": model,
                    "store": False,
                    "previous_response_id": first["id"],
                    "input": "Again.",
                }
                out["other_socket"] = _turn(other, body, timeout)
        except (WebSocketException, OSError) as exc:
            out["other_socket"] = {"end": f"{type(exc).__name__}: {exc}"}
    return out


def probe_http(
    url: str, key: str, model: str, path: str, body: dict[str, Any], timeout: float
) -> dict[str, Any]:
    started = time.monotonic()
    try:
        answer = httpx.post(
            url.rstrip("/") + path, json=body, headers={"authorization": f"Bearer {key}"}, timeout=timeout,
            trust_env=False,
        )  # fmt: skip
    except httpx.HTTPError as exc:
        return {"status": None, "body": f"{type(exc).__name__}: {exc}"}
    return {
        "status": answer.status_code,
        "seconds": round(time.monotonic() - started, 3),
        "body": _short(answer.content),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True, help="the gateway's OpenAI base URL (…/v1)")
    parser.add_argument("--key", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--timeout", type=float, default=15.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    conversation = [
        {"role": "user", "content": "Remember the word TULIP."},
        {"role": "assistant", "content": "I will remember TULIP."},
    ]

    def http(path: str, body: dict[str, Any]) -> dict[str, Any]:
        return probe_http(args.base_url, args.key, args.model, path, body, args.timeout)

    found = {
        "websocket": probe_socket(args.base_url, args.key, args.model, args.timeout),
        "compact": http("/responses/compact", {"model": args.model, "input": conversation}),
        "compact_without_model": http("/responses/compact", {"input": conversation}),
        "input_tokens": http("/responses/input_tokens", {"model": args.model, "input": "Say hello."}),
    }
    json.dump(found, sys.stdout, indent=1 if args.json else None)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`gateway-conformance fuzz`: the invariants on made-up exchanges, a bounded run against the reference gateway
(both profiles, nothing found), and a run against a gateway that answers 500 for client errors (found, shrunk,
with a curl repro)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness.cli import main as cli_main
from harness.fuzz.command import embedded_pairs
from harness.fuzz.document import results_document
from harness.fuzz.invariants import Exchange, FuzzAnswer, check, error_shape, json_problem, style_for
from harness.fuzz.run import fuzz_profile
from harness.fuzz.strategies import Case
from harness.fuzz.tap import tapped_replay
from harness.orchestrate.embedded import mapped_models
from harness.paths import schema_path
from reference_gateway.app import create_app
from tests.reference_gateway.conftest import CLIENT_KEY, ServerThread, gateway_settings, read_request


def main(argv: list[str]) -> int:
    return cli_main(["fuzz", *argv])


ENVELOPE = json.dumps(
    {"error": {"message": "m", "type": "invalid_request_error", "param": None, "code": None}}
)


def exchange(
    status: int, body: bytes | str, *, refused: bool = False, upstream: list[bytes] | None = None
) -> Exchange:
    raw = body.encode() if isinstance(body, str) else body
    return Exchange(
        Case("hostile", b"{}", refused=refused, note="n"),
        FuzzAnswer(status, "application/json", raw, 0.01),
        upstream,
    )


@pytest.mark.parametrize(
    "profile, ex, broken",
    [
        ("ezat", exchange(400, ENVELOPE), []),
        ("ezat", exchange(500, ENVELOPE), ["robustness/no-5xx-for-client-errors"]),
        ("ezat", exchange(400, "plain words\n"), ["robustness/error-envelope"]),
        ("ezat", exchange(400, '{"message": "flat"}'), ["robustness/error-envelope"]),
        ("lyrouter", exchange(400, '{"message": "flat"}'), []),
        ("lyrouter", exchange(400, "unsupported content-type: text/plain\n"), []),
        ("lyrouter", exchange(400, "<html>\n<body>x</body>\n</html>\n"), ["robustness/error-envelope"]),
        ("lyrouter", exchange(400, '{"type": "error"}', upstream=[b"{}"]), []),  # forwarded unchanged
        (
            "lyrouter",
            exchange(503, json.dumps({"error": {"message": "x", "type": "t", "code": "no_route_candidate"}})),
            [],
        ),
        ("ezat", exchange(200, "{}", upstream=[b'{"top_p": -Infinity}']), ["robustness/upstream-json-valid"]),
        ("ezat", exchange(200, "{}", upstream=[b'{"a": "\\ud800"}']), ["robustness/upstream-json-valid"]),
        (
            "ezat",
            exchange(400, ENVELOPE, refused=True, upstream=[b"{}"]),
            ["robustness/refused-before-upstream"],
        ),
        ("ezat", exchange(400, ENVELOPE, refused=True, upstream=None), []),  # upstream not observed
        (
            "ezat",
            Exchange(Case("schema", b"{}"), FuzzAnswer(0, "", b"", 30.0, "no answer"), []),
            ["robustness/no-hang"],
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_invariants(profile: str, ex: Exchange, broken: list[str]) -> None:
    assert [v.rule_id for v in check(ex, style_for(profile))] == broken


@pytest.mark.parametrize(
    "body, problem",
    [
        (b'{"a": 1}', None),
        (b'{"a": NaN}', "NaN"),
        (b'{"a": 1e999}', "overflows"),
        (b"\xff{}", "UTF-8"),
        (b'{"a', "not JSON"),
    ],
)
def test_json_problem(body: bytes, problem: str | None) -> None:
    found = json_problem(body)
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_error_shapes() -> None:
    assert error_shape(FuzzAnswer(400, "", ENVELOPE.encode(), 0)) == "envelope"
    assert error_shape(FuzzAnswer(400, "", b"one line\n", 0)) == "text-line"
    assert error_shape(FuzzAnswer(400, "", b"[1]", 0)) is None


# ------------------------------------------------------------------------------------ real runs


@pytest.fixture(scope="module")
def replay() -> Iterator[tuple[str, Any]]:
    with tapped_replay() as served:
        yield served


def _lyrouter_settings(url: str) -> Any:
    from dataclasses import replace

    from reference_gateway.policy.models import load_catalog
    from reference_gateway.policy.profiles import LYROUTER

    settings = gateway_settings(url)
    return replace(
        settings,
        profile=LYROUTER,
        catalog=load_catalog(shipped=LYROUTER.catalog),
        default_model="claude-sonnet-5-5",
    )


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.parametrize("profile", ["ezat", "lyrouter"])
def test_reference_gateway_survives_a_bounded_fuzz(
    profile: str, replay: tuple[str, Any], tmp_path: Path
) -> None:
    replay_url, tap = replay
    settings = gateway_settings(replay_url) if profile == "ezat" else _lyrouter_settings(replay_url)
    base = "/openai/v1" if profile == "ezat" else "/v1"
    with ServerThread(create_app(settings)) as server:
        run = fuzz_profile(
            profile, server.url + base, CLIENT_KEY, tap, examples=200, seconds=None, seed=7, timeout=20.0
        )
    failure = run.failure
    assert failure is None, (failure.violations, failure.exchange.case, failure.curl)
    assert run.healthy is None
    figures = run.figures
    assert figures.examples == 200 and figures.server_errors == figures.non_envelope == 0
    assert figures.upstream_requests > 0, "nothing reached the upstream: the upstream checks never ran"
    assert len(figures.by_kind) >= 5
    document = results_document(run, examples=200, seed=7, replay_url=replay_url, description="test")
    jsonschema.validate(document, json.loads(schema_path("report").read_text()))
    assert {r["area"] for r in document["results"]} == {"robustness"}
    assert document["totals"]["PASS"] == len(document["results"])


class _TinyGateway:
    """An ASGI gateway mutant for the fuzz tests: reads the whole body, answers `answer()`'s (status, JSON)."""

    async def answer(self, method: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        raise NotImplementedError

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            from tests.reference_gateway.conftest import answer_lifespan

            await answer_lifespan(receive, send)
            return
        raw, _headers = await read_request(scope, receive)
        status, body = await self.answer(scope["method"], raw)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": json.dumps(body).encode()})


class ServerErrorsForClientErrors(_TinyGateway):
    """A gateway mutant: OpenAI envelopes, but any body it cannot use is a 500 instead of a 400."""

    async def answer(self, method: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        if method != "POST":
            return 200, {"object": "list", "data": []}
        try:
            parsed = json.loads(raw)
            usable = isinstance(parsed, dict) and isinstance(parsed.get("messages"), list)
        except ValueError:
            usable = False
        kind = "invalid_request_error" if usable else "server_error"
        return (400 if usable else 500), {
            "error": {"message": "no", "type": kind, "param": None, "code": None}
        }


@pytest.mark.e2e
def test_a_gateway_answering_500_for_client_errors_fails_with_a_shrunk_repro(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ServerThread(ServerErrorsForClientErrors()) as server:
        code = main(
            [
                *("--gateway-url", server.url + "/v1", "--profile", "ezat", "--gateway-key", "k"),
                *("--examples", "100", "--seed", "3", "--report-dir", str(tmp_path)),
            ]
        )
    assert code == 1
    err = capsys.readouterr().err
    assert "shrunk minimal example" in err and "robustness/no-5xx-for-client-errors: HTTP 500" in err
    assert "of seed 3, shrunk by hypothesis" in err  # which example of which seed: rerun with --seed 3
    repro = next(line for line in err.splitlines() if line.strip().startswith("repro: "))
    assert "curl -sS -X POST" in repro and "/v1/chat/completions" in repro
    body_line = next(line for line in err.splitlines() if line.strip().startswith("body: "))
    assert len(body_line) < 120, f"not shrunk: {body_line}"
    document = json.loads((tmp_path / "ezat" / "robustness.json").read_text())
    jsonschema.validate(document, json.loads(schema_path("report").read_text()))
    outcomes = {r["rule_id"]: r["outcome"] for r in document["results"]}
    assert outcomes["robustness/no-5xx-for-client-errors"] == "WARN"
    assert (
        outcomes["robustness/upstream-json-valid"] == "SKIP"
    )  # no replay port: the upstream is not observed


class ForwardsEverything(_TinyGateway):
    """A gateway mutant: it forwards every body to the upstream unread (then answers a 400 envelope), so refused
    and invalid bodies reach the upstream."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream

    async def answer(self, method: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        import httpx

        if method != "POST":
            return 200, {"object": "list", "data": []}
        async with httpx.AsyncClient(trust_env=False) as client:
            await client.post(self.upstream + "/v1/messages", content=raw)
        return 400, {"error": {"message": "no", "type": "invalid_request_error", "param": None, "code": None}}


@pytest.mark.e2e
def test_a_gateway_forwarding_refused_bodies_upstream_is_caught_and_shrunk(replay: tuple[str, Any]) -> None:
    replay_url, tap = replay
    with ServerThread(ForwardsEverything(replay_url)) as server:
        run = fuzz_profile(
            "ezat", server.url + "/v1", "k", tap, examples=200, seconds=None, seed=2, timeout=20.0
        )
    failure = run.failure
    assert failure is not None
    ids = {v.rule_id for v in failure.violations}
    assert "robustness/refused-before-upstream" in ids, ids
    # hypothesis shrank whatever refused or invalid body was found first to a few bytes that are not JSON
    case = failure.exchange.case
    assert case.kind == "not-json" and len(case.body) <= 4, case
    assert failure.exchange.upstream_bodies == [case.body]
    assert "shrunk by hypothesis" in failure.found and "of seed 2" in failure.found
    assert "curl -sS -X POST" in failure.curl
    assert (
        run.figures.examples <= 200
        and run.figures.refused_reaching_upstream + run.figures.invalid_upstream_json
    )


def test_a_profile_without_rules_is_bad_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--profile", "nosuch", "--examples", "1", "--report-dir", str(tmp_path)]) == 3
    assert "no profile nosuch" in capsys.readouterr().err


def test_every_catalog_is_fuzzed_on_every_gateway_that_serves_it() -> None:
    """Embedded, every endpoint of every profile (issue 47): the chat endpoint under each gateway's own profile,
    Messages and Responses on each gateway that serves them, with the ids of its model map; `openai` (the same
    chat endpoints) when asked for."""
    assert embedded_pairs(None) == [
        ("anthropic", "ezat"), ("anthropic", "lyrouter"), ("anthropic", "relay"),
        ("ezat", "ezat"), ("lyrouter", "lyrouter"), ("relay", "relay"),
        ("responses", "ezat"), ("responses", "lyrouter"), ("responses", "relay"),
    ]  # fmt: skip
    assert embedded_pairs(["openai"]) == [("openai", "ezat"), ("openai", "lyrouter"), ("openai", "relay")]
    assert mapped_models("ezat", "ezat") == []
    assert "gpt-5.5" in mapped_models("responses", "lyrouter")


@pytest.mark.e2e
@pytest.mark.parametrize(("catalog", "profile"), [("anthropic", "ezat"), ("anthropic", "lyrouter"),
                                                  ("responses", "ezat"), ("responses", "lyrouter")])  # fmt: skip
def test_reference_gateway_survives_a_bounded_fuzz_on_every_surface(
    catalog: str, profile: str, replay: tuple[str, Any]
) -> None:
    replay_url, tap = replay
    settings = gateway_settings(replay_url) if profile == "ezat" else _lyrouter_settings(replay_url)
    base = "/openai/v1" if profile == "ezat" else "/v1"
    with ServerThread(create_app(settings)) as server:
        run = fuzz_profile(
            catalog, server.url + base, CLIENT_KEY, tap, examples=200, seconds=None, seed=7, timeout=20.0,
            models=mapped_models(catalog, profile),
        )  # fmt: skip
    failure = run.failure
    assert failure is None, (failure.violations, failure.exchange.case, failure.curl)
    assert run.healthy is None
    assert run.figures.upstream_requests > 0

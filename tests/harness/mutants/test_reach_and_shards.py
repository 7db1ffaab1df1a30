"""The fast kill matrix: which variants a mutant can reach, shards and their merge, the pooled run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.engine.target import Outcome
from harness.exchange import Exchange, ReceivedResponse, SentRequest, ServedAnswer, UpstreamCall
from harness.mutants.catalog import Mutant, load_catalog, mutant_from
from harness.mutants.command import parse_shard, shard_of
from harness.mutants.kill import Kill, Matrix, MutantResult, matrix_json, merge_matrices
from harness.mutants.kill import diff_kill_sets as diff
from harness.mutants.reach import reaches

MARKER = "[gc:ezat/x/y#0a1b2c3d]"
CLIENT_BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": f"{MARKER} hi"}]}
STREAM = (
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"'
    b',"content":""},"finish_reason":null}]}\n\n'
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},'
    b'"finish_reason":null}]}\n\n'
    b": ping\n\n"
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},'
    b'"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)
UPSTREAM_BODY = {"model": "claude", "stream": True, "messages": [{"role": "user", "content": f"{MARKER} hi"}]}
UPSTREAM_SSE = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":3}}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)


def outcome(
    *,
    client: dict[str, Any] | bytes = CLIENT_BODY,
    status: int = 200,
    headers: dict[str, str] | None = None,
    raw: bytes = STREAM,
    upstream: tuple[UpstreamCall, ...] | None = None,
    marker: str | None = MARKER,
) -> Outcome:
    body = client if isinstance(client, bytes) else json.dumps(client).encode()
    call = UpstreamCall(
        "POST",
        "/v1/messages",
        {"content-type": "application/json", "x-api-key": "k"},
        json.dumps(UPSTREAM_BODY).encode(),
        UPSTREAM_BODY,
        ServedAnswer(200, {"content-type": "text/event-stream"}, UPSTREAM_SSE),
    )
    ex = Exchange(
        "ezat/x/y",
        {"stream": True},
        SentRequest("POST", "http://gw/v1/chat/completions", {"content-type": "application/json"}, body),
        ReceivedResponse(status, headers or {"content-type": "text/event-stream"}, raw),
        upstream=(call,) if upstream is None and marker else upstream,
        marker=marker,
    )
    return Outcome("ezat/x/y", {"stream": True}, "PASS", exchange=ex, duration=0.1)


def mutant(**raw: Any) -> Mutant:
    return mutant_from({"id": "t/m", "side": "client", "area": "a", "title": "t", "models": "o/r#1", **raw})


REACH: list[tuple[str, dict[str, Any], Outcome, bool]] = [
    ("chunk-edit-that-matches", {"chunks": [{"op": "set", "path": "object", "value": "x"}]}, outcome(), True),
    (
        "chunk-edit-of-an-absent-key",
        {"chunks": [{"op": "delete", "path": "choices.*.logprobs"}]},
        outcome(),
        False,
    ),
    ("json-edit-on-a-stream", {"json": [{"op": "set", "path": "object", "value": "x"}]}, outcome(), False),
    ("stream-op-on-comments", {"stream": [{"op": "comment_to_data"}]}, outcome(), True),
    (
        "stream-op-without-comments",
        {"stream": [{"op": "comment_to_data"}]},
        outcome(raw=STREAM.replace(b": ping\n\n", b"")),
        False,
    ),
    ("drop-done", {"stream": [{"op": "drop_done"}]}, outcome(), True),
    ("when-stream-false", {"when": {"stream": False}, "status": {200: 500}}, outcome(), False),
    ("status-map-other-status", {"status": {429: 500}}, outcome(), False),
    ("status-map-this-status", {"status": {200: 500}}, outcome(), True),
    ("header-drop-absent", {"headers": {"drop": ["retry-after"]}}, outcome(), False),
    (
        "header-drop-present",
        {"headers": {"drop": ["retry-after"]}},
        outcome(headers={"content-type": "text/event-stream", "retry-after": "5"}),
        True,
    ),
    ("header-drop-transport", {"request_headers": {"drop": ["user-agent"]}}, outcome(), True),
    ("request-edit-noop", {"request": [{"op": "delete", "path": "temperature"}]}, outcome(), False),
    ("request-edit-hit", {"request": [{"op": "delete", "path": "stream"}]}, outcome(), True),
    ("replace-always", {"replace": {"status": 500, "body": {}}}, outcome(), True),
    (
        "invalid-json-gate",
        {"when": {"request_json": "invalid"}, "status": {400: 500}},
        outcome(client=b"{not json", status=400, headers={"content-type": "application/json"}, raw=b"{}"),
        True,
    ),
    ("cut-stream-is-unknown", {"chunks": [{"op": "delete", "path": "nope"}]}, outcome(raw=STREAM[:-3]), True),
    # Effects the recorded bytes do not show: timing, and the proxy's own connections to image URLs.
    ("delay-where-it-applies", {"delay": 16.0}, outcome(), True),
    (
        "clock-reading-stream-op",
        {"stream": [{"op": "cut_after_seconds", "seconds": 3}]},
        outcome(raw=STREAM),
        True,
    ),
    ("delay-not-where-it-does-not", {"delay": 16.0, "when": {"status": [400]}}, outcome(), False),
    ("connects-image-urls-without-images", {"connect_image_urls": True}, outcome(), False),
    (
        "connects-image-urls-with-an-image",
        {"connect_image_urls": True},
        outcome(
            client=b'{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://x/a.png"}}]}]}'
        ),
        True,
    ),
]


@pytest.mark.parametrize(("raw", "base", "expected"), [r[1:] for r in REACH], ids=[r[0] for r in REACH])
def test_client_side_reach(raw: dict[str, Any], base: Outcome, expected: bool) -> None:
    assert reaches(mutant(**raw), base) is expected


UPSTREAM_REACH: list[tuple[str, dict[str, Any], Outcome, bool]] = [
    ("request-edit-hit", {"request": [{"op": "delete", "path": "stream"}]}, outcome(), True),
    ("request-edit-noop", {"request": [{"op": "delete", "path": "system"}]}, outcome(), False),
    (
        "answer-event-edit",
        {"chunks": [{"op": "set", "path": "message.id", "value": "x", "select": "type:message_start"}]},
        outcome(),
        True,
    ),
    ("answer-edit-noop", {"chunks": [{"op": "delete", "path": "delta.stop_reason"}]}, outcome(), False),
    ("no-upstream-calls", {"request": [{"op": "delete", "path": "stream"}]}, outcome(upstream=()), False),
    ("unobserved-upstream", {"request": [{"op": "delete", "path": "stream"}]}, outcome(marker=None), True),
    (
        "if-client-sees-the-client-request",
        {"request": [{"op": "delete", "path": "stream", "if_client": {"path": "stream", "equals": False}}]},
        outcome(),
        False,
    ),
]


@pytest.mark.parametrize(
    ("raw", "base", "expected"), [r[1:] for r in UPSTREAM_REACH], ids=[r[0] for r in UPSTREAM_REACH]
)
def test_upstream_side_reach(raw: dict[str, Any], base: Outcome, expected: bool) -> None:
    assert reaches(mutant(side="upstream", **raw), base) is expected


def test_a_cut_upstream_answer_counts_as_reached_by_any_active_answer_mutant() -> None:
    cut = outcome()
    assert cut.exchange is not None and cut.exchange.upstream
    call = cut.exchange.upstream[0]
    served = ServedAnswer(
        200, {"content-type": "text/event-stream"}, UPSTREAM_SSE[:40], fault={"drop_after_bytes": 40}
    )
    ex = replace(cut.exchange, upstream=(replace(call, served=served),))
    noop = mutant(side="upstream", json=[{"op": "delete", "path": "nothing.here"}])
    assert reaches(noop, replace(cut, exchange=ex)) is True
    assert reaches(noop, cut) is False


def test_a_key_order_edit_reaches_the_call_it_reorders() -> None:
    """`reverse` of an object changes no value (the dicts compare equal) but the bytes the proxy sends."""
    base = outcome()
    reorder = mutant(side="upstream", request=[{"op": "reverse", "path": "messages.0"}])
    assert reaches(reorder, base) is True
    absent = mutant(side="upstream", request=[{"op": "reverse", "path": "tools.0"}])
    assert reaches(absent, base) is False


def test_a_then_step_is_reached_when_only_the_repeat_changes() -> None:
    """A `then` step (the repeat of a cache or idempotency rule) is an exchange of the variant: a header that
    only the replayed answer carries is reached, although the first answer does not have it."""
    first = outcome(headers={"content-type": "application/json", "x-relay-cache": "MISS"}, raw=b"{}")
    assert first.exchange is not None
    repeat = replace(
        first.exchange,
        response=ReceivedResponse(200, {"content-type": "application/json", "x-relay-cache": "HIT"}, b"{}"),
    )
    always_miss = mutant(headers={"set": {"x-relay-cache": "MISS"}})
    assert reaches(always_miss, first) is False  # the first answer already says MISS
    stepped = replace(first, exchange=replace(first.exchange, steps=(repeat,)))
    assert reaches(always_miss, stepped) is True
    upstream_noop = mutant(side="upstream", request=[{"op": "delete", "path": "nothing"}])
    assert reaches(upstream_noop, stepped) is False


def test_not_applicable_and_unrecorded_variants() -> None:
    m = mutant(status={200: 500})
    assert reaches(m, Outcome("r", {}, "NOT_APPLICABLE")) is False
    assert reaches(m, Outcome("r", {}, "HARNESS_ERROR")) is True  # no exchange recorded: cannot tell


# --- shards -------------------------------------------------------------------------------------------


@pytest.mark.e2e
def test_shards_partition_the_mutants() -> None:
    mutants = list(load_catalog().mutants)
    slices = [shard_of(mutants, i, 4) for i in range(1, 5)]
    ids = [m.id for s in slices for m in s]
    assert sorted(ids) == sorted(m.id for m in mutants) and len(ids) == len(set(ids))
    assert max(len(s) for s in slices) - min(len(s) for s in slices) <= 1
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "x", "1/0"):
        with pytest.raises(ValueError):
            parse_shard(bad)


def _matrix(results: tuple[MutantResult, ...], complete: bool, shard: str | None) -> dict[str, Any]:
    m = Matrix(
        "ezat", results, ("r/a", "r/b", "r/c"), ("r/na",), {}, (), 12.0, complete, extra={"shard": shard}
    )
    return matrix_json(m)


@pytest.mark.e2e
def test_merge_of_shard_documents_equals_the_whole() -> None:
    catalog = load_catalog()
    mutants = [m for m in catalog.mutants if "ezat" in m.profiles]
    results = tuple(
        MutantResult(m, (Kill(f"r/{'ab'[n % 2]}", "stream=true", "FAIL", "x"),) if n % 5 else (), 3, 0.5)
        for n, m in enumerate(mutants)
    )
    whole = _matrix(results, True, None)
    shards = [
        _matrix(tuple(r for r in results if r.mutant in shard_of(mutants, i, 3)), False, f"{i}/3")
        for i in (1, 2, 3)
    ]
    merged = matrix_json(merge_matrices(shards, catalog))
    for key in ("totals", "rules", "rules_killing_none", "not_applicable", "complete", "baseline_broken"):
        assert merged[key] == whole[key], key
    assert [m["id"] for m in merged["mutants"]] == [m["id"] for m in whole["mutants"]]
    assert diff(whole, merged) == []
    assert merged["rules_killing_none"] == ["r/c"]
    partial = matrix_json(merge_matrices(shards[:2], catalog))
    assert partial["complete"] is False and partial["rules_killing_none"] is None
    with pytest.raises(ValueError, match="more than one shard"):
        merge_matrices([shards[0], shards[0]], catalog)


# --- the real thing, on a small slice (a real gateway, real proxies) ------------------------------------

# ten of errors/* (client side) and the upstream-side mutants against the error rules but those that wait on a clock
# or move 32 MB (body-*, nonstream-timeout-504, stream-outlasts-*: seconds a run, and the one-at-a-time run
# repeats them per mutant) and the two rules that kill the upstream ones: variants with and without a case
# marker (an upstream-side mutant on one without runs alone, afterwards). The two timeout mutants survive here.
SLICE = [
    *("--profile", "ezat", "--jobs", "4"),
    *(
        "--mutant",
        "errors/[0-9a-m]*",
        "--mutant",
        "usage/cache-read-dropped-upstream",
        "--mutant",
        "tools/parallel-false-*",
    ),
    *(
        "--rule",
        "ezat/errors/[!bns]*",
        "--rule",
        "ezat/response/usage-cache-read",
        "--rule",
        "ezat/tools/parallel-false",
    ),
]


def _run(tmp_path: Path, name: str, *extra: str) -> dict[str, Any]:
    from harness.cli import main

    out = tmp_path / name
    code = main(["mutants", *SLICE, *extra, "--out", str(out)])
    assert code in (0, 1), code  # 1: a survivor in this rule slice (a killer may be in another area)
    document: dict[str, Any] = json.loads((out / "kill-matrix.json").read_text())
    return document


@pytest.mark.e2e
def test_pooled_run_equals_one_mutant_at_a_time_and_shards_merge_to_it(tmp_path: Path) -> None:
    from harness.cli import main

    pooled = _run(tmp_path, "pooled")
    assert pooled["totals"]["killed"] >= 10
    upstream = {m["id"]: m for m in pooled["mutants"] if m["side"] == "upstream"}
    assert len(upstream) >= 3 and all(m["verdict"] == "KILLED" for m in upstream.values())
    assert sum(m["cases_reused"] for m in pooled["mutants"]) > 0  # the reuse is not vacuous
    slow = _run(tmp_path, "one-at-a-time", "--one-at-a-time")
    assert diff(slow, pooled) == []
    for i in (1, 2):
        _run(tmp_path, f"shard{i}", "--shard", f"{i}/2")
    assert main(
        [
            "mutants",
            "--merge",
            str(tmp_path / "shard1"),
            str(tmp_path / "shard2"),
            "--out",
            str(tmp_path / "m"),
        ]
    ) in (
        0,
        1,
    )
    merged = json.loads((tmp_path / "m" / "kill-matrix.json").read_text())
    assert diff(pooled, merged) == []
    assert [m["id"] for m in merged["mutants"]] == [m["id"] for m in pooled["mutants"]]
    assert merged["totals"] == pooled["totals"]


# --- the keep-alive silence, a declared parameter ---------------------------------------------------------


def test_the_keepalive_silence_is_the_targets_declared_one() -> None:
    from harness.engine.render import upstream_plan
    from harness.engine.target import Target, not_applicable_reason
    from harness.paths import specs_dir
    from harness.spec import load_rule_file

    rule = next(
        r
        for r in load_rule_file(specs_dir() / "ezat" / "streaming.yaml").rules
        if r.id == "ezat/streaming/ping-during-long-pause"
    )
    default = Target(gateway_url="http://gw/v1", models={"MODEL": "m"})
    assert not_applicable_reason(rule, default) is None  # runs in every default certify: no --feature slow
    plan = upstream_plan(rule.upstream, default)
    assert plan is not None and plan["fault"]["pause_after_events"]["seconds"] == 25.0
    declared = Target(gateway_url="http://gw/v1", keepalive_silence=2.0)
    plan = upstream_plan(rule.upstream, declared)
    assert plan is not None and plan["fault"]["pause_after_events"] == {"events": 6, "seconds": 2.0}
    assert rule.upstream["fault"]["pause_after_events"]["seconds"] == "$KEEPALIVE_SILENCE"  # input unchanged


# --- the embedded gateway, declared as certify declares it -------------------------------------------------


@pytest.mark.parametrize("profile", ["ezat", "lyrouter", "relay"])
def test_a_mutants_run_declares_the_embedded_gateway_as_certify_does(profile: str) -> None:
    """One declaration (orchestrate.embedded) for certify and mutants: features, keep-alive silence, limit."""
    import argparse

    from harness.mutants.command import BASE_FEATURES, base_features
    from harness.orchestrate.embedded import embedded, embedded_args, embedded_features

    declared = embedded(profile)
    args = argparse.Namespace(gateway_url=None, profile=profile, feature=["slow"])
    assert base_features(args) == frozenset(embedded_features(profile)) | {"slow"}
    assert embedded_args(profile) == declared.plugin_args()
    assert "--keepalive-silence" in declared.plugin_args()
    other = argparse.Namespace(gateway_url="http://127.0.0.1:1/v1", profile=profile, feature=[])
    assert base_features(other) == frozenset(BASE_FEATURES)  # another gateway declares only what it is told


@pytest.mark.e2e
def test_the_lyrouter_baseline_has_no_failing_rule_variant(tmp_path: Path) -> None:
    """Before the shared declaration, `mutants --profile lyrouter` started the gateway without its workspace
    Default Model features, and 11 rule variants failed with no mutant at all."""
    from harness.cli import main

    code = main(
        [
            "mutants",
            "--profile",
            "lyrouter",
            "--mutant",
            "lyrouter/numbers/*",
            "--jobs",
            "4",
            "--out",
            str(tmp_path),
        ]
    )
    report = json.loads((tmp_path / "kill-matrix.json").read_text())
    assert report["baseline_broken"] == [] and code == 0


def test_a_per_read_decoder_reaches_only_streams_with_multibyte_text() -> None:
    """`decode_reads`: where the reads fall is not recorded, so any non-ASCII stream counts as reached."""
    decoder = mutant(side="upstream", decode_reads=True)
    ascii_only = outcome()
    assert reaches(decoder, ascii_only) is False
    assert ascii_only.exchange is not None and ascii_only.exchange.upstream
    call = ascii_only.exchange.upstream[0]
    text = UPSTREAM_SSE.replace(b'"msg_1"', '"msg_こんにちは"'.encode())
    served = ServedAnswer(200, {"content-type": "text/event-stream"}, text)
    ex = replace(ascii_only.exchange, upstream=(replace(call, served=served),))
    assert reaches(decoder, replace(ascii_only, exchange=ex)) is True

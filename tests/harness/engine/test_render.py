"""The runner's pure parts: rendering a rule's request, the marker, padding, applicability."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.engine.render import gateway_url_for, new_marker, pad_body, render_request, upstream_plan
from harness.engine.send import rule_wait
from harness.engine.target import Target, not_applicable_reason
from harness.outcomes import MARKER_RE
from harness.spec.model import Needs, Rule, Source
from harness.spec.selection import rule_selected
from harness.surfaces.chat_completions import SURFACE as CHAT
from harness.surfaces.chat_completions.request import insert_marker

MARK = "[gc:ezat/x/y#0123abcd]"


def _rule(request: dict[str, Any], needs: Needs | None = None, rule_id: str = "ezat/x/y") -> Rule:
    return Rule(
        id=rule_id,
        level="MUST",
        title="t",
        source=Source("d", "s", "q"),
        request=request,
        expect={},
        needs=needs or Needs(False, frozenset(), frozenset(), frozenset()),
        aliases=("ezat/old/y",),
    )


TARGET = Target(
    gateway_url="http://127.0.0.1:8080/openai/v1",
    gateway_key="k-123",
    models={"MODEL": "anthropic/claude-sonnet-5-5", "MODEL_SAMPLING": None},
    replay_url="http://127.0.0.1:9999",
)


def test_marker_matches_the_replay_pattern() -> None:
    marker = new_marker("ezat/streaming/ping-during-pause")
    assert MARKER_RE.fullmatch(marker)
    assert new_marker("a/b/c") != new_marker("a/b/c")


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([{"role": "user", "content": "hi"}], [{"role": "user", "content": f"{MARK} hi"}]),
        (
            [
                {"role": "system", "content": "s"},
                {"role": "user", "content": [{"type": "image_url"}, {"type": "text", "text": "t"}]},
            ],
            [
                {"role": "system", "content": "s"},
                {"role": "user", "content": [{"type": "image_url"}, {"type": "text", "text": f"{MARK} t"}]},
            ],
        ),
        (
            [{"role": "user", "content": [{"type": "input_audio"}]}],
            [{"role": "user", "content": [{"type": "input_audio"}, {"type": "text", "text": MARK}]}],
        ),
        (
            [{"role": "system", "content": "only system"}],
            [{"role": "system", "content": f"{MARK} only system"}],
        ),
        (
            [{"role": "assistant", "content": None}, {"role": "user", "content": ""}],
            [{"role": "assistant", "content": None}, {"role": "user", "content": MARK}],
        ),
    ],
    ids=["string", "first-text-part-kept-indexes", "no-text-part-appended", "no-user-message", "empty-user"],
)
def test_insert_marker(messages: list[Any], expected: list[Any]) -> None:
    body = {"model": "m", "messages": messages}
    before = json.dumps(body)
    assert insert_marker(body, MARK)["messages"] == expected
    assert json.dumps(body) == before  # the rule's data is never mutated


def test_render_request_substitutes_roles_variants_and_headers() -> None:
    rule = _rule(
        {
            "headers": {"x-ezat-cache": "off", "authorization": None},
            "body": {
                "model": "$MODEL",
                "stream_options": {"include_usage": True},
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "image_url", "image_url": {"url": "${images_url}/tiny.png"}}],
                    }
                ],
            },
        }
    )
    rendered = render_request(rule, {"stream": False}, TARGET, MARK)
    assert rendered.url == "http://127.0.0.1:8080/openai/v1/chat/completions"
    assert "authorization" not in rendered.headers
    assert rendered.headers["x-ezat-cache"] == "off"
    assert rendered.json["model"] == "anthropic/claude-sonnet-5-5"
    assert rendered.json["stream"] is False
    assert "stream_options" not in rendered.json  # OpenAI allows it only with streaming
    part = rendered.json["messages"][0]["content"][0]
    assert part["image_url"]["url"] == "http://127.0.0.1:9999/__gc/files/tiny.png"
    assert json.loads(rendered.body) == rendered.json

    streamed = render_request(rule, {"stream": True}, TARGET, MARK)
    assert streamed.json["stream_options"] == {"include_usage": True}


def test_explicit_marker_placeholder_and_gateway_key() -> None:
    rule = _rule(
        {
            "headers": {"x-api-key": "$GATEWAY_KEY"},
            "body": {
                "model": "$MODEL",
                "messages": [
                    {"role": "system", "content": "$MARKER"},
                    {"role": "user", "content": "untouched"},
                ],
            },
        }
    )
    rendered = render_request(rule, {}, TARGET, MARK)
    assert rendered.json["messages"] == [
        {"role": "system", "content": MARK},
        {"role": "user", "content": "untouched"},
    ]
    assert rendered.headers["x-api-key"] == "k-123"
    assert rendered.headers["authorization"] == "Bearer k-123"


def test_raw_body_is_sent_as_is() -> None:
    rendered = render_request(_rule({"raw_body": '{"model": "x",'}), {}, TARGET, MARK)
    assert rendered.body == b'{"model": "x",'
    assert rendered.json is None


def test_pad_to_bytes_is_exact() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert len(pad_body(body, 5000, CHAT)) == 5000
    rule = _rule({"body": body, "pad_to_bytes": 33 * 1024 * 1024 + 1})
    assert len(render_request(rule, {}, TARGET, MARK).body) == 33 * 1024 * 1024 + 1


@pytest.mark.parametrize(
    ("path", "url"),
    [
        ("chat/completions", "http://h:1/openai/v1/chat/completions"),
        ("models", "http://h:1/openai/v1/models"),
        ("/api/models", "http://h:1/api/models"),
        ("/healthz", "http://h:1/healthz"),
    ],
)
def test_gateway_url_for(path: str, url: str) -> None:
    assert gateway_url_for("http://h:1/openai/v1/", path) == url
    assert gateway_url_for("http://h:1/openai/v1", path) == url


@pytest.mark.parametrize(
    ("needs", "target_changes", "reason"),
    [
        # live mode decides per expectation (harness/engine/live.py): needing the replay upstream skips nothing
        (Needs(True, frozenset(), frozenset(), frozenset()), {"upstream_mode": "live"}, None),
        (Needs(False, frozenset({"MODEL_SAMPLING"}), frozenset(), frozenset()), {}, "MODEL_SAMPLING"),
        (Needs(False, frozenset(), frozenset({"slow"}), frozenset()), {}, "--feature"),
        (
            Needs(False, frozenset(), frozenset(), frozenset({"slow"})),
            {"features": frozenset({"slow"})},
            "only without",
        ),
        (
            Needs(False, frozenset({"MODEL"}), frozenset({"slow"}), frozenset()),
            {"features": frozenset({"slow"})},
            None,
        ),
    ],
    ids=["live", "unmapped-role", "missing-feature", "without-feature", "applicable"],
)
def test_not_applicable_reason(needs: Needs, target_changes: dict[str, Any], reason: str | None) -> None:
    import dataclasses

    target = dataclasses.replace(TARGET, **target_changes)
    got = not_applicable_reason(_rule({"body": {}}, needs), target)
    assert (got is None) if reason is None else (reason in (got or ""))


def test_rule_selected_by_id_or_alias() -> None:
    rule = _rule({"body": {}})
    assert rule_selected(rule, [])
    assert rule_selected(rule, ["ezat/x/*"])
    assert rule_selected(rule, ["ezat/old/y"])
    assert not rule_selected(rule, ["ezat/streaming/*"])


def test_gateway_key_is_redacted_everywhere_in_evidence() -> None:
    from harness.exchange import ReceivedResponse, UpstreamCall
    from harness.redact import redact_bytes as _redact_bytes
    from harness.redact import redact_call as _redact_call
    from harness.redact import redact_headers as _redact

    call = UpstreamCall(
        "POST", "/v1/messages", {"x-api-key": "k-123"}, b'{"note": "k-123"}', {"note": "k-123"}
    )
    redacted = _redact_call(call, "k-123")
    assert redacted.headers == {"x-api-key": "<GATEWAY_KEY>"}
    assert redacted.json == {"note": "<GATEWAY_KEY>"}
    assert b"k-123" not in redacted.body
    assert _redact({"authorization": "Bearer k-123"}, "k-123") == {"authorization": "Bearer <GATEWAY_KEY>"}
    assert _redact_bytes(b"echo k-123", "k-123") == b"echo <GATEWAY_KEY>"
    # Without a gateway key (live, or none configured), the credential the gateway sent is still its own secret.
    assert _redact_call(call, None).headers == {"x-api-key": "<UPSTREAM_KEY>"}
    assert ReceivedResponse(200, {}, b"").raw == b""


def test_failing_rule_gets_the_replay_diagnostics_made_while_it_ran() -> None:
    from harness.engine.judge import new_diagnostics as _new_diagnostics

    class Replay:
        def diagnostics(self) -> list[dict[str, Any]]:
            return [
                {"seq": 1, "kind": "unmarked", "at": 99.0},
                {"seq": 2, "kind": "unknown-marker", "at": 101.5},
            ]

    assert [d["seq"] for d in _new_diagnostics(Replay(), 100.0)] == [2]  # type: ignore[arg-type]
    assert _new_diagnostics(None, 100.0) == ()


def test_the_nonstream_timeout_is_the_targets_declared_one() -> None:
    """`$NONSTREAM_TIMEOUT+N` is the declared limit plus N; undeclared, the rule is not applicable."""
    import dataclasses

    plan = {"cassette": "anthropic/text-basic", "fault": {"first_byte_delay": "$NONSTREAM_TIMEOUT+3"}}
    rule = dataclasses.replace(_rule({"body": {"model": "$MODEL", "messages": []}}), upstream=plan)
    reason = not_applicable_reason(rule, TARGET)
    assert reason is not None and "--nonstream-timeout" in reason
    assert rule_wait(rule, TARGET) == TARGET.rule_timeout
    declared = dataclasses.replace(TARGET, nonstream_timeout=2.5)
    assert not_applicable_reason(rule, declared) is None
    assert upstream_plan(plan, declared) == {
        "cassette": "anthropic/text-basic",
        "fault": {"first_byte_delay": 5.5},
    }
    assert plan["fault"] == {"first_byte_delay": "$NONSTREAM_TIMEOUT+3"}  # the rule's own plan is not changed
    assert rule_wait(rule, declared) == TARGET.rule_timeout + 2.5
    plain = _rule({"body": {"model": "$MODEL", "messages": []}})
    assert not_applicable_reason(plain, TARGET) is None and rule_wait(plain, declared) == TARGET.rule_timeout
    assert upstream_plan(None, declared) is None

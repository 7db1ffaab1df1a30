"""The cause is the headline and the account is bounded (issue 48): a cut connection or a truncated answer comes before
the parse errors it causes, the replay upstream's own diagnostic is said as what it is (never "a fault"), repeats
are folded and a person is shown ten, the results file keeping them all."""

from __future__ import annotations

import json
from typing import Any

from harness.exchange import Exchange, ReceivedResponse, SentRequest, ServedAnswer, UpstreamCall
from harness.violation import SHOWN, Violation, cause_first, collapsed, replay_diagnostic

REQUEST = SentRequest("POST", "http://gw/v1/chat/completions", {}, b"{}")
SCRIPTLESS = json.dumps(
    {"error": {"message": "gateway-conformance replay: no upstream answer is scripted for the gemini family for "
               "rule openai/output/n-choices", "type": "invalid_request_error"}}
).encode()  # fmt: skip


def _exchange(response: ReceivedResponse, served: ServedAnswer | None = None) -> Exchange:
    calls = (
        (UpstreamCall("POST", "/v1beta/models/g:generateContent", {}, b"{}", served=served),)
        if served
        else ()
    )
    return Exchange("r", {}, REQUEST, response, upstream=calls)


def _v(check: str, message: str, path: str = "stream", actual: Any = None) -> Violation:
    return Violation(check, path, None, actual, message)


def test_a_cut_stream_is_headlined_as_cut_not_as_data_that_is_not_json() -> None:
    cut = "RemoteProtocolError: peer closed connection without sending complete message body"
    response = ReceivedResponse(200, {}, b'data: {"id": "x"', transport_error=cut)
    found = [
        _v("json", "data is not JSON", "stream[3]"),
        _v("stream_order", f"the stream was cut: {cut}", actual=cut),
    ]
    said, checked, parsed = cause_first(found, _exchange(response))
    assert said.check == "transport" and said.message.startswith(f"the answer was cut: {cut}")
    assert checked.message.startswith("the stream was cut") and parsed.message == "data is not JSON"
    # no check said so: the cut is said first all the same
    (said, _rest) = cause_first([_v("json", "body is not JSON", "$")], _exchange(response))
    assert said.check == "transport" and said.message.startswith(f"the answer was cut: {cut}")


def test_an_answer_over_the_byte_cap_is_headlined_as_truncated() -> None:
    response = ReceivedResponse(200, {}, b"data: x\n\n" * 10, truncated=True)
    said, _rest = cause_first(
        [_v("stream_order", "the stream does not end with data: [DONE]")], _exchange(response)
    )
    assert said.check == "transport" and "longer than the harness reads" in said.message


def test_the_replays_own_diagnostic_is_the_headline_and_never_a_fault() -> None:
    from harness.evidence import served_source

    served = ServedAnswer(400, {}, SCRIPTLESS)
    exchange = _exchange(ReceivedResponse(400, {}, SCRIPTLESS), served)
    said = replay_diagnostic(exchange)
    assert said == "no upstream answer is scripted for the gemini family for rule openai/output/n-choices"
    first, _ = cause_first([_v("status", "status 400", "status")], exchange)
    assert first.check == "replay" and "the replay upstream had no provider answer to give" in first.message
    assert "diagnostic" in served_source(served) and "fault" not in served_source(served)
    assert served_source(ServedAnswer(529, {}, b"", fault={"status": 529})) == "a fault the rule scripts"
    # a refusal as the provider would refuse is the gateway's fault: not the replay's diagnostic
    refused = ServedAnswer(400, {}, SCRIPTLESS, provider_refusal="max_tokens: Field required")
    assert replay_diagnostic(_exchange(ReceivedResponse(400, {}, b""), refused)) is None


def test_requests_without_the_case_marker_are_said_when_none_of_the_rules_arrived() -> None:
    unmarked = {"kind": "unmarked", "message": "the request carries no case marker [gc:<rule>#<nonce>]"}
    exchange = Exchange("r", {}, REQUEST, ReceivedResponse(400, {}, b""), upstream=())
    assert "without its case marker" in (replay_diagnostic(exchange, [unmarked]) or "")


def test_repeats_are_folded_and_a_cap_counts_the_rest() -> None:
    many = [_v("shape", "openai.chat.completion.chunk: 'chat.completion.chunk' was expected", f"stream[{i}].object")
            for i in range(100_000)]  # fmt: skip
    (one,) = collapsed(many)
    assert (
        one.path == "stream[0].object"
        and "(and 99,999 more like it, the last at stream[99999].object)" in one.message
    )
    distinct = [_v("json", f"field {i} missing", f"$.f{i}") for i in range(1500)]
    kept = collapsed(distinct)
    assert len(kept) == 1001 and kept[-1].message == "… and 500 more distinct violations, not kept"


def test_a_person_is_shown_ten_violations_and_the_rest_counted() -> None:
    from harness.report.html import failure_html

    result = {
        "rule_id": "x/y", "variant": {}, "outcome": "FAIL", "level": "MUST", "title": "t",
        "source": {"doc": "d", "section": "s", "quote": "q"}, "rerun": "r", "exchange": None,
        "violations": [{"check": "json", "path": f"$.f{i}", "message": f"field {i}"} for i in range(25)],
    }  # fmt: skip
    page = failure_html(result, "f1")
    assert page.count("<tr><td><code>json") == SHOWN and "… and 15 more" in page
    assert "Its exchange is in the results file" in failure_html(result, "f2", panes=False)

"""A recorded stream that cannot be assembled into an answer is a DeriveError naming what is missing, not a crash."""

import pytest

from harness.errors import CassetteError, DeriveError
from harness.record.derive import anthropic_message, openai_completion


def test_a_messages_stream_without_its_stop_reason_is_refused_with_the_reason() -> None:
    body = b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{}}}\n\n'
    with pytest.raises(DeriveError) as caught:
        anthropic_message(body)
    assert isinstance(caught.value, CassetteError)
    assert caught.value.problem == "the stream has no message_start or no stop_reason"


def test_a_chat_stream_that_is_not_json_is_refused_with_the_event() -> None:
    with pytest.raises(DeriveError, match="a stream event is not JSON: 'nope'"):
        openai_completion(b"data: nope\n\n")

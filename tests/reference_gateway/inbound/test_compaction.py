"""reference_gateway/inbound/compaction.py: a compaction item of this gateway's opens to the summary it sealed, one of
another maker's does not; the window keeps the user messages as they were, then the item."""

from __future__ import annotations

from reference_gateway.inbound import compaction


def test_a_sealed_summary_opens_again_and_a_foreign_item_does_not() -> None:
    item = compaction.seal("The user asked to remember TULIP.")
    assert item["type"] == "compaction" and item["id"].startswith("cmp_")
    assert item["encrypted_content"].startswith(compaction.PREFIX)
    assert compaction.opened(item) == "The user asked to remember TULIP."
    assert compaction.opened({"type": "compaction", "encrypted_content": "gAAAA-openai"}) is None
    assert compaction.opened({"type": "compaction", "encrypted_content": compaction.PREFIX + "%%"}) is None
    assert compaction.opened({"type": "message", "encrypted_content": item["encrypted_content"]}) is None


def test_the_window_keeps_the_user_messages_and_expanding_opens_the_item() -> None:
    items = [
        {"role": "user", "content": "Remember TULIP."},
        {"role": "assistant", "content": "I will."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Compress it."}]},
        {"type": "function_call_output", "call_id": "c", "output": "x"},
    ]
    window = compaction.window(items, "TULIP was asked and promised.")
    assert [(i["type"], i.get("role")) for i in window] == [
        ("message", "user"),
        ("message", "user"),
        ("compaction", None),
    ]
    assert window[0]["content"] == [{"type": "input_text", "text": "Remember TULIP."}]
    assert window[1]["content"] == [{"type": "input_text", "text": "Compress it."}]
    expanded = compaction.expanded([*window, {"role": "user", "content": "Which word?"}])
    assert expanded[2] == compaction.as_message("TULIP was asked and promised.")
    assert expanded[2]["role"] == "assistant" and expanded[:2] == window[:2]

"""Custom (freeform) tools through a chat flow, pure: a Responses `{"type": "custom"}` tool (Codex's apply_patch)
offered to the chat model as a function taking its text, `{"input": <string>}`, and the model's call of it turned
back into a `custom_tool_call` whose `input` is that text, never JSON around it (OpenAI API reference: Responses >
Custom tools, Custom tool call; openai-python 3.57 `ResponseCustomToolCall`,
`ResponseCustomToolCallInputDeltaEvent`). A gateway that hands the client the function call as the chat model made
it breaks Codex: caozhiyuan/copilot-api#242 ("apply_patch invoked with incompatible payload"), decolua/9router#1371.

Streamed, the call's argument fragments are JSON text; `InputDecoder` turns them into the input's own text as they
come (an escape sequence cut between two fragments waits for its end), so the input's deltas are sent as the
model writes them, never held until the call is done.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

# The one parameter of the function a custom tool is offered as.
PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "The tool's input: free text, not JSON."}},
    "required": ["input"],
    "additionalProperties": False,
}


def as_function(tool: Mapping[str, Any]) -> dict[str, Any]:
    """The chat function a custom tool is offered as: its name, its description with its input's grammar when it
    declares one (the model writes what the grammar accepts), one string parameter `input`."""
    description = str(tool.get("description") or "")
    fmt = tool.get("format")
    if isinstance(fmt, Mapping) and fmt.get("type") == "grammar" and isinstance(fmt.get("definition"), str):
        syntax = fmt.get("syntax") or "lark"
        description += f"\n\nThe input is free text in this {syntax} grammar:\n{fmt['definition']}"
    function = {"name": tool.get("name"), "description": description.strip(), "parameters": dict(PARAMETERS)}
    return {"type": "function", "function": function}


def names(tools: Any) -> frozenset[str]:
    """The names of the request's custom tools."""
    given = tools if isinstance(tools, list) else []
    return frozenset(
        str(t["name"])
        for t in given
        if isinstance(t, Mapping) and t.get("type") == "custom" and isinstance(t.get("name"), str)
    )


def arguments(text: str) -> str:
    """A custom tool call's input as the function call's arguments."""
    return json.dumps({"input": text}, ensure_ascii=False)


def input_of(arguments: Any) -> str:
    """The input a function call's arguments carry: their `input` string; arguments that are not `{"input": …}` are
    the model's text as it wrote it (it answered the function in its own way)."""
    if not isinstance(arguments, str):
        return "" if arguments is None else json.dumps(arguments, ensure_ascii=False)
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    if isinstance(value, dict) and isinstance(value.get("input"), str):
        return str(value["input"])
    return arguments


class InputDecoder:
    """A call's argument fragments in, the text of its `input` out as it arrives: `feed` returns the new text (empty
    while an escape sequence is cut, or before the value starts); `finish` what is left, so that everything
    returned joins to `input_of` of the whole arguments. Arguments that do not start as `{"input": "` stream
    nothing before `finish`."""

    _OPENING = ("{", '"input"', ":", '"')

    def __init__(self) -> None:
        self._raw = ""  # every fragment so far
        self._at = 0  # where in `_raw` the undecoded rest begins
        self._stage = 0  # how much of the opening `{ "input" : "` has been read; 4: inside the value
        self._closed = False  # the value's closing quote was read
        self._given: list[str] = []

    def feed(self, fragment: str) -> str:
        self._raw += fragment
        if self._stage < len(self._OPENING):
            self._open()
        if self._closed or self._stage != len(self._OPENING):
            return ""  # before the value, past it, or not the expected object
        piece = self._decode()
        if piece:
            self._given.append(piece)
        return piece

    def finish(self) -> str:
        """The input's text not given yet (all of it when the arguments were not the expected object)."""
        whole = input_of(self._raw)
        given = "".join(self._given)
        if whole.startswith(given):
            return whole[len(given) :]
        return "" if given else whole  # arguments cut short: the input is what was given

    def _open(self) -> None:
        """Read the opening `{ "input" : "` as far as it has come (past it when it is clear it is not there: the
        stage goes beyond the opening and nothing streams)."""
        while self._stage < len(self._OPENING):
            rest = self._raw[self._at :].lstrip()
            skipped = len(self._raw) - self._at - len(rest)
            token = self._OPENING[self._stage]
            if not (rest.startswith(token) or token.startswith(rest)):
                self._stage = len(self._OPENING) + 1  # not the expected object
                return
            if len(rest) < len(token):
                return  # wait for more
            self._at += skipped + len(token)
            self._stage += 1

    def _decode(self) -> str:
        """The value's characters from `_at` up to the last whole one, decoded; `_at` moves past them."""
        raw, i, end = self._raw, self._at, self._at
        while i < len(raw):
            char = raw[i]
            if char == '"':
                self._closed = True
                break
            if char != "\\":
                i += 1
                end = i
                continue
            if i + 1 >= len(raw):
                break  # an escape cut after its backslash
            if raw[i + 1] != "u":
                i += 2
                end = i
                continue
            if i + 6 > len(raw):
                break  # a \uXXXX cut
            code = int(raw[i + 2 : i + 6], 16) if _hex(raw[i + 2 : i + 6]) else 0
            if 0xD800 <= code <= 0xDBFF:  # a high surrogate: its low half must come too
                if i + 12 > len(raw):
                    break
                i += 12 if raw[i + 6 : i + 8] == "\\u" else 6
            else:
                i += 6
            end = i
        text = raw[self._at : end]
        self._at = end + (1 if self._closed else 0)
        try:
            decoded = json.loads(f'"{text}"')
        except ValueError:
            decoded = text
        return str(decoded)


def _hex(text: str) -> bool:
    return len(text) == 4 and all(c in "0123456789abcdefABCDEF" for c in text)

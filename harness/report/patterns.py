"""Many rules failing the same way usually share one cause (wrong model ids, an undeclared feature, the
base path, a request the provider refuses): find such groups in a results document and name the cause once,
largest first, so a run of 150 failures reads as the two or three fixes it needs. Pure.

The strongest evidence comes first: where the replay upstream refused what the gateway sent, as the provider
would (its `provider_refusal`, harness/replay/validate.py), the failures are grouped by that refusal, whatever
the gateway then answered its client (a 400 passed on, a 500, a 200 from a retry): the refusal is the cause.
Otherwise by the gateway's own answer (status, error code and type, and its normalised message), the note quoting
the first failure's message as the gateway wrote it. Before all of these, the failures the replay upstream could not
play as written (it had no provider answer to give: no answer scripted for the family the gateway called, no case
marker), grouped by what it said and named with the fix (issue 48)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# At least this many failed results with the same answer make a pattern worth a line.
MIN_GROUP = 5


@dataclass(frozen=True)
class Pattern:
    profile: str
    status: int | None
    code: str | None
    rules: tuple[str, ...]
    cause: str
    message: str = ""  # the shared error message, normalised (what tells two causes of one status apart)
    refusal: str = ""  # the provider's refusal of what the gateway sent, when that is the shared cause
    of: int = 0  # the failed results of the run, for "N of M failures"
    results: int = 0  # the failed results (variants) in this group
    quoted: str = ""  # the first failure's message as the gateway wrote it (the note quotes it unchanged)
    diagnostic: str = ""  # the replay upstream's own words, when it had no provider answer to give (issue 48)

    def line(self) -> str:
        if self.diagnostic:
            share = f"{self.results} of {self.of} failures" if self.of else f"{self.results} failures"
            return (
                f"{share} ({len(self.rules)} {self.profile} rules): the replay upstream had no provider answer to "
                f"give: “{self.diagnostic}” — {self.cause}"
            )
        if self.refusal:
            share = f"{self.results} of {self.of} failures" if self.of else f"{self.results} failures"
            return (
                f"{share} ({len(self.rules)} {self.profile} rules): the provider refused the request the gateway "
                f"sent: “{self.refusal}” — {self.cause}"
            )
        answer = f"HTTP {self.status}" if self.status is not None else "no answer"
        if self.code and self.code != str(self.status):
            answer += f" {self.code}"
        if self.message:
            answer += f": “{self.quoted or self.message}”"
        return f"{len(self.rules)} {self.profile} rules failed the same way ({answer}): {self.cause}"


_VOLATILE = re.compile(
    r"\[gc:[^\]]*\]|\b(?:req|msg|chatcmpl|toolu|call)_[A-Za-z0-9]+|\d+(?:\.\d+)?|\"[^\"]*\"|'[^']*'"
)


def normalised(message: str) -> str:
    """An error message with what varies from rule to rule (markers, ids, numbers, quoted values) taken out."""
    return " ".join(_VOLATILE.sub("…", message).split())[:90]


def _answer(result: Mapping[str, Any]) -> tuple[int | None, str | None, str | None, str]:
    """(status, error code, error type, message): the code and the type read apart — an unknown path's
    envelope has a type (`invalid_request_error`) and no code, and that absence is what the base-path hint reads."""
    response = (result.get("exchange") or {}).get("response") or {}
    body = response.get("body") or ""
    code = kind = None
    message = ""
    try:
        error = json.loads(body).get("error")
        if isinstance(error, dict):
            code, kind = error.get("code"), error.get("type")
            message = str(error.get("message") or "")
    except (ValueError, AttributeError):
        pass
    return (
        response.get("status"),
        str(code) if code is not None else None,
        str(kind) if kind is not None else None,
        message,
    )


def _cause(
    profile: str,
    status: int | None,
    code: str | None,
    message: str,
    expected_error: bool,
    provider_called: bool = False,
) -> str:
    text = f"{code or ''} {message}".lower()
    roles = f"gateway-conformance roles --profile {profile}"
    if "the answer was cut:" in text:  # harness/violation.py: the cause said first
        return (
            "the gateway closes the connection before its answers end: its log (or a proxy's in front of it) says "
            "why; what the other violations say of the part that arrived follows from it"
        )
    if "longer than the harness reads" in text:
        return "the gateway's answers do not end (an endless stream?): they were read up to the harness's cap"
    if status in (401, 403):
        return "the gateway refuses the key: check GC_GATEWAY_KEY / --gateway-key"
    if status is not None and 200 <= status < 300 and not expected_error and message:
        # the message is the shared violation: the same check fails the same way (what it quotes is not a cause)
        return "the same check fails the same way in each: the first failure's exchange shows what the gateway sent or answered"
    if "does not support parameters" in text or "unsupported param" in text:
        return "the gateway refuses a request parameter it does not translate for this provider (see the message)"
    if provider_called and status is not None and status >= 500:
        # the model id routed (the provider was asked): what failed is the gateway's answer to the provider's —
        # TensorZero's "All model providers failed" and LiteLLM's "model group … failed" name a model all the same
        return (
            "the gateway answers the provider's answer with its own server error: compare the provider's answer "
            "with the gateway's in the first exchange"
        )
    if ("model" in text or "route" in text or "deployment" in text) and not provider_called:
        return (
            f"likely the model ids: map the profile's model roles to your gateway's ids with --model-map "
            f"(list the roles and draft a map: {roles} --write-model-map FILE --gateway-url URL)"
        )
    if status in (404, 405) and code is None:
        return "likely the base path: --gateway-url is the OpenAI base URL as an SDK takes it (often ending in /v1)"
    if status is not None and 200 <= status < 300 and expected_error:
        return (
            "the gateway answers where the doc says it refuses: if it has an optional feature that explains "
            f"this (e.g. a default model), declare it with --feature NAME (features: {roles})"
        )
    return f"one cause is likely; compare the first failure's exchange in the certificate ({roles})"


def _refusal(result: Mapping[str, Any]) -> str | None:
    """The replay upstream's refusal of the first upstream call it refused, as the provider would have."""
    for call in (result.get("exchange") or {}).get("upstream") or []:
        refused = (call.get("served") or {}).get("provider_refusal")
        if refused:
            return str(refused)
    return None


def _refusal_cause(refusal: str) -> str:
    """What the gateway should change, read from the refusal's words (the replay's messages are Anthropic's,
    OpenAI's and Gemini's own: `max_tokens: Field required`, `Extra inputs are not permitted`, …)."""
    said = refusal.split("provider): ", 1)[
        -1
    ]  # the replay's own prefix, "… (validating like the provider): "
    text = said.lower()
    field = re.match(r"^\s*([A-Za-z_][\w.\[\]]*)\s*:", said)
    name = f"`{field.group(1)}`" if field else "the field it names"
    if "required" in text or "missing" in text:
        return f"the gateway sent no {name}: send it (the client's, or a default) on every request"
    if "extra inputs" in text or "not permitted" in text or "unknown" in text or "unrecognized" in text:
        return f"the gateway sent {name}, which the provider does not take: drop or translate it"
    if "unsupported" in text:
        return f"the gateway sent {name} in a form this model refuses: translate it as the provider documents"
    return (
        "the gateway's request is not one the provider accepts: compare the first failure's upstream request"
    )


def failure_patterns(document: Mapping[str, Any], min_group: int = MIN_GROUP) -> list[Pattern]:
    """Groups of at least `min_group` FAIL/WARN results that share one cause, largest first."""
    failed = [r for r in document["results"] if r["outcome"] in ("FAIL", "WARN") and r.get("exchange")]
    name = document["profile"]["name"]
    patterns = []
    refused: dict[str, list[Mapping[str, Any]]] = {}
    raw_refusal: dict[str, str] = {}
    rest = []
    for r in failed:
        refusal = _refusal(r)
        if refusal is None:
            rest.append(r)
            continue
        refused.setdefault(normalised(refusal), []).append(r)
        raw_refusal.setdefault(normalised(refusal), refusal)
    for norm, results in refused.items():
        rules = tuple(dict.fromkeys(r["rule_id"] for r in results))
        if len(rules) < min_group:
            rest += results
            continue
        refusal = raw_refusal[norm]
        patterns.append(
            Pattern(
                name,
                None,
                None,
                rules,
                _refusal_cause(refusal),
                norm,
                refusal[:160],
                len(failed),
                len(results),
            )
        )
    replayed, rest = _replay_patterns(rest, name, min_group, len(failed))
    answered = [_quoting(p, rest) for p in _answer_patterns(rest, name, min_group, len(failed))]
    return replayed + sorted(patterns, key=lambda p: -p.results) + answered


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _quoting(pattern: Pattern, failed: Sequence[Mapping[str, Any]]) -> Pattern:
    """The pattern quoting its first failure's message as written: grouping reads a normalised message (ids,
    numbers and quoted values out), but a note that quotes `gemini-…-pro` names no model anyone can look up."""
    first = next((r for r in failed if r["rule_id"] == pattern.rules[0]), None)
    if first is None:
        return pattern
    status, _code, _kind, message = _answer(first)
    if status is not None and 200 <= status < 300:
        message = _first_violation(first)
    return dataclasses.replace(pattern, quoted=_clip(" ".join(message.split())))


_FOR_RULE = re.compile(r" for rule \S+")
_FAMILY = re.compile(r"scripted for the (\w+) family")


def _replay_cause(said: str, profile: str) -> str:
    """What to change when the replay upstream had no provider answer to give, read from its words."""
    family = _FAMILY.search(said)
    if family:
        return (
            f"these rules script no answer for the {family.group(1)} provider family, which the gateway called for "
            "this model: they cannot be judged on it. Map the model roles to a model the gateway serves from a family "
            f"they script, or do not claim the features they need (gateway-conformance roles --profile {profile})"
        )
    if "case marker" in said:
        return (
            "the gateway drops or rewrites the user's text, where the harness's case marker travels, so the replay "
            "cannot tell which rule a provider call is for: pass the user's text through unchanged"
        )
    if said.startswith("cassette "):
        return (
            "the gateway's provider request does not match the rule's recorded answer (each diagnostic names the "
            "field): compare the first failure's upstream request with its cassette"
        )
    return (
        "the replay upstream could not play these rules as written: see the first failure's upstream answer"
    )


def _replay_patterns(
    failed: Sequence[Mapping[str, Any]], name: str, min_group: int, of: int
) -> tuple[list[Pattern], list[Mapping[str, Any]]]:
    """Failures whose cause is the replay's own diagnostic (their first violation, harness/violation.py), grouped by
    what it said: the largest cause of all, since these rules were never played as written. The rest returned."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    rest = []
    for r in failed:
        first = (r.get("violations") or [{}])[0]
        if first.get("check") == "replay" and isinstance(first.get("actual"), str):
            groups.setdefault(_FOR_RULE.sub("", first["actual"]), []).append(r)
        else:
            rest.append(r)
    patterns = []
    for said, results in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        rules = tuple(dict.fromkeys(r["rule_id"] for r in results))
        if len(rules) < min_group:
            rest += results
            continue
        patterns.append(
            Pattern(
                name,
                None,
                None,
                rules,
                _replay_cause(said, name),
                of=of,
                results=len(results),
                diagnostic=said,
            )
        )
    return patterns, rest


def _answer_patterns(
    failed: Sequence[Mapping[str, Any]], name: str, min_group: int, of: int
) -> list[Pattern]:
    # Grouped by the answer's status, error code and type, and its normalised message: one status can have
    # several causes (a 400 for max_tokens and a 400 for an unknown field are two lines, each with its cause).
    groups: dict[tuple[int | None, str | None, str | None, str], list[Mapping[str, Any]]] = {}
    messages: dict[tuple[int | None, str | None, str | None, str], str] = {}
    for r in failed:
        status, code, kind, message = _answer(r)
        if status is not None and 200 <= status < 300:
            # an answer that succeeded says nothing about the cause: the first violation does (the same
            # field missing upstream, the same header absent, …)
            message = _first_violation(r)
        key = (status, code, kind, normalised(message))
        groups.setdefault(key, []).append(r)
        messages.setdefault(key, message)
    patterns = []
    for (status, code, kind, norm), results in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        rules = tuple(dict.fromkeys(r["rule_id"] for r in results))
        if len(rules) < min_group:
            continue
        expected_error = all(
            any(v["check"] == "status" and _is_error_status(v.get("expected")) for v in r["violations"])
            for r in results
        )
        patterns.append(
            Pattern(
                name,
                status,
                code or kind,
                rules,
                _cause(
                    name,
                    status,
                    code,
                    messages[(status, code, kind, norm)],
                    expected_error,
                    provider_called=any((r.get("exchange") or {}).get("upstream") for r in results),
                ),
                norm,
                of=of,
                results=len(results),
            )
        )
    return patterns


def _first_violation(result: Mapping[str, Any]) -> str:
    """The first violation other than the status (which the answer's line already says)."""
    for v in result.get("violations") or ():
        if v.get("check") != "status":
            return f"{v.get('path') or v.get('check')}: {v.get('message') or ''}"
    return ""


def _is_error_status(expected: Any) -> bool:
    values = expected if isinstance(expected, list) else [expected]
    return bool(values) and all(isinstance(v, int) and v >= 400 for v in values)


def pattern_lines(documents: Sequence[Mapping[str, Any]]) -> list[str]:
    return [p.line() for doc in documents for p in failure_patterns(doc)]

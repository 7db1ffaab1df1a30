"""The plugin's options, declared once: the pytest plugin adds them all, and `certify` accepts those that
make sense for it (with the same help) and passes them on to each child pytest run (harness/orchestrate/
config.py's RunConfig holds their values and renders them). Here, not in harness/plugin/: the CLI reads this
table, and importing harness.plugin imports pytest."""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.outcomes import KEY_ENV

# How certify treats an option: "forward" passes the user's value on to every child pytest run;
# "own" means certify reads it itself (it starts the gateway / replay upstream); "plugin" is pytest only.
Use = Literal["forward", "own", "plugin"]


@dataclass(frozen=True)
class Option:
    flags: tuple[str, ...]
    kwargs: Mapping[str, Any]
    use: Use
    certify_kwargs: Mapping[str, Any] = field(default_factory=dict)  # certify's differences (e.g. repeatable)
    path: bool = False  # a file path: made absolute before it is forwarded

    @property
    def dest(self) -> str:
        return str(self.kwargs.get("dest") or self.flags[0].lstrip("-").replace("-", "_"))


OPTIONS: tuple[Option, ...] = (
    Option(
        ("--gateway-url",),
        {
            "metavar": "URL",
            "help": "OpenAI base URL of the gateway under test "
            "(as an SDK takes it, e.g. http://127.0.0.1:8080/openai/v1). Enables the rules.",
        },
        "own",
    ),
    Option(
        ("--gateway-key",),
        {"metavar": "KEY", "help": f"API key for the gateway (default: ${KEY_ENV})."},
        "own",
    ),
    Option(
        ("--profile",),
        {"metavar": "NAME", "help": "which documented gateway's rules to run (ezat, lyrouter, relay)."},
        "own",
        certify_kwargs={
            "action": "append",
            "help": "profile(s) to certify (repeatable; default: every profile with rules; "
            "with --gateway-url: exactly one).",
        },
    ),
    Option(
        ("--model-map",),
        {
            "metavar": "FILE",
            "help": "YAML mapping of model roles ($MODEL, ...) to your model ids; "
            "a role mapped to null makes its rules NOT_APPLICABLE.",
        },
        "own",
        path=True,
    ),
    Option(
        ("--replay-url",),
        {
            "metavar": "URL",
            "help": "a replay upstream that is already running (gateway-conformance serve-upstream).",
        },
        "own",
    ),
    Option(
        ("--replay-port",),
        {
            "metavar": "P",
            "type": int,
            "help": "serve the replay upstream on 127.0.0.1:P "
            "(point the gateway's provider base URLs there).",
        },
        "own",
    ),
    Option(
        ("--upstream",),
        {
            "choices": ("replay", "live"),
            "default": "replay",
            "help": "replay: the gateway talks to the replay upstream (default); live: to real providers the "
            "harness cannot see: client-side expectations are judged, upstream-side ones are not observable.",
        },
        "own",
    ),
    Option(
        ("--rule",),
        {
            "metavar": "GLOB",
            "action": "append",
            "default": [],
            "help": "run only rules whose id matches (repeatable), e.g. 'ezat/streaming/*'.",
        },
        "forward",
    ),
    Option(
        ("--rule-timeout",),
        {
            "metavar": "S",
            "type": float,
            "default": 30.0,
            "help": "seconds a rule may take before the gateway's answer counts as hung (default 30).",
        },
        "forward",
    ),
    Option(
        ("--keepalive-silence",),
        {
            "metavar": "S",
            "type": float,
            "default": 25.0,
            "help": "seconds of upstream silence the keep-alive rule waits out for a `: ping` (default 25, "
            "a long pause); declare less when your gateway pings sooner. certify states the embedded "
            "reference gateway's own.",
        },
        "forward",
    ),
    Option(
        ("--nonstream-timeout",),
        {
            "metavar": "S",
            "type": float,
            "default": None,
            "help": "seconds after which your gateway gives up on a non-streaming request (EZAT's doc: 590, "
            "504 timeout); declare it (shorter in a test set-up) and the rules on that limit keep the upstream "
            "silent past it. Undeclared, those rules are not applicable. certify states the embedded reference "
            "gateway's own.",
        },
        "forward",
    ),
    Option(
        ("--feature",),
        {
            "metavar": "NAME",
            "action": "append",
            "default": [],
            "help": "declare an optional feature the gateway has or the run allows "
            "(e.g. slow, loopback-downloads); repeatable.",
        },
        "own",
    ),
    Option(
        ("--implementation",),
        {
            "metavar": "FILE",
            "help": "YAML describing your gateway (specs/schema/implementation.schema.json): organization, project, "
            "version, url, contact and its set-up for the conformance report, and under `features:` how the "
            "features you claim are set up (a key it limits, a key over its budget, the mark of its own 429, where "
            "it reports cost and its price table); the --implementation-* options override its fields",
        },
        "forward",
        path=True,
    ),
    Option(
        ("--strict-rules",),
        {
            "action": "store_true",
            "dest": "gc_strict",
            "help": "a failed SHOULD or MAY rule is a FAIL, not a WARN (pytest already owns --strict).",
        },
        "forward",
        certify_kwargs={"flags": ("--strict", "--strict-rules")},
    ),
    Option(
        ("--expectations",),
        {
            "metavar": "FILE",
            "help": "known failures of this gateway (YAML, specs/schema/expectations.schema.json): they "
            "become XFAIL; an XPASS, an expired entry or an entry naming no rule fails the run.",
        },
        "forward",
        path=True,
    ),
    Option(
        ("--write-expectations",),
        {
            "metavar": "FILE",
            "help": "write an expectations file covering this run's failures (fill in the reasons).",
        },
        "forward",
        path=True,
    ),
    Option(
        ("--specs-dir",),
        {
            "metavar": "DIR",
            "help": "read profiles and rules from DIR/<profile>/ instead of the bundled specs/ "
            "(your own gateway's profile: gateway-conformance new-profile NAME --doc FILE).",
        },
        "forward",
        path=True,
    ),
    Option(
        ("--rerun-base",),
        {
            "metavar": "CMD",
            "help": "the command each rule's rerun line starts with (certify and matrix set it: the servers "
            "they start stop with the run); default: this pytest command.",
        },
        "plugin",
    ),
    Option(
        ("--concurrency",),
        {
            "metavar": "N",
            "type": int,
            "default": None,
            "help": "rules in flight at once, the ones that wait on a clock (upstream pauses, timeouts, slow "
            "downloads) started first; results are still reported in rule order (default 8 with the replay "
            "upstream, 4 live; 1 runs one rule at a time). Under pytest-xdist each worker runs one at a time.",
        },
        "forward",
    ),
    Option(
        ("--repeat",),
        {
            "metavar": "K",
            "type": int,
            "default": 1,
            "help": "live mode: run each rule K times; a rule passes only when all K runs pass (pass^k), one that "
            "passed some runs is FLAKY (a failure under --strict).",
        },
        "forward",
    ),
    Option(
        ("--max-requests",),
        {
            "metavar": "N",
            "type": int,
            "default": None,
            "help": "live mode cost guard: send at most N requests to the gateway; the rules beyond are SKIP "
            "with a message saying so.",
        },
        "forward",
    ),
    Option(
        ("--allow-large-requests",),
        {
            "action": "store_true",
            "default": False,
            "help": "live mode: send the rule variants whose request body is over 1 MB (real bytes uploaded to the "
            "gateway, and a provider bill if it does not enforce its limit); without it they are not runnable live.",
        },
        "forward",
    ),
    Option(
        ("--report-json",),
        {
            "metavar": "PATH",
            "help": "write every rule's outcome to this JSON file (specs/schema/report.schema.json).",
        },
        "plugin",
    ),
)


def plugin_options() -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """(flags, kwargs) for pytest's `group.addoption`."""
    for opt in OPTIONS:
        yield opt.flags, dict(opt.kwargs)


def add_certify_options(parser: argparse.ArgumentParser) -> None:
    """The plugin options certify accepts, with the plugin's help unless certify's differs."""
    for opt in OPTIONS:
        if opt.use == "plugin":
            continue
        kwargs = {**opt.kwargs, **opt.certify_kwargs}
        flags = kwargs.pop("flags", opt.flags)
        kwargs["dest"] = opt.dest
        parser.add_argument(*flags, **kwargs)

"""Issue 23 end to end: refresh every family's cassettes against the simulator (a provider that answers from the
request alone) into a temporary folder, then judge the reference gateway over the refreshed set with the rules of
the three catalogs that read the answer: nothing may fail, and record names each scenario it did not reproduce."""

from __future__ import annotations

import secrets
import shutil
from pathlib import Path

import pytest

from harness import paths
from harness.cassette.document import load_cassette
from harness.cassette.scenario import parse_scenario
from harness.cli import main as cli_main
from harness.orchestrate.child import Run, run_pytest
from harness.orchestrate.embedded import embedded_args, embedded_features, reference_gateway
from harness.paths import specs_dir
from harness.record.scenario_check import cassette_problems
from harness.replay.server import ReplayServer
from harness.simulator.app import SimulatorServer
from harness.spec.selection import profile_rules

KEYS = {
    "ANTHROPIC_API_KEY": "sim-anthropic-key",
    "OPENAI_API_KEY": "sim-openai-key",
    "GEMINI_API_KEY": "sim-gemini-key",
}
SUFFIX = {"anthropic": "", "openai": "/v1", "gemini": "", "responses": "/v1"}
# What the simulator cannot be: a provider resolving an alias to a dated model id, a server-side web search, a
# DeepSeek or Kimi reasoning model with their own field names. Each must be named, and keep its old cassette.
NOT_REPRODUCED = {
    "anthropic/lyrouter-model-alias": "model: got claude-sonnet-5-5, want one matching",
    "anthropic/web-search": "blocks: got [text], want [text, server_tool_use(web_search)",
    "openai/reasoning-content": "usage fields: prompt_cache_hit_tokens, prompt_cache_miss_tokens missing",
    "openai/reasoning-field": "fields: reasoning missing",
    # The simulator streams one choice and no logprobs (n and logprobs only in its non-stream answers), and record
    # records the stream: a refresh against it keeps those cassettes.
    "openai/n-two": "stop_reason: got stop, want stop,stop",
    "openai/logprobs": "logprobs: none in the answer",
    # A custom tool's call in its grammar (Codex's apply_patch, a patch naming the request's marker): the simulator
    # calls the tool with its stock text, which the scenario's grammar refuses. A real model writes the patch.
    **{
        f"{family}/custom-tool-call": "tool apply_patch: arguments invalid: 'Hello' does not match"
        for family in ("anthropic", "openai", "gemini", "responses")
    },
    # A thinking model calling a tool with nothing between: the simulator writes text before every tool call (as
    # providers may), and these scenarios ask for the answer with none, which a real model gives often enough.
    "anthropic/thinking-tool-use": "blocks: got [thinking, text, tool_use(get_weather)], want [thinking, tool_use",
    "gemini/tool-call-thought-signature": "blocks: got [text, functionCall(get_weather)], want [functionCall(",
}
# The expectation kinds that read what the provider answered (the rest judge the request the gateway sent).
READS_ANSWER = {"json", "chunks", "body", "usage", "finish_reason", "stream_matches_nonstream"}


def _reads_answer(rule: object, recorded: set[str]) -> bool:
    upstream = getattr(rule, "upstream", None) or {}
    if upstream.get("cassette") not in recorded or upstream.get("fault") or upstream.get("pacing"):
        return False
    keys = set(rule.expect)  # type: ignore[attr-defined]
    for extra in (*rule.when, *rule.then):  # type: ignore[attr-defined]
        keys |= set(extra.get("expect") or {})
    return bool(keys & READS_ANSWER)


@pytest.mark.e2e
@pytest.mark.slow
def test_a_refresh_against_the_simulator_keeps_the_catalogs_green(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "cassettes"
    shutil.copytree(paths.cassettes_dir(), folder, ignore=shutil.ignore_patterns("_*.py", "__pycache__"))
    for var in ("GOOGLE_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(var, raising=False)
    for var, value in KEYS.items():
        monkeypatch.setenv(var, value)
    with SimulatorServer(seed=23) as simulator:
        codes = {
            family: cli_main(
                [
                    "record",
                    "--provider",
                    family,
                    "--base-url",
                    simulator.url + suffix,
                    "--cassettes-dir",
                    str(folder),
                ]
            )
            for family, suffix in SUFFIX.items()
        }
    out = capsys.readouterr().out
    assert codes == {"anthropic": 1, "openai": 1, "gemini": 1, "responses": 1}, out
    for name, why in NOT_REPRODUCED.items():
        line = next((x for x in out.splitlines() if x.startswith(f"{name}: ")), "")
        assert line.startswith(f"{name}: not reproduced: {why}") and "the old cassette stays" in line, line
        assert (folder / f"{name}.yaml").read_bytes() == (paths.cassettes_dir() / f"{name}.yaml").read_bytes()
    for family in ("anthropic", "openai", "gemini", "responses"):
        kept = ", ".join(sorted(name for name in NOT_REPRODUCED if name.startswith(f"{family}/")))
        assert f"not written (the old cassettes stay): {kept}\n" in out

    # Every other recordable scenario was recorded, shows its scenario, and its pair is one generation.
    recorded: set[str] = set()
    for path in sorted(folder.glob("*/*.yaml")):
        name = f"{path.parent.name}/{path.stem}"
        cassette = load_cassette(path, name=name)
        scenario = parse_scenario(cassette.scenario, path)
        assert scenario is not None, name
        if not scenario.recordable or name in NOT_REPRODUCED:
            assert cassette.metadata.origin == "synthesized", name
            continue
        assert cassette.metadata.origin == "recorded", name
        assert cassette.metadata.non_stream == "derived from the recorded stream (interaction #1)", name
        assert cassette_problems(cassette, scenario) == [], name
        recorded.add(name)
    # 23, the two OpenAI tool-call cassettes issue 21 added (text before a call; two calls at once), and three for
    # profile anthropic (unicode text from OpenAI and Gemini, Gemini's text before a call), and OpenAI's text before
    # two calls (issue 34, audit D19), and the eight recordable OpenAI Responses cassettes (issue 32), and a Responses
    # reasoning item before a tool call (issue 43: reasoning carried across tool turns).
    assert (
        len(recorded) == 38
        and sum(n.startswith("responses/") for n in recorded) == 9
        and sum(n.startswith("gemini/") for n in recorded) == 8
    ), sorted(recorded)

    key = "gc-" + secrets.token_hex(16)
    with ReplayServer(folder) as replay:
        for profile in ("ezat", "lyrouter", "relay"):
            rules = profile_rules([specs_dir() / profile], profile) or []
            ids = [r.id for r in rules if _reads_answer(r, recorded)]
            assert len(ids) > 20, profile
            with reference_gateway(profile, replay.url, key, tmp_path / profile / "gateway.log") as url:
                run = Run(
                    profile=profile,
                    gateway_url=url,
                    description="reference gateway over refreshed cassettes",
                    replay_url=replay.url,
                    features=embedded_features(profile),
                )
                selection = [a for rule_id in ids for a in ("--rule", rule_id)]
                # The child runs its rules several at a time (--concurrency): no xdist workers to start.
                extra = [*embedded_args(profile), *selection]
                document = run_pytest(run, tmp_path / profile, key, extra)
            totals = document["totals"]
            failed = [
                f"{r['rule_id']} {r['variant']}: {r['outcome']}"
                for r in document["results"]
                if r["outcome"] in ("FAIL", "HARNESS_ERROR", "WARN", "FLAKY")
            ]
            assert not failed, failed
            assert totals["PASS"] >= len(ids), (profile, totals)

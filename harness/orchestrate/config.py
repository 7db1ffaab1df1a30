"""A run's configuration, one object: the plugin's options (harness/orchestrate/options.py declares them) as the
plugin and certify both take them, validated once, rendered as the arguments of a child pytest run and as the
pytest command that reruns a rule. Pure: no I/O beyond looking at the paths it was given (and probing those it
writes to)."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.orchestrate.options import OPTIONS
from harness.outcomes import KEY_ENV


@dataclass(frozen=True)
class RunConfig:
    """The options of one conformance run (the field names are the options' `dest`s). `profile` holds every
    `--profile` given: the plugin takes one, certify several."""

    gateway_url: str | None = None
    gateway_key: str | None = None
    profile: tuple[str, ...] = ()
    model_map: str | None = None
    replay_url: str | None = None
    replay_port: int | None = None
    upstream: str = "replay"
    rule: tuple[str, ...] = ()
    rule_timeout: float = 30.0
    keepalive_silence: float = 25.0
    nonstream_timeout: float | None = None
    feature: tuple[str, ...] = ()
    implementation: str | None = None
    gc_strict: bool = False
    expectations: str | None = None
    write_expectations: str | None = None
    specs_dir: str | None = None
    rerun_base: str | None = None
    repeat: int = 1
    concurrency: int | None = None
    max_requests: int | None = None
    report_json: str | None = None

    @classmethod
    def from_options(cls, options: Any) -> RunConfig:
        """From pytest's `config.option` or certify's argparse namespace (an option a command lacks keeps its
        default)."""
        values: dict[str, Any] = {}
        for f in fields(cls):
            if not hasattr(options, f.name):
                continue
            value = getattr(options, f.name)
            if f.name == "profile":
                value = () if not value else (value,) if isinstance(value, str) else tuple(value)
            elif isinstance(value, list):
                value = tuple(value)
            if value is not None or f.default is None:
                values[f.name] = value
        return cls(**values)

    def check(self) -> None:
        """The mistakes the plugin and certify both refuse before anything starts: a ConfigError (exit 3)."""
        if self.specs_dir and not Path(self.specs_dir).is_dir():
            raise ConfigError(f"--specs-dir {self.specs_dir}: no such directory")
        if self.gateway_url is not None:
            from harness.orchestrate.preflight import check_url

            check_url(
                self.gateway_url
            )  # a URL without a scheme or host is a typo, not a gateway that is down
        if self.rule_timeout <= 0:
            raise ConfigError("--rule-timeout must be positive")
        if self.repeat < 1 or (self.max_requests is not None and self.max_requests < 0):
            raise ConfigError("--repeat must be at least 1 and --max-requests not negative")
        if self.concurrency is not None and self.concurrency < 1:
            raise ConfigError("--concurrency must be at least 1")
        if (self.repeat != 1 or self.max_requests is not None) and self.upstream != "live":
            raise ConfigError("--repeat and --max-requests apply to --upstream live only")
        # Where the run writes: probed now, never found unwritable after every rule has run (issue 48).
        from harness.report.folder import writable_file

        for option, path in (
            ("--report-json", self.report_json),
            ("--write-expectations", self.write_expectations),
        ):
            if path:
                writable_file(path, option)

    def workers(self) -> int:
        """Rules in flight at once: as given, else 8 against the replay upstream (loopback, cheap) and 4 live
        (a hosted vendor's rate limits are not ours to find)."""
        if self.concurrency is not None:
            return self.concurrency
        return 4 if self.upstream == "live" else 8

    def key(self) -> str | None:
        """The gateway key: given, or from the environment."""
        return self.gateway_key or os.environ.get(KEY_ENV) or None

    def forwarded_args(self) -> list[str]:
        """The child pytest's arguments for the forwarded options the user set."""
        out: list[str] = []
        for opt in OPTIONS:
            if opt.use != "forward":
                continue
            value = getattr(self, opt.dest, None)
            default = opt.kwargs.get("default")
            if isinstance(value, tuple):
                value = list(value)
            if value is None or value == default or value is False:
                continue
            flag = opt.flags[0]
            if value is True:
                out.append(flag)
                continue
            for item in value if isinstance(value, list) else [value]:
                out += [flag, str(Path(item).resolve()) if opt.path else str(item)]
        return out

    def pytest_rerun(self) -> str:
        """The pytest command a rule's rerun line starts with (the plugin appends `--rule ID`)."""
        if self.rerun_base:
            return str(self.rerun_base)
        parts = ["pytest", "--gateway-url", str(self.gateway_url), "--profile", self.profile[0]]
        if self.specs_dir:
            parts += ["--specs-dir", str(Path(self.specs_dir).resolve())]
        # The key by reference, never its value: pasted, the line reads it from the environment.
        key = f'{KEY_ENV}="${KEY_ENV}" ' if self.gateway_key or os.environ.get(KEY_ENV) else ""
        if self.model_map:
            parts += ["--model-map", self.model_map]
        if self.upstream == "live":
            parts += ["--upstream", "live"]
        elif self.replay_url:
            parts += ["--replay-url", self.replay_url]
        elif self.replay_port:
            parts += ["--replay-port", str(self.replay_port)]
        for feature in self.feature:
            parts += ["--feature", feature]
        if self.implementation:
            parts += ["--implementation", str(Path(self.implementation).resolve())]
        if self.gc_strict:
            parts.append("--strict-rules")
        if self.keepalive_silence != 25.0:
            parts += ["--keepalive-silence", f"{self.keepalive_silence:g}"]
        if self.nonstream_timeout is not None:
            parts += ["--nonstream-timeout", f"{self.nonstream_timeout:g}"]
        return key + " ".join(shlex.quote(p) for p in parts)

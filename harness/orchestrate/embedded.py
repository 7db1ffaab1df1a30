"""The embedded reference gateway: started as a child process on a free loopback port, and what the rules are
told about it (its features, keep-alive silence and non-streaming limit) — one declaration that certify,
matrix and mutants all read."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessFailure


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# What the embedded reference gateway is started with, per profile, declared to the rules as features:
# it may fetch images from the harness's loopback file server; its lyrouter workspace has a Default Model.
EMBEDDED_FEATURES: dict[str, tuple[str, ...]] = {
    "ezat": ("loopback-downloads",),
    "lyrouter": ("loopback-downloads", "workspace-default-model"),
    "relay": ("loopback-downloads", "response-cache", "max-image-bytes-default"),
}
# What the embedded reference gateway is started with beyond the common options, per profile: relay's
# response cache on (its rules need `response-cache`), its state in a file of this run's report folder.
EMBEDDED_OPTIONS: dict[str, tuple[str, ...]] = {"relay": ("--cache-ttl-seconds", "300")}
# Its own limits on two test keys, in every profile (issue 45, gateway features "Rate limits" and "Budget"): the keys
# the features files beside its model maps declare (reference_gateway/model_maps/<gateway>/<catalog>-features.yaml).
EMBEDDED_KEY_LIMITS: tuple[str, ...] = (
    "--rate-limit",
    "gc-reference-rate-limited-key=0",
    "--over-budget-key",
    "gc-reference-over-budget-key",
)
# EZAT's 590-second limit on a non-streaming request, shortened: the embedded reference gateway gives up after
# 20 s (`--upstream-timeout`) and the rules are told so (`--nonstream-timeout`), so the 504 rule runs in every
# certify. Only ezat's catalog has rules on that limit. Not less: certify runs every catalog at once on 2 cores,
# where three 9 MB images downloaded, inlined and sent on (ezat/images/downloads-27mb-accepted, 1.2 s alone) took
# 7.9 s beside the eleven other runs, 9.2 s under a 12 s limit (a quiet 2-core machine; at 5 s every certify
# failed it with the limit's 504: a limit of the harness's set-up, not of the gateway). The rules on the limit
# sleep rather than compute: at 20 s the whole certify took 34.9 s, as it did at 5 s.
EMBEDDED_NONSTREAM_TIMEOUT: dict[str, float] = {"ezat": 20.0}


# The embedded reference gateway pings after 1 s of silence (`--ping-interval`), so the keep-alive rule is
# told a 2 s silence (`--keepalive-silence`) instead of the 25 s it waits for a gateway that declares nothing.
EMBEDDED_PING_INTERVAL = 1.0
EMBEDDED_KEEPALIVE_SILENCE = 2.0


@dataclass(frozen=True)
class Embedded:
    """What the rules are told about the embedded reference gateway of one profile: the one declaration that
    certify, matrix and mutants all read (so a mutants baseline judges the gateway certify judges)."""

    profile: str
    features: tuple[str, ...]
    keepalive_silence: float
    nonstream_timeout: float | None
    gateway: str = ""  # the reference gateway profile started for this catalog (profile openai: another's)
    model_map: str | None = None  # its ids for the catalog's model roles, when the catalog is not its own
    # Where a documented gateway deviates from another catalog's MUST by its own documentation (LYRouter's 503
    # for an unknown model against OpenAI's 404), the deviation is declared as a vendor would declare it: an
    # expectations file beside the model map (XFAIL with the doc's reason; passing it would be XPASS, a failure).
    expectations: str | None = None
    # How the features it claims for the catalog are set up (issue 45: the keys it limits or holds over budget, the
    # mark of its own 429, its price table), as a vendor declares them: an implementation file beside the model map
    # holding only `features:` (reference_gateway/model_maps/<gateway>/<catalog>-features.yaml).
    implementation: str | None = None

    def plugin_args(self) -> list[str]:
        """The plugin arguments that state its keep-alive silence and, where the profile has one, its
        non-streaming limit, its declared deviations and its features' set-up."""
        args = ["--keepalive-silence", f"{self.keepalive_silence:g}"]
        limit = self.nonstream_timeout
        if limit is not None:
            args += ["--nonstream-timeout", f"{limit:g}"]
        if self.implementation is not None:
            args += ["--implementation", self.implementation]
        return args if self.expectations is None else [*args, "--expectations", self.expectations]


def embedded(profile: str, gateway: str | None = None) -> Embedded:
    """The catalog `profile` on the reference gateway started in `gateway` (default: the catalog's own, or for
    a catalog it serves under its profiles, the first of harness.orchestrate.embedded_catalog.GATEWAYS)."""
    from harness.orchestrate.embedded_catalog import features_for, gateways_for

    gateway = gateway or gateways_for(profile)[0]
    claimed = features_for(gateway, profile)
    own = EMBEDDED_FEATURES.get(gateway, ("loopback-downloads",))
    return Embedded(
        profile=profile,
        features=own if claimed is None else ("loopback-downloads", *claimed),
        keepalive_silence=EMBEDDED_KEEPALIVE_SILENCE,
        nonstream_timeout=EMBEDDED_NONSTREAM_TIMEOUT.get(gateway) if claimed is None else None,
        gateway=gateway,
        model_map=None if gateway == profile else reference_model_map(gateway, profile),
        expectations=None if gateway == profile else reference_model_map(gateway, f"{profile}-expectations"),
        implementation=None if gateway == profile else reference_model_map(gateway, f"{profile}-features"),
    )


def embedded_args(profile: str) -> list[str]:
    return embedded(profile).plugin_args()


def embedded_features(profile: str) -> tuple[str, ...]:
    return embedded(profile).features


class GatewayProcess:
    """`python -m reference_gateway` on a free loopback port, as a child process: `start()` launches it,
    `wait_healthy()` returns its OpenAI base URL once /healthz answers, `stop()` ends it. Several can start
    at once (certify starts each profile's before waiting for any)."""

    def __init__(self, profile: str, upstream_url: str, key: str, log: Path) -> None:
        self.profile, self.upstream_url, self.key, self.log = profile, upstream_url, key, log
        self.port = free_port()
        self._proc: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        cmd = [
            sys.executable,
            "-m",
            "reference_gateway",
            "--profile",
            self.profile,
            "--upstream-url",
            self.upstream_url,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--allow-image-host",
            "127.0.0.1",
            *EMBEDDED_OPTIONS.get(self.profile, ()),
            *EMBEDDED_KEY_LIMITS,
            "--ping-interval",
            f"{EMBEDDED_PING_INTERVAL:g}",
        ]
        limit = embedded(self.profile).nonstream_timeout
        if limit is not None:
            cmd += ["--upstream-timeout", f"{limit:g}"]
        # Relay's idempotency and cache, and every profile's kept Responses: a file of this run's, never the user's.
        cmd += ["--state-url", f"sqlite:///{self.log.parent / f'{self.profile}-state.sqlite'}"]
        return cmd

    def start(self) -> GatewayProcess:
        env = {
            **os.environ,
            "REFERENCE_GATEWAY_API_KEYS": self.key,
            "ANTHROPIC_API_KEY": "gc-replay-upstream-key",
        }
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as out:  # the child keeps its own copy of the descriptor
            # A process group of its own: a terminal's Ctrl-C reaches the run, which stops its gateways last.
            self._proc = subprocess.Popen(
                self.command(), stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        return self

    def wait_healthy(self) -> str:
        assert self._proc is not None, "start() first"
        _wait_healthy(f"http://127.0.0.1:{self.port}/healthz", self._proc, self.log)
        return f"http://127.0.0.1:{self.port}/openai/v1"

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        _signal_group(proc.pid, signal.SIGTERM)  # its workers too (--workers N)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            _signal_group(proc.pid, signal.SIGKILL)
            proc.wait()


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


@contextlib.contextmanager
def reference_gateway(profile: str, upstream_url: str, key: str, log: Path) -> Iterator[str]:
    """Start `python -m reference_gateway` on a free loopback port; yield its OpenAI base URL; stop it."""
    gateway = GatewayProcess(profile, upstream_url, key, log).start()
    try:
        yield gateway.wait_healthy()
    finally:
        gateway.stop()


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 30.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    # One client for every poll, without TLS (plain http on loopback): a client per poll loads the CA bundle
    # each time, a fifth of a second of CPU while the gateway itself is starting.
    with httpx.Client(timeout=1.0, trust_env=False, verify=False) as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
                raise HarnessFailure(f"the reference gateway exited with code {proc.returncode}:\n{tail}")
            try:
                if client.get(url).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
    raise HarnessFailure(
        f"the reference gateway did not become healthy at {url} within {timeout:g}s (log: {log})"
    )


def reference_model_map(gateway_profile: str, catalog: str) -> str | None:
    """The reference gateway's own ids for another catalog's model roles (`reference_gateway/model_maps/`).

    Found on disk next to the gateway package, never imported: the harness judges it over HTTP only.
    """
    spec = importlib.util.find_spec("reference_gateway")
    if gateway_profile == catalog or spec is None or not spec.submodule_search_locations:
        return None
    path = (
        Path(next(iter(spec.submodule_search_locations))) / "model_maps" / gateway_profile / f"{catalog}.yaml"
    )
    return str(path) if path.is_file() else None


def mapped_models(catalog: str, gateway: str) -> list[str]:
    """The model ids the reference gateway in profile `gateway` serves `catalog`'s roles with (its model map; none
    for its own catalog, whose role defaults are its ids)."""
    import yaml

    if gateway == catalog:
        return []
    path = reference_model_map(gateway, catalog)
    if path is None:
        return []
    roles = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    return sorted({str(v) for v in roles.values() if isinstance(v, str)})

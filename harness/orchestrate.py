"""Child pytest runs and the embedded reference gateway: what certify, matrix and mutants orchestrate.

`cli.py` parses arguments and calls these; nothing here parses a command line.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, HarnessFailure
from harness.outcomes import KEY_ENV
from harness.report.matrix import Column


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Run:
    """One profile certified against one gateway."""

    profile: str
    gateway_url: str
    description: str
    replay_url: str | None
    features: tuple[str, ...]
    model_map: str | None = None
    upstream: str = "replay"
    rerun_base: str | None = None  # what a rule's rerun line starts with, when the run's servers stop with it


# --- the embedded reference gateway ---------------------------------------------------------------


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
# EZAT's 590-second limit on a non-streaming request, shortened: the embedded reference gateway gives up after
# 3 s (`--upstream-timeout`) and the rules are told so (`--nonstream-timeout`), so the 504 rule runs in every
# certify in seconds. Only ezat's catalog has rules on that limit.
EMBEDDED_NONSTREAM_TIMEOUT: dict[str, float] = {"ezat": 3.0}


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

    def plugin_args(self) -> list[str]:
        """The plugin arguments that state its keep-alive silence and, where the profile has one, its
        non-streaming limit."""
        args = ["--keepalive-silence", f"{self.keepalive_silence:g}"]
        limit = self.nonstream_timeout
        return args if limit is None else [*args, "--nonstream-timeout", f"{limit:g}"]


def embedded(profile: str) -> Embedded:
    return Embedded(
        profile=profile,
        features=EMBEDDED_FEATURES.get(profile, ("loopback-downloads",)),
        keepalive_silence=EMBEDDED_KEEPALIVE_SILENCE,
        nonstream_timeout=EMBEDDED_NONSTREAM_TIMEOUT.get(profile),
    )


def embedded_args(profile: str) -> list[str]:
    return embedded(profile).plugin_args()


def embedded_features(profile: str) -> tuple[str, ...]:
    return embedded(profile).features


@contextlib.contextmanager
def reference_gateway(profile: str, upstream_url: str, key: str, log: Path) -> Iterator[str]:
    """Start `python -m reference_gateway` on a free loopback port; yield its OpenAI base URL; stop it."""
    port = free_port()
    env = {**os.environ, "REFERENCE_GATEWAY_API_KEYS": key, "ANTHROPIC_API_KEY": "gc-replay-upstream-key"}
    cmd = [
        sys.executable,
        "-m",
        "reference_gateway",
        "--profile",
        profile,
        "--upstream-url",
        upstream_url,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--allow-image-host",
        "127.0.0.1",
        *EMBEDDED_OPTIONS.get(profile, ()),
        "--ping-interval",
        f"{EMBEDDED_PING_INTERVAL:g}",
    ]
    limit = embedded(profile).nonstream_timeout
    if limit is not None:
        cmd += ["--upstream-timeout", f"{limit:g}"]
    if profile == "relay":
        cmd += ["--state-url", f"sqlite:///{log.parent / 'relay-state.sqlite'}"]
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            _wait_healthy(f"http://127.0.0.1:{port}/healthz", proc, log)
            yield f"http://127.0.0.1:{port}/openai/v1"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 30.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise HarnessFailure(f"the reference gateway exited with code {proc.returncode}:\n{tail}")
        try:
            if httpx.get(url, timeout=1.0, trust_env=False).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise HarnessFailure(
        f"the reference gateway did not become healthy at {url} within {timeout:g}s (log: {log})"
    )


# --- running the rules ------------------------------------------------------------------------------


def run_pytest(run: Run, out_dir: Path, key: str | None, extra: Sequence[str]) -> dict[str, Any]:
    """Run one profile's catalog with the plugin in a child pytest; return its results document."""
    out_dir.mkdir(parents=True, exist_ok=True)
    ini = out_dir / "pytest.ini"
    # An empty ini of our own: the user's (or this repo's) pytest configuration must not leak in.
    ini.write_text("[pytest]\n", encoding="utf-8")
    results = out_dir / "results.json"
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-c",
        str(ini),
        "--rootdir",
        str(out_dir),
        "-p",
        "no:cacheprovider",
        "-q",
        "--no-header",
        "-rN",
        "--gateway-url",
        run.gateway_url,
        "--profile",
        run.profile,
        "--report-json",
        str(results),
        "--junitxml",
        str(out_dir / "junit.xml"),
        "-o",
        "junit_family=xunit2",
        "-o",
        f"junit_suite_name=gateway-conformance-{run.profile}",
    ]
    if run.upstream == "live":
        cmd += ["--upstream", "live"]
    elif run.replay_url:
        cmd += ["--replay-url", run.replay_url]
    if run.model_map:
        cmd += ["--model-map", run.model_map]
    for feature in run.features:
        cmd += ["--feature", feature]
    if run.rerun_base:
        cmd += ["--rerun-base", run.rerun_base]
    cmd += list(extra)
    env = dict(os.environ)
    env.pop(KEY_ENV, None)
    if key:
        env[KEY_ENV] = key
    # stderr is read here: a configuration error is the child's one line, not "pytest could not run".
    proc = subprocess.run(cmd, env=env, check=False, stderr=subprocess.PIPE)
    stderr = proc.stderr.decode("utf-8", errors="replace")
    usage = child_usage_error(proc.returncode, stderr)
    if usage is not None:
        raise ConfigError(usage)
    if stderr:
        sys.stderr.write(stderr)
        sys.stderr.flush()
    if proc.returncode in (3, 4) or not results.is_file():
        tail = " … ".join(line.strip() for line in stderr.strip().splitlines()[-3:])
        raise HarnessFailure(
            f"pytest could not run the {run.profile} catalog (exit {proc.returncode})"
            + (f": {tail}" if tail else "")
        )
    document: dict[str, Any] = json.loads(results.read_text(encoding="utf-8"))
    document["target"]["description"] = run.description
    results.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return document


def child_usage_error(returncode: int, stderr: str) -> str | None:
    """The configuration error a child pytest reported (exit 3 from the plugin, 4 from pytest), or None.

    Both print `ERROR: <message>` lines; an internal error (also exit 3) prints a traceback instead.
    """
    if returncode not in (3, 4):
        return None
    messages = [line[len("ERROR: ") :].strip() for line in stderr.splitlines() if line.startswith("ERROR: ")]
    return "; ".join(m for m in messages if m) or None


def profiles_with_rules(root: Path | None = None) -> list[str]:
    from harness.paths import specs_root
    from harness.spec import rule_files
    from harness.spec.loader import available_profiles

    base = root or specs_root()
    return [p for p in available_profiles(base) if any(rule_files(base / p))]


def check_profile_config(
    profile: str,
    *,
    root: Path | None = None,
    model_map: str | None = None,
    expectations: str | None = None,
) -> None:
    """What the child pytest would refuse, found before anything starts: the profile, model map, expectations."""
    from harness.modelmap import load_model_map
    from harness.paths import specs_root
    from harness.spec import load_profile

    loaded = load_profile(profile, specs_root(root))
    load_model_map(model_map, loaded)
    if expectations:
        from harness.expectations import load_expectations

        load_expectations(Path(expectations), profile)


def selected_profiles(
    profiles: Sequence[str], patterns: Sequence[str], root: Path | None = None
) -> list[str]:
    """The profiles in which the `--rule` patterns select something (every pattern must match somewhere)."""
    from harness.collection import check_catalog
    from harness.paths import specs_root
    from harness.selection import profile_rules, select_profiles

    base = specs_root(root)
    catalogs = {p: profile_rules([base / p], p) for p in profiles}
    if any(rules is None for rules in catalogs.values()):  # a rule file that does not load: exit 3
        check_catalog([base / p for p in profiles])  # every problem of every file named
        return list(profiles)
    return select_profiles({p: rules or [] for p, rules in catalogs.items()}, patterns)


@contextlib.contextmanager
def fresh_output(directory: Path) -> Iterator[None]:
    """On a configuration error, remove what this run created under `directory`: no half report folder."""
    existed = directory.exists()
    before = set(directory.iterdir()) if existed else set()
    try:
        yield
    except ConfigError:
        import shutil

        if not existed:
            shutil.rmtree(directory, ignore_errors=True)
        elif directory.is_dir():
            for path in set(directory.iterdir()) - before:
                shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def replay_upstream(port: int | None = None, url: str | None = None) -> Iterator[str]:
    """The replay upstream to use: the one at `url`, or one served here on 127.0.0.1:`port` (0/None: free)."""
    if url:
        yield url.rstrip("/")
        return
    from harness.paths import cassettes_dir
    from harness.replay import ReplayServer

    server = ReplayServer(cassettes_dir(), port=port or 0)
    try:
        server.start()
    except OSError as exc:
        raise ConfigError(f"--replay-port {port}: {exc}") from exc
    try:
        yield server.url
    finally:
        server.stop()


@contextlib.contextmanager
def replay_for_target(upstream: str, replay_port: int | None, replay_url: str | None) -> Iterator[str | None]:
    if upstream == "live":
        yield None
        return
    if not replay_url and replay_port is None:
        raise ConfigError(
            "certifying your own gateway in replay mode needs --replay-port P (the harness serves the "
            "replay upstream on 127.0.0.1:P; point your gateway's Anthropic base URL there) or "
            "--replay-url URL, or --upstream live"
        )
    with replay_upstream(replay_port, replay_url) as url:
        yield url


def rerun_line(head: Sequence[str], extra: Sequence[str] = (), key: bool = False) -> str:
    """A command that reruns a rule by itself once this run's servers are gone (the plugin appends --rule ID).

    `extra`: the forwarded options, kept except the selection (--rule) and output-only ones; the key, if any,
    by reference to its variable, never its value.
    """
    import shlex

    kept: list[str] = []
    skip_next = False
    for i, arg in enumerate(extra):
        if skip_next:
            skip_next = False
            continue
        if arg in ("--rule", "-n", "--write-expectations", "--rerun-base"):
            skip_next = i + 1 < len(extra)
            continue
        kept.append(arg)
    prefix = f'{KEY_ENV}="${KEY_ENV}" ' if key else ""
    return prefix + " ".join(shlex.quote(part) for part in [*head, *kept])


# --- the compatibility matrix ---------------------------------------------------------------------


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "gateway"


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


def _run_column(
    name: str,
    url: str,
    catalogs: Sequence[str],
    out_dir: Path,
    key: str | None,
    replay_url: str,
    extra: Sequence[str],
    features: tuple[str, ...],
    model_maps: Mapping[str, str | None] | None = None,
    rerun: Callable[[str], str] | None = None,
) -> Column:
    documents, errors = [], {}
    for profile in catalogs:
        run = Run(
            profile=profile,
            gateway_url=url,
            description=name,
            replay_url=replay_url,
            features=features,
            model_map=(model_maps or {}).get(profile),
            rerun_base=rerun(profile) if rerun else None,
        )
        print(f"matrix: {name} x {profile} catalog", flush=True)
        try:
            documents.append(run_pytest(run, out_dir / profile, key, extra))
        except HarnessFailure as exc:
            errors[profile] = f"not run: {exc}"
    return Column(name, tuple(documents), errors, url)


def _reference_rerun(gateway_profile: str) -> Callable[[str], str]:
    """The embedded reference gateway stops with the matrix: rerun through a command that starts it."""

    def rerun(catalog: str) -> str:
        if catalog == gateway_profile:
            return rerun_line(["gateway-conformance", "certify", "--profile", catalog])
        return rerun_line(["gateway-conformance", "matrix", "--profiles", f"{gateway_profile},{catalog}"])

    return rerun


def _reference_column(
    profile: str, catalogs: Sequence[str], out_dir: Path, key: str, upstream: str, extra: Sequence[str]
) -> Column:
    """The embedded reference gateway in `profile`, judged on every catalog."""
    name = f"reference ({profile})"
    column_dir = out_dir / _slug(name)
    try:
        with reference_gateway(profile, upstream, key, column_dir / "gateway.log") as url:
            maps = {catalog: reference_model_map(profile, catalog) for catalog in catalogs}
            features = embedded_features(profile)
            return _run_column(
                name,
                url,
                catalogs,
                column_dir,
                key,
                upstream,
                [*embedded_args(profile), *extra],
                features,
                maps,
                _reference_rerun(profile),
            )
    except HarnessFailure as exc:
        # _run_column catches its own failures: what reaches here is the gateway failing to start.
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        # The first line says what happened, the log's last line usually why.
        why = (
            "did not start: " + " … ".join(dict.fromkeys([lines[0], lines[-1]])) if lines else "did not start"
        )
        return Column(name, (), dict.fromkeys(catalogs, why))


def run_matrix(
    out_dir: Path,
    profiles: Sequence[str] | None = None,
    gateways: Mapping[str, str] | None = None,
    reference: bool | None = None,
    rules: Sequence[str] = (),
    key: str | None = None,
    replay_port: int | None = None,
    replay_url: str | None = None,
    workers: int | None = None,
) -> list[Column]:
    """Run the catalogs (profiles with rules) against each gateway; by default the reference in each profile."""
    from harness.spec.loader import available_profiles

    # A profile without specs can still name a reference gateway mode (its column then says whether it started).
    selected = list(profiles or available_profiles())
    catalogs = [p for p in profiles_with_rules() if p in selected]
    if not catalogs:
        raise ConfigError(
            f"no selected profile has rules to run ({', '.join(selected)}; profiles with rules: "
            f"{', '.join(profiles_with_rules()) or 'none'})"
        )
    catalogs = selected_profiles(catalogs, rules)
    gateways = dict(gateways or {})
    if gateways and replay_port is None and replay_url is None:
        raise ConfigError(
            "--gateway needs the replay upstream at a known address: --replay-port P (point each "
            "gateway's Anthropic base URL at 127.0.0.1:P) or --replay-url URL"
        )
    with_reference = (not gateways) if reference is None else reference
    extra = [a for rule in rules for a in ("--rule", rule)] + (["-n", str(workers)] if workers else [])
    ref_key = "gc-" + secrets.token_hex(16)
    columns: list[Column] = []
    with replay_upstream(replay_port, replay_url) as upstream:
        for profile in selected if with_reference else []:
            columns.append(_reference_column(profile, catalogs, out_dir, ref_key, upstream, extra))
        for name, url in gateways.items():
            # The replay upstream is at a known address (--replay-port / --replay-url): certify reruns a rule.
            replay = ["--replay-url", replay_url] if replay_url else ["--replay-port", str(replay_port)]

            def rerun(catalog: str, url: str = url, replay: list[str] = replay) -> str:
                head = ["gateway-conformance", "certify", "--gateway-url", url, "--profile", catalog]
                return rerun_line([*head, *replay], key=bool(key))

            columns.append(
                _run_column(name, url, catalogs, out_dir / _slug(name), key, upstream, extra, (), rerun=rerun)
            )
    return columns

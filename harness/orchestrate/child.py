"""One profile's catalog in a child pytest run with the plugin, the replay upstream it needs, and the command
that reruns one rule once this run's servers are gone.

A child whose output is captured (certify's catalogs, side by side) is forked from a fork server that has imported
pytest, the plugin and the engine and parsed the bundled rule files once (`warm.py`), instead of a new interpreter
importing and parsing them again: about a second of CPU per child, a dozen of them at once (issue 47). Where the
platform has no fork server, or `GC_CHILD_PROCESS=spawn`, each child is a `python -m pytest` of its own."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import runpy
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, HarnessFailure
from harness.orchestrate import processes
from harness.outcomes import KEY_ENV


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


OUTPUT_FILE = "pytest-output.txt"  # a captured child's terminal output, in its run's folder


def run_pytest(
    run: Run,
    out_dir: Path,
    key: str | None,
    extra: Sequence[str],
    *,
    capture: bool = False,
    fork: bool = True,
) -> dict[str, Any]:
    """Run one profile's catalog with the plugin in a child pytest; return its results document. With
    `capture`, the child's terminal output goes to OUTPUT_FILE in `out_dir` instead of this terminal (runs
    side by side must not interleave their progress lines), and the child is forked from the warm fork server
    unless `fork` is false (one run alone gains nothing from it)."""
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
        # Only this plugin (and xdist when asked for workers): the child must not start every pytest plugin
        # installed beside it (client libraries bring their own, seconds of import), nor rewrite asserts.
        *_plugins(extra),
        # Nor collect garbage five times over at the end (pytest's unraisable-exception cleanup): a catalog
        # run's heap holds every exchange, so that alone is most of a second.
        "-p",
        "no:unraisableexception",
        "--assert=plain",
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
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.pop(KEY_ENV, None)
    if key:
        env[KEY_ENV] = key
    # stderr is read here: a configuration error is the child's one line, not "pytest could not run".
    if capture and fork and _fork_server() is not None:
        returncode, stderr = _forked(cmd[3:], env, out_dir / OUTPUT_FILE)
    else:
        returncode, stderr = _spawned(cmd, env, out_dir / OUTPUT_FILE if capture else None)
    usage = child_usage_error(returncode, stderr)
    if usage is not None:
        raise ConfigError(usage)
    if stderr:
        sys.stderr.write(stderr)
        sys.stderr.flush()
    if returncode in (3, 4) or not results.is_file():
        tail = " … ".join(line.strip() for line in stderr.strip().splitlines()[-3:])
        raise HarnessFailure(
            f"pytest could not run the {run.profile} catalog (exit {returncode})"
            + (f": {tail}" if tail else "")
        )
    document: dict[str, Any] = json.loads(results.read_text(encoding="utf-8"))
    document["target"]["description"] = run.description
    results.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return document


# What the fork server imports before it forks a child: what every child would import, and the rule files parsed.
_PRELOAD = ["pytest", "_pytest.junitxml", "_pytest.terminal", "_pytest.python", "_pytest.runner",
            "harness.plugin", "harness.plugin.configure", "harness.plugin.items", "harness.engine.run",
            "harness.engine.target", "harness.checks", "harness.surfaces", "harness.replay.client",
            "harness.orchestrate.warm"]  # fmt: skip
_SERVER: list[Any] = []
_SERVER_LOCK = threading.Lock()


def _fork_server() -> Any:
    """The multiprocessing context whose children fork from the warm server; None where there is none."""
    if (
        os.environ.get("GC_CHILD_PROCESS") == "spawn"
        or "forkserver" not in multiprocessing.get_all_start_methods()
    ):
        return None
    with _SERVER_LOCK:
        if not _SERVER:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(_PRELOAD)
            _SERVER.append(context)
        return _SERVER[0]


def start_fork_server() -> None:
    """Start the fork server now, in the background (its imports and parsing, about a second and a half, then
    overlap whatever the caller does next, e.g. starting gateways); a child started before it is up waits."""
    context = _fork_server()
    if context is None:
        return
    from multiprocessing import forkserver

    threading.Thread(target=forkserver.ensure_running, daemon=True).start()


def stop_fork_server() -> None:
    """Stop the fork server (if one was started) and wait for it, so that its children's CPU time is this process's
    children's, as a spawned child's is (multiprocessing does not stop it at exit; `_stop` is its own way)."""
    with _SERVER_LOCK:
        if not _SERVER:
            return
        _SERVER.clear()
    from multiprocessing import forkserver

    stop = getattr(getattr(forkserver, "_forkserver", None), "_stop", None)
    if stop is not None:
        with contextlib.suppress(OSError, ChildProcessError):
            stop()


def _spawned(cmd: Sequence[str], env: dict[str, str], output: Path | None) -> tuple[int, str]:
    """`cmd` in a process group of its own (a terminal's Ctrl-C reaches certify only, which stops it so that it
    writes what it judged: harness/orchestrate/processes.py); (exit code, what it wrote on stderr)."""
    with contextlib.ExitStack() as stack:
        stdout = stack.enter_context(output.open("wb")) if output is not None else None
        proc = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=subprocess.PIPE, start_new_session=True)
        with processes.tracked(proc.pid):
            try:
                _out, err = proc.communicate()
            except KeyboardInterrupt:  # this thread was interrupted: the child writes its results and ends
                processes.stop_children()
                _out, err = proc.communicate()
                raise
    return proc.returncode, err.decode("utf-8", errors="replace")


def _forked(args: Sequence[str], env: dict[str, str], output: Path) -> tuple[int, str]:
    """pytest with `args` in a child of the fork server (in a process group of its own), its environment `env`, its
    stdout in `output`; (exit code, what it wrote on stderr)."""
    with tempfile.NamedTemporaryFile(prefix="gc-child-", suffix=".err", delete=False) as err:
        errors = Path(err.name)
    try:
        child = _fork_server().Process(target=_child_pytest, args=(list(args), env, str(output), str(errors)))
        child.start()
        with processes.tracked(child.pid) if child.pid else contextlib.nullcontext():
            child.join()
        code = child.exitcode if child.exitcode is not None else 1
        return (code if code >= 0 else 128 - code), errors.read_text(encoding="utf-8", errors="replace")
    finally:
        errors.unlink(missing_ok=True)


def _child_pytest(args: list[str], env: dict[str, str], output: str, errors: str) -> None:
    """In the forked child: the environment replaced, stdout and stderr to their files, `python -m pytest` run,
    its exit code the process's. A process group of its own: a terminal's Ctrl-C is certify's to relay."""
    os.setsid()
    os.environ.clear()
    os.environ.update(env)
    for fd, path in ((1, output), (2, errors)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    code = 1
    sys.argv = ["pytest", *args]
    try:
        # `python -m pytest` as the spawned child runs it, in this (warm) process
        runpy.run_module("pytest", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _plugins(extra: Sequence[str]) -> list[str]:
    workers = "-n" in extra or any(a.startswith(("--numprocesses", "-n")) for a in extra)
    return ["-p", "harness.plugin", *(["-p", "xdist.plugin"] if workers else [])]


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
    from harness.spec.loader import available_profiles
    from harness.spec.selection import rule_files

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
    from harness.paths import specs_root
    from harness.spec.collection import check_catalog
    from harness.spec.selection import profile_rules, select_profiles

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
    from harness.replay.server import ReplayServer

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

"""serve-upstream is quiet by default (issue 48: it logged every control call at INFO): warnings only; `--log-level
info` a line per request the gateway sends, never the harness's control calls; SIGTERM stops it as Ctrl-C does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from harness.orchestrate.embedded import free_port


def _serve(*extra: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "serve-upstream", "--port", str(port), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=os.environ.copy(),
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60  # a bound against a hang, not an assert on time
    while True:
        try:
            httpx.get(url + "/__gc/health", timeout=1)
            return proc, url
        except httpx.HTTPError:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.1)


@pytest.mark.e2e
@pytest.mark.parametrize("level", ["warning", "info"])
def test_serve_upstream_logs_no_control_call(level: str) -> None:
    proc, url = _serve("--log-level", level)
    httpx.post(url + "/__gc/register", json={"marker": "[gc:x/y#abcdef]", "rule": "x/y", "upstream": {}})
    httpx.get(url + "/__gc/calls", params={"marker": "[gc:x/y#abcdef]"})
    httpx.post(url + "/v1/messages", json={"model": "m", "max_tokens": 1, "messages": []})
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    assert "/__gc/" not in out.replace(f"{url}/__gc/files", "")  # the banner names the image fixtures
    assert ("POST /v1/messages" in out) == (level == "info")
    assert "replay upstream stopped." in out

"""Server and browser helpers shared by the browser tests, scripts/load_test.py and bench/bench_app.py.

No pytest here: the load test and the benchmark import it as `tests.e2e.harness`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
# Streamlit marks its root with the script state (verified in Streamlit 1.67's frontend bundle):
# "initial" before the first run, then "running" / "rerunRequested" / "notRunning".
APP = "[data-testid='stApp']"
APP_DONE = f"{APP}[data-test-script-state='notRunning']"
APP_BUSY = f"{APP}[data-test-script-state='running'], {APP}[data-test-script-state='rerunRequested']"
EXCEPTION = "[data-testid='stException']"


def chromium_path() -> str | None:
    """Debian's chromium, or only $ALBERT_EXPLORER_CHROMIUM when set; never a browser Playwright downloaded."""
    override = os.environ.get("ALBERT_EXPLORER_CHROMIUM")
    candidates = [override] if override else ["/usr/bin/chromium", shutil.which("chromium")]
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def launch_kwargs() -> dict:
    path = chromium_path()
    if path is None:
        raise FileNotFoundError("no Chromium found (apt-get install chromium)")
    return {"executable_path": path, "headless": True, "args": CHROMIUM_ARGS}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, log: Path, extra_env: dict[str, str] | None = None) -> subprocess.Popen:
    """`streamlit run app.py` from the repo root, so the project's .streamlit/config.toml applies."""
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
           "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(extra_env or {})}
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        return subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env)


def wait_healthy(url: str, proc: subprocess.Popen | None = None, timeout: float = 60.0) -> float:
    """Poll /_stcore/health until it answers ok; returns the seconds it took."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                if resp.status == 200 and resp.read().strip() == b"ok":
                    return time.perf_counter() - start
        except OSError:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"{url}/_stcore/health did not answer ok within {timeout:.0f} s")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def fetch_metrics(url: str) -> str:
    """Streamlit's Prometheus-style /_stcore/metrics text."""
    with urllib.request.urlopen(f"{url}/_stcore/metrics", timeout=10) as resp:
        return resp.read().decode("utf-8", "replace")

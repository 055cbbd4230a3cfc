"""Load test (not part of CI): N concurrent headless Chromium sessions against one Streamlit server.

Each session opens the Explorer, moves the hidden-size slider with the keyboard, switches to Scaling
through the sidebar navigation and moves the layers slider there: 20 moves in all, each waiting for
its rerun to finish. Every session starts from a different H, so the server sees many distinct
configs (caches must stay bounded). Reports errors, p50/p95 rerun latency, the server's peak RSS
(psutil, whole process tree) and Streamlit's /_stcore/metrics.

    .venv/bin/python scripts/load_test.py                  # 10 sessions, own server
    .venv/bin/python scripts/load_test.py --sessions 3 --moves 10 --json /tmp/load.json
    .venv/bin/python scripts/load_test.py --url http://127.0.0.1:8501   # an already running server

Goals (issue 5): 0 errors, p95 < 1 s, RSS < 1.5 GB at 10 sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.harness import (  # noqa: E402 - after the path set-up above
    APP_DONE,
    ARTIFACTS,
    EXCEPTION,
    fetch_metrics,
    free_port,
    launch_kwargs,
    start_server,
    stop_server,
    wait_healthy,
)

GOALS = {"errors": 0, "p95_s": 1.0, "rss_bytes": 1.5e9}

# A rerun is over when the URL (rewritten by the server during the run) holds the slider's new value
# and the app's script state is back to notRunning. Watching for a "running" state instead misses
# runs on a busy machine: React may commit "running" and "notRunning" in one frame.
RUN_DONE = (
    "([key, value]) => new URLSearchParams(location.search).get(key) === value && document.querySelector("
    "\"[data-testid='stApp']\")?.getAttribute('data-test-script-state') === 'notRunning'"
)


class RssSampler:
    """Peak resident memory of a process and its children, sampled in a background thread."""

    def __init__(self, pid: int, every: float = 0.25):
        import psutil

        self.proc, self.every = psutil.Process(pid), every
        self.peak = self.last = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def cpu_seconds(self) -> float:
        """User + system CPU time the server has used so far."""
        t = self.proc.cpu_times()
        return t.user + t.system

    def sample(self) -> int:
        import psutil

        total = 0
        for p in [self.proc, *self.proc.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):  # a child that just exited
                total += p.memory_info().rss
        self.last = total
        self.peak = max(self.peak, total)
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.sample()
            except Exception:  # noqa: BLE001 - the server went away: stop sampling
                return
            self._stop.wait(self.every)

    def __enter__(self) -> RssSampler:
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


async def _rerun(page, key: str, press: str, timeout_ms: int) -> float:
    """Press an arrow key on a sidebar slider; seconds until the rerun it triggered has finished."""
    thumb = page.locator(f".st-key-cfg_{key} input[type='range']")
    t0 = time.perf_counter()
    await thumb.press(press)
    value = await thumb.input_value()
    await page.wait_for_function(RUN_DONE, arg=[key, value], timeout=timeout_ms, polling=20)
    return time.perf_counter() - t0


async def session(browser, url: str, index: int, moves: int, timeout_ms: int, out: dict) -> None:
    """One visitor: the Explorer (H slider) then Scaling (L slider), half of the moves each."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    out.update(latencies=[], errors=[], by_page={"explorer": [], "scaling": []})
    try:
        page = await context.new_page()
        page.set_default_timeout(timeout_ms)
        hidden = 256 + 64 * index  # a different start per session: distinct configs on the server
        await page.goto(f"{url}/?H={hidden}&heads={hidden // 64}&I={4 * hidden}")
        await page.wait_for_selector(APP_DONE, state="attached")
        if not moves:  # warm-up visit: let any follow-up run finish too
            await page.wait_for_timeout(2_000)
            await page.wait_for_selector(APP_DONE, state="attached")
        plan = [("H", "ArrowRight")] * (moves // 2) + [("L", "ArrowRight")] * (moves - moves // 2)
        for i, (key, press) in enumerate(plan):
            if i == moves // 2:  # same session, other page: click the sidebar navigation
                await page.get_by_role("link", name="Scaling").click()
                await page.wait_for_url(re.compile(r"/scaling"))
                await page.wait_for_selector(APP_DONE, state="attached")
            try:
                seconds = await _rerun(page, key, press, timeout_ms)
                out["latencies"].append(seconds)
                out["by_page"]["explorer" if i < moves // 2 else "scaling"].append(seconds)
            except Exception as exc:  # noqa: BLE001 - counted and reported, the session goes on
                out["errors"].append(f"move {i} ({key}, URL {page.url.split('?')[-1][:40]}...): "
                                     f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
            if await page.locator(EXCEPTION).count():
                out["errors"].append(f"move {i}: exception box on the page")
    except Exception as exc:  # noqa: BLE001
        out["errors"].append(f"session: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
    finally:
        await context.close()


async def drive(url: str, sessions: int, moves: int, time_limit: float, timeout_ms: int) -> list[dict]:
    from playwright.async_api import async_playwright

    results: list[dict] = [{} for _ in range(sessions)]
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(**launch_kwargs())
        try:
            tasks = [asyncio.create_task(session(browser, url, i, moves, timeout_ms, results[i]))
                     for i in range(sessions)]
            done, pending = await asyncio.wait(tasks, timeout=time_limit)
            for task in pending:
                task.cancel()
            for i, task in enumerate(tasks):
                if task in pending:
                    results[i].setdefault("errors", []).append(f"session did not finish within {time_limit:.0f} s")
        finally:
            await browser.close()
    return results


def percentile(values: list[float], q: float) -> float:
    xs = sorted(values)
    pos = (len(xs) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def metrics_summary(text: str) -> dict[str, float]:
    """Totals per metric family of Streamlit's /_stcore/metrics (e.g. cache_memory_bytes, session counts)."""
    totals: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, _, value = line.rpartition(" ")
        family = name.split("{", 1)[0]
        try:
            totals[family] = totals.get(family, 0.0) + float(value)
        except ValueError:
            continue
    return totals


def run_load(sessions: int = 10, moves: int = 20, url: str | None = None, time_limit: float = 600.0,
             timeout_ms: int = 60_000, warmup: bool = True) -> dict[str, Any]:
    """Run the load test; with ``url=None`` it starts (and stops) its own server and samples its RSS.

    ``warmup`` first opens one page and lets it settle, so the figures are of a running server: the
    sessions of a freshly started one get a second, automatic run right after their first (Streamlit
    leaving its legacy `pages/` mode), and a slider moved in between loses the sidebar's state."""
    proc = None
    if url is None:
        port = free_port()
        proc = start_server(port, ARTIFACTS / "load-test-server.log")
        url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        if warmup:
            asyncio.run(drive(url, 1, 0, time_limit, timeout_ms))
        sampler = RssSampler(proc.pid) if proc else None
        t0 = time.perf_counter()
        if sampler:
            with sampler:
                idle, cpu0 = sampler.sample(), sampler.cpu_seconds()
                results = asyncio.run(drive(url, sessions, moves, time_limit, timeout_ms))
                after, cpu = sampler.sample(), sampler.cpu_seconds() - cpu0
        else:
            idle = after = cpu = 0
            results = asyncio.run(drive(url, sessions, moves, time_limit, timeout_ms))
        wall = time.perf_counter() - t0
        metrics = metrics_summary(fetch_metrics(url))
    finally:
        if proc:
            stop_server(proc)
    latencies = [x for r in results for x in r.get("latencies", [])]
    errors = [e for r in results for e in r.get("errors", [])]
    report: dict[str, Any] = {
        "sessions": sessions,
        "moves_per_session": moves,
        "warmup": warmup,
        "reruns_measured": len(latencies),
        "errors": len(errors),
        "error_samples": errors[:10],
        "wall_s": round(wall, 1),
        "p50_s": round(statistics.median(latencies), 3) if latencies else None,
        "p95_s": round(percentile(latencies, 0.95), 3) if latencies else None,
        "max_s": round(max(latencies), 3) if latencies else None,
        "by_page": {
            name: {"p50_s": round(statistics.median(xs), 3), "p95_s": round(percentile(xs, 0.95), 3), "n": len(xs)}
            for name in ("explorer", "scaling")
            if (xs := [x for r in results for x in r.get("by_page", {}).get(name, [])])
        },
        # Server CPU per rerun: its share of a rerun, free of the browsers' rendering (which shares
        # this machine's cores with the server here, unlike a real deployment). Includes page loads.
        "server_cpu_s_per_rerun": round(cpu / len(latencies), 3) if latencies and sampler else None,
        "server_rss_idle_bytes": idle,
        "server_rss_peak_bytes": sampler.peak if sampler else None,
        "server_rss_after_bytes": after,
        "metrics": metrics,
    }
    report["goals_met"] = {
        "errors": report["errors"] <= GOALS["errors"],
        "p95 < 1 s": report["p95_s"] is not None and report["p95_s"] < GOALS["p95_s"],
        "RSS < 1.5 GB": report["server_rss_peak_bytes"] is None or report["server_rss_peak_bytes"] < GOALS["rss_bytes"],
    }
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--moves", type=int, default=20, help="slider moves per session (default 20)")
    parser.add_argument("--url", help="test a running server instead of starting one (no RSS then)")
    parser.add_argument("--time-limit", type=float, default=600.0, help="seconds for the whole run")
    parser.add_argument("--json", type=Path, help="also write the report here")
    parser.add_argument("--no-warmup", action="store_true", help="no settling visit before the sessions")
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.moves < 2:
        parser.error("--sessions must be >= 1 and --moves >= 2")
    report = run_load(args.sessions, args.moves, args.url, args.time_limit, warmup=not args.no_warmup)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0 if all(report["goals_met"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Server CPU per rerun of the Live model page when a visitor changes only the text, the layer or the head.

Run: `python -m bench.bench_live_rerun` (prints the dict) or `python -m bench live_rerun`. A real
`streamlit run app.py` (the repo's config) serves one Chromium page of /live_model (ALBERT-base, the
default sidebar); each change is made in the browser and the server process's CPU time (user + system,
all its threads, from /proc) is read before the change and after the page is idle again. CPU time, not
wall time: the browser shares the machine, the server's own work is what each visitor costs.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from bench.common import figure, summary

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.e2e import harness as h  # noqa: E402

GOAL_MS = 100.0
N = 10
TEXTS = [f"Sentence number {i} about shared layers.\nAnd a second segment, variant {i}." for i in range(N)]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _settle(page, quiet_s: float = 0.4) -> None:
    """Wait until the script has finished and stayed finished for ``quiet_s`` (reruns are quick)."""
    page.wait_for_timeout(150)
    while True:
        page.wait_for_selector(h.APP_DONE, timeout=120_000)
        page.wait_for_timeout(int(quiet_s * 1000))
        if page.locator(h.APP_DONE).count():
            return


def _measure(page, pid: int, action) -> float:
    c0 = cpu_seconds(pid)
    action()
    _settle(page)
    return (cpu_seconds(pid) - c0) * 1e3


def run() -> dict:
    from playwright.sync_api import sync_playwright

    if not Path("/proc/self/stat").exists():
        raise RuntimeError("needs Linux /proc to read the server's CPU time")
    port = h.free_port()
    url = f"http://127.0.0.1:{port}"
    proc = h.start_server(port, h.ARTIFACTS / "bench_live_rerun.log")
    results: dict[str, list[float]] = {"text": [], "layer": [], "head": [], "idle": []}
    try:
        h.wait_healthy(url, proc)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(**h.launch_kwargs())
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{url}/live_model", timeout=120_000)
            page.wait_for_selector(".st-key-live_layer input", timeout=180_000)
            _settle(page, 1.0)
            text = page.locator(".st-key-live_text textarea")
            layer = page.locator(".st-key-live_layer input")
            head = page.locator(".st-key-live_head input")

            def set_text(t: str):
                return lambda: (text.fill(t), text.press("Control+Enter"))

            def set_number(box, v: int):
                return lambda: (box.fill(str(v)), box.press("Enter"))

            _measure(page, proc.pid, set_text("warm-up text\nsegment B"))  # first run of each path
            for i in range(N):  # interleaved: text, layer, head, idle
                results["text"].append(_measure(page, proc.pid, set_text(TEXTS[i])))
                results["layer"].append(_measure(page, proc.pid, set_number(layer, 2 + i % 10)))
                results["head"].append(_measure(page, proc.pid, set_number(head, 2 + i % 10)))
                results["idle"].append(_measure(page, proc.pid, lambda: None))
            if page.locator(h.EXCEPTION).count():
                raise RuntimeError("the page shows an exception")
            browser.close()
    finally:
        h.stop_server(proc)
    idle = summary(results["idle"])
    figures = [
        figure(f"Live model rerun after a {what} change, server CPU", summary(results[what]), "ms",
               goal=f"<= {GOAL_MS:.0f}", met=summary(results[what])["median"] <= GOAL_MS,
               reason=f"median of {N}; includes {idle['median']:.0f} ms measured over an idle window of the "
               "same length")
        for what in ("text", "layer", "head")
    ]
    return {
        "title": "Live model reruns (server CPU)",
        "figures": figures,
        "notes": ["A real server and one Chromium page; server CPU time (all threads) from /proc between the "
                  "change and an idle page, in clock ticks of 10 ms. A text change runs one forward pass of "
                  "ALBERT-base on the new text (hidden states and attention maps kept) and redraws its section; "
                  "a layer or head change only redraws the attention map (st.fragment).",
                  "Before the fragments, the cached models and the frozen import heap (this bench on the same "
                  "machine, medians of 10): text change 1,520 ms (the page re-ran 6 timed passes and the "
                  "saved-activation pass), layer change 225 ms, head change 245 ms; with fragments but without "
                  "the frozen heap 245 / 180 / 180 ms: a full garbage collection over torch's, transformers' "
                  "and plotly's objects (~0.14 s each) ran on most reruns."],
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))

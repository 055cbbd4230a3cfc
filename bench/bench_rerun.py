"""Server-side rerun of the Explorer page after a sidebar slider change, through Streamlit's AppTest.

Run: `python -m bench.bench_rerun` (prints the dict) or through `python -m bench`. AppTest runs the whole
script (sidebar, page, figure building, protobuf serialisation) in-process, so this is the server's share
of a slider drag; the browser's rendering is not included.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from bench.common import figure, summary

GOAL_MS = 150.0  # issue 4
APP = str(Path(__file__).resolve().parents[1] / "app.py")
N = 20


def _keep_compiled_scripts() -> None:
    """AppTest compiles app.py and the page afresh on every run (a new ScriptCache each time, ~0.1 s);
    a real server compiles them once. Share one cache so the figure is the server's rerun."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test

    shared = ScriptCache()
    app_test.ScriptCache = lambda: shared


def _rerun_ms(at, key: str, values: list[int], clock=time.perf_counter) -> list[float]:
    """Milliseconds of ``clock`` (wall by default; `time.process_time` for this process's CPU time: the
    script runs in this process, and CPU time is steadier on a shared host) per rerun after the slider
    ``key`` is set to each value."""
    out = []
    for v in values:
        at.slider(key=key).set_value(v)
        t0 = clock()
        at.run()
        out.append((clock() - t0) * 1e3)
        assert not at.exception, at.exception
    return out


PAGES = ("ui/explorer/page.py", "ui/scaling/page.py", "ui/live/page.py", "ui/compare/page.py", "ui/paper/page.py")


def per_page(n: int = 10) -> dict[str, dict[str, float]]:
    """CPU time of every page's rerun after an L slider change between two depths (cached config)."""
    from streamlit.testing.v1 import AppTest

    _keep_compiled_scripts()
    out = {}
    for page in PAGES:
        at = AppTest.from_file(APP, default_timeout=120)
        at.run()
        at.switch_page(page).run()
        _rerun_ms(at, "cfg_L", [12, 24])  # warm the caches of both depths
        out[page] = summary(_rerun_ms(at, "cfg_L", [12, 24] * (n // 2), time.process_time))
    return out


def run() -> dict:
    from streamlit.testing.v1 import AppTest

    _keep_compiled_scripts()
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    # New hidden sizes each time: nothing is cached, every number and figure is recomputed.
    fresh = summary(_rerun_ms(at, "cfg_H", [64 * k for k in range(2, 2 + N)]))
    # Back and forth between two depths: the report comes from st.cache_data.
    cached = summary(_rerun_ms(at, "cfg_L", [12, 24] * (N // 2)))
    pages = per_page()
    return {
        "title": "App rerun",
        "figures": [
            figure("Explorer rerun after an H slider change (new config)", fresh, "ms", goal=f"< {GOAL_MS:.0f}",
                   met=fresh["median"] < GOAL_MS, reason=f"AppTest, median of {N} new hidden sizes"),
            figure("Explorer rerun after an L slider change (cached config)", cached, "ms",
                   goal=f"< {GOAL_MS:.0f}", met=cached["median"] < GOAL_MS,
                   reason=f"AppTest, median of {N} alternating depths"),
            *(figure(f"{page} rerun after an L slider change (cached config), CPU time", stats, "ms",
                     goal=f"< {GOAL_MS:.0f}", met=stats["median"] < GOAL_MS,
                     reason="AppTest, median of 10 alternating depths") for page, stats in pages.items()),
        ],
        "notes": ["Includes AppTest's own script-runner start-up and element-tree parsing, so the real "
                  "server's rerun is a little faster. Compiled scripts are kept between runs, as a server does."],
    }


if __name__ == "__main__":
    import sys

    print(json.dumps(per_page() if "--pages" in sys.argv else run(), indent=2))

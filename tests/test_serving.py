"""How the server is set up to serve many visitors on a small machine (the figures are in docs/benchmarks.md)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(sys.platform == "win32", reason="uvloop has no Windows build; Streamlit uses asyncio's loop")
def test_streamlit_serves_on_uvloop() -> None:
    """Streamlit's bootstrap serves on uvloop when it can import it (10-15 % less server CPU a rerun measured:
    asyncio's loop writes to its self-pipe for every message the script thread hands over, uvloop coalesces
    the wake-ups). This is the function the bootstrap asks; it says None when uvloop is missing."""
    from streamlit.web.bootstrap import _get_uvloop_loop_factory

    factory = _get_uvloop_loop_factory()
    assert factory is not None
    loop = factory()
    try:
        assert type(loop).__module__.startswith("uvloop")
    finally:
        loop.close()


def test_uvloop_is_pinned_with_the_app() -> None:
    """The same pin in requirements.txt (the server's install) and the package's app extra."""
    reqs = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    pin = next(r for r in reqs if r.startswith("uvloop=="))
    app = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["app"]
    assert any(a.replace("'", '"') == pin for a in app), (pin, app)


def test_the_server_settings_keep_reruns_cheap() -> None:
    """Change detector: pins the .streamlit/config.toml values the rerun measurements were taken with."""
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["runner"]["postScriptGC"] is False  # a full gc.collect(2) after every run walked every cached figure
    assert cfg["runner"]["fastReruns"] is True  # a dragged slider interrupts the stale run
    assert cfg["server"]["fileWatcherType"] == "none"


def test_no_script_that_runs_on_every_rerun_decorates_a_cached_function():
    """app.py and the page scripts run top to bottom on every rerun, so a `@st.cache_resource` / `@st.cache_data`
    in them is applied again each time, and Streamlit's decorator reads the function's source to key it
    (~0.5 ms a function). The pages' caches live in modules beside them, decorated once at import."""
    import ast

    offenders = []
    scripts = (ROOT / "app.py", *sorted((ROOT / "ui").glob("*/page.py")))
    from tests.test_page_matrix import app_pages

    assert len(scripts) == 1 + len(app_pages())  # app.py and every page script app.py registers
    for path in scripts:
        for node in ast.walk(ast.parse(path.read_text())):
            decorators = getattr(node, "decorator_list", [])
            for dec in decorators:
                text = ast.unparse(dec)
                if text.startswith(("st.cache_resource", "st.cache_data", "streamlit.cache")):
                    offenders.append(f"{path.name}:{node.lineno} {node.name}")
    assert offenders == []


def test_plotly_writes_chart_json_with_orjson():
    """st.plotly_chart has Plotly write each chart's JSON on every rerun; Plotly's "auto" engine uses orjson when it
    is installed (0.18 -> 0.03 ms for the architecture diagram, measured on a 2-vCPU Intel Xeon). The same pin in
    requirements.txt and the app extra."""
    import plotly.io as pio
    from plotly.io._json import get_module

    assert pio.json.config.default_engine == "auto" and get_module("orjson", should_load=True) is not None
    reqs = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    pin = next(r for r in reqs if r.startswith("orjson=="))
    assert pin in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["app"]

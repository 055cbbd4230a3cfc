"""The shared fixtures (`app`: an AppTest of the Streamlit app; `runs_dir`: an isolated lab run cache), and
one torch thread per test process under xdist. Shared non-fixture helpers live in tests/helpers/."""

from __future__ import annotations

import os
from pathlib import Path

if os.environ.get("PYTEST_XDIST_WORKER"):
    # `make test` runs two test processes (pytest-xdist) on a 2-core machine: one torch thread each, set
    # before torch is imported (two threads per process would wait for each other's cores; the tests
    # that need a thread count set their own)
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


@pytest.fixture
def app():
    """Factory: `app(query={...}, page="ui/compare/page.py")` -> an AppTest of app.py that has run once."""

    def make(query: dict[str, str] | None = None, page: str | None = None) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=60)
        at.query_params.update(query or {})
        at.run()
        if page:
            at.switch_page(page).run()
        return at

    return make


@pytest.fixture
def runs_dir(tmp_path, monkeypatch):
    """Every lab test gets its own run cache folder."""
    folder = tmp_path / "runs"
    monkeypatch.setenv("ALBERT_EXPLORER_RUNS_DIR", str(folder))
    return folder

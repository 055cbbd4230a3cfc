"""Shared AppTest fixture for the Streamlit app tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


@pytest.fixture
def app():
    """Factory: `app(query={...}, page="pages/compare.py")` -> an AppTest of app.py that has run once.

    (AppTest re-detects the legacy `pages/` folder mode before every run; app.py leaves it at once with
    `ui.pages_mode.leave`, exactly as on a fresh server.)
    """

    def make(query: dict[str, str] | None = None, page: str | None = None) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=60)
        at.query_params.update(query or {})
        at.run()
        if page:
            at.switch_page(page).run()
        return at

    return make

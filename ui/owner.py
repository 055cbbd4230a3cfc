"""Who owns a visitor's work (a lab run, a post-hoc job): one random secret per browser, kept in a cookie, so that
a visitor's runs stay theirs across reloads and tabs (Cancel works in any of them) while a link opened in another
browser shows them read-only. Shared by the Train page and the Live model page.

The secret never goes into a URL. The browser sends the cookie with the request that opens a session; the
server reads it with `st.context.cookies` and checks its form before using it (anything else is ignored, and
the session gets a fresh secret). A browser without a valid cookie (a first visit) gets a fresh secret, which
`keep()` writes into the cookie with a few lines of JavaScript. Session state only caches the secret for the
session. One secret per browser also means two tabs are one owner to the worker: Cancel in either withdraws
that owner, and the run stops unless another visitor asked for it too.

A browser that refuses the cookie (or a page embedded in another site's frame, where such cookies are
blocked) keeps a secret per session: its runs are its own until the tab is reloaded.
"""

from __future__ import annotations

import re
import secrets

import streamlit as st

COOKIE = "albert_lab_owner"
SECRET_BYTES = 32  # 256 random bits: 43 characters of the URL-safe base64 alphabet
_SECRET = re.compile(r"[A-Za-z0-9_-]{43}")
MAX_AGE_S = 400 * 24 * 3600  # the longest lifetime browsers keep a cookie (Chrome caps it at 400 days)
_KEY = "_lab_owner"  # session state: this session's copy of the browser's secret
_BOX = "lab_owner_cookie"  # the hidden container of the script that writes the cookie


def new_secret() -> str:
    return secrets.token_urlsafe(SECRET_BYTES)


def parse_secret(value: object) -> str | None:
    """``value`` if it has the form of a secret made by `new_secret` (43 URL-safe base64 characters), else
    None: a cookie's value is whatever the browser sent, and only that form is ever used as an owner."""
    return value if isinstance(value, str) and _SECRET.fullmatch(value) else None


def request_cookies() -> dict[str, str]:
    """The cookies the browser sent when it opened this session (empty outside a browser session)."""
    return st.context.cookies.to_dict()


def owner() -> str:
    """This browser's owner secret: the cookie's when it holds a valid one, else a fresh one for this
    session (which `keep` writes into the cookie)."""
    ss = st.session_state
    if _KEY not in ss:
        ss[_KEY] = parse_secret(request_cookies().get(COOKIE)) or new_secret()
    return ss[_KEY]


def cookie_script(secret: str) -> str:
    """The HTML that stores ``secret`` in the cookie (site-wide, same-site requests only, 400 days; Secure
    over https) and hides its own container. ValueError for anything that is not a secret."""
    if parse_secret(secret) is None:
        raise ValueError("the owner secret must be 43 URL-safe base64 characters")
    attributes = f"Path=/; Max-Age={MAX_AGE_S}; SameSite=Strict"
    return (f"<style>.st-key-{_BOX} {{display: none;}}</style>"
            f"<script>document.cookie = \"{COOKIE}={secret}; {attributes}\" + "
            "(location.protocol === \"https:\" ? \"; Secure\" : \"\");</script>")


def keep() -> None:
    """Write this session's secret into the browser's cookie unless the browser already sent it. Call once
    per page run: the script is an invisible element, run once by the browser."""
    me = owner()
    if request_cookies().get(COOKIE) == me:
        return
    with st.container(key=_BOX):
        st.html(cookie_script(me), unsafe_allow_javascript=True)

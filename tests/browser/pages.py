"""A real headless browser for the pages karmactl writes: Debian's chromium driven by Playwright
(the ``playwright`` package from PyPI, never ``playwright install``: the browser is the system's).

:func:`browser` starts one; where chromium or Playwright is missing (:func:`unavailable_reason`) the tests skip with one
line, unless ``KARMACTL_REQUIRE_BROWSER=1`` (``.ci/run`` sets it after installing both), where they
fail instead.
"""
from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def unavailable_reason() -> str | None:
    """Why no browser can run here, or None."""
    if not (os.access(CHROMIUM, os.X_OK) or shutil.which("chromium")):
        return "chromium is not installed (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    return None


def executable() -> str:
    return CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")


@contextmanager
def browser():
    """A started chromium (Playwright's Browser), closed afterwards."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=executable(), args=ARGS)
        try:
            yield b
        finally:
            b.close()


def screenshot(page_path: Path, out: Path, width: int = 1200) -> None:
    """A full-page PNG of the HTML file ``page_path`` at ``width`` CSS pixels."""
    with browser() as b:
        page = b.new_page(viewport={"width": width, "height": 800})
        page.goto(page_path.resolve().as_uri())
        page.screenshot(path=str(out), full_page=True)

"""Headless Chromium through Selenium for the tests that open generated HTML.

Debian packages `chromium` and `chromium-driver` (.ci/run installs them). Under
CI=true a missing browser fails the test; elsewhere it skips.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
)


def find_chromium() -> tuple[str, str] | None:
    """(browser, chromedriver) paths, or None when either is missing."""
    names = ("chromium", "chromium-browser", "google-chrome")
    browser = next((shutil.which(n) for n in names if shutil.which(n)), None)
    driver = shutil.which("chromedriver") or (
        "/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None
    )
    return (browser, driver) if browser and driver else None


@contextmanager
def headless_chromium(profile_dir: Path) -> Iterator[object]:
    """A Selenium Chrome driver on a fresh profile; alerts are left open for the test."""
    found = find_chromium()
    if found is None:
        message = "Chromium / chromedriver not installed (apt-get install chromium chromium-driver)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}: .ci/run installs them, so CI must have them")
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary, driver_path = found
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile_dir}")
    options.add_argument("--window-size=1280,1000")
    # Leave a JavaScript alert open (rather than dismissing it silently) so
    # that the test can see it.
    options.set_capability("unhandledPromptBehavior", "ignore")
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    try:
        driver.set_page_load_timeout(60)
        yield driver
    finally:
        driver.quit()

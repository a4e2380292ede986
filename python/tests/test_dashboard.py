"""The static dashboard renders in a real browser and shows the marts' numbers.

Builds reports/dashboard.html from the `clean_sample` warehouse (on a copy, so
the bridge statistics written for the page do not touch the shared fixture),
with real gate results and the bridge PNG, then opens it in headless
Chromium through Selenium and chromedriver: no console error, no request
leaving the file, every chart drawn, key numbers equal to the marts. Saves a
full-page screenshot under the test's tmp dir and, when LARA_SCREENSHOT_DIR
is set, there too.

Skips only when Chromium or chromedriver is not installed (Debian packages
`chromium`, `chromium-driver`).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
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


def _chromium() -> tuple[str, str] | None:
    browser = next(
        (
            shutil.which(n)
            for n in ("chromium", "chromium-browser", "google-chrome")
            if shutil.which(n)
        ),
        None,
    )
    driver = shutil.which("chromedriver") or (
        "/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None
    )
    return (browser, driver) if browser and driver else None


@pytest.fixture(scope="module")
def dashboard(clean_sample, tmp_path_factory) -> Path:
    from lara.bridge import run_bridge_statistics
    from lara.gate.runner import run_gate
    from lara.report import build_dashboard

    root = tmp_path_factory.mktemp("dashboard")
    warehouse = root / "lara.duckdb"
    shutil.copy(clean_sample.warehouse, warehouse)
    run_bridge_statistics(warehouse, resamples=50, seed=0, plot_dir=root)
    gate = run_gate(clean_sample.raw_path, root / "gate", data_docs=False)
    return build_dashboard(
        warehouse, root / "dashboard.html", gate.results_path, root / "bridge_ctu_vs_sru.png"
    )


@pytest.fixture(scope="module")
def browser(dashboard, tmp_path_factory):
    found = _chromium()
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
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.add_argument("--window-size=1280,1000")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    try:
        driver.set_page_load_timeout(60)
        driver.get(dashboard.resolve().as_uri())
        yield driver
    finally:
        driver.quit()


def test_the_page_is_self_contained(dashboard):
    html = dashboard.read_text()
    assert "<script" not in html.lower()
    external = re.findall(r"""(?:src|href)\s*=\s*["'](?:https?:)?//""", html, re.IGNORECASE)
    assert not external, "the dashboard must not reference anything on the network"
    assert "@import" not in html and "url(http" not in html
    assert 'src="data:image/png;base64,' in html


def test_renders_without_console_errors_or_network(browser):
    assert browser.title.startswith("lara")
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert not errors, errors
    urls = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            params = message["params"]
            # Requests made by the dashboard (not by the browser's own start page).
            if params.get("documentURL", "").startswith("file:"):
                urls.append(params["request"]["url"])
    assert urls, "no request of the page was logged"
    leaving = [u for u in urls if not u.startswith(("file:", "data:"))]
    assert not leaving, leaving


def test_charts_are_drawn(browser):
    from selenium.webdriver.common.by import By

    charts = browser.find_elements(By.CSS_SELECTOR, "svg.chart")
    assert len(charts) >= 8
    for chart in charts:
        size = chart.size
        assert size["width"] > 100 and size["height"] > 40, size
        assert chart.find_elements(By.TAG_NAME, "title")
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.scatter circle.pt.hi")) > 10
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.chart rect.bar")) > 30
    sections = {s.get_attribute("id") for s in browser.find_elements(By.CSS_SELECTOR, "section")}
    assert {"tier0", "tiers", "diagnosis", "naive", "effective", "quality", "bridge"} <= sections
    # Every chart section states its definition (numerator / denominator).
    assert len(browser.find_elements(By.CSS_SELECTOR, "section .def")) >= 7


def _number(browser, metric: str, where: str):
    from selenium.webdriver.common.by import By

    found = browser.find_elements(
        By.CSS_SELECTOR, f'[data-metric="{metric}"][data-filter="{where}"]'
    )
    assert found, f"no {metric} [{where}] on the page"
    return found[0]


def _close(element, expected: float) -> None:
    value = float(element.get_attribute("data-value"))
    assert math.isclose(value, expected, rel_tol=1e-12, abs_tol=1e-12)
    assert element.text == f"{expected * 100:.1f}%"


def test_numbers_match_the_marts(browser, clean_sample):
    (gpr, orf) = clean_sample.query(
        "select genuine_positive_rate, observable_failure_rate from marts.agg_tier2_usage "
        "where grouping_level = 'overall'"
    )[0]
    _close(_number(browser, "agg_tier2_usage.genuine_positive_rate", "retrieval_role=all"), gpr)
    _close(_number(browser, "agg_tier2_usage.observable_failure_rate", "retrieval_role=all"), orf)

    for role, rate in clean_sample.query(
        "select retrieval_role, completion_rate from marts.agg_tier3_completion "
        "where grouping_level = 'role' and completion_rate is not null"
    ):
        _close(
            _number(browser, "agg_tier3_completion.completion_rate", f"retrieval_role={role}"), rate
        )
    (trigger,) = clean_sample.query(
        "select trigger_rate from marts.agg_tier0_routing where grouping_level = 'overall'"
    )[0]
    _close(_number(browser, "agg_tier0_routing.trigger_rate", "surface=all"), trigger)
    naive, corrected = clean_sample.query(
        "select abandonment_rate_naive, abandonment_rate_lineage_corrected "
        "from marts.agg_abandonment where is_period_total and surface = 'assistant'"
    )[0]
    _close(_number(browser, "agg_abandonment.abandonment_rate_naive", "surface=assistant"), naive)
    _close(
        _number(browser, "agg_abandonment.abandonment_rate_lineage_corrected", "surface=assistant"),
        corrected,
    )
    (masked,) = clean_sample.query(
        "select masked_retrieval_failure_rate from marts.agg_tier_diagnosis "
        "where grouping_level = 'overall'"
    )[0]
    _close(
        _number(browser, "agg_tier_diagnosis.masked_retrieval_failure_rate", "retrieval_role=all"),
        masked,
    )


def test_diagnosis_matrix_adds_up(browser, clean_sample):
    from selenium.webdriver.common.by import By

    cells = browser.find_elements(
        By.CSS_SELECTOR, '[data-metric="fct_retrievals.tier_diagnosis_share"]'
    )
    assert len(cells) == 6
    shares = [float(c.get_attribute("data-value") or 0) for c in cells]
    assert math.isclose(sum(shares), 1.0, abs_tol=1e-9)
    (labelled,) = clean_sample.query(
        "select labelled_retrieval_count from marts.agg_tier_diagnosis "
        "where grouping_level = 'overall'"
    )[0]
    shown = _number(browser, "agg_tier_diagnosis.labelled_retrieval_count", "retrieval_role=all")
    assert int(float(shown.get_attribute("data-value"))) == labelled


def test_gate_verdict_is_shown(browser):
    verdict = _number(browser, "gate.verdict", "")
    assert verdict.get_attribute("data-value") in ("passed", "warnings", "failed")


def test_screenshot(browser, tmp_path):
    height = browser.execute_script("return document.documentElement.scrollHeight")
    assert height > 2000
    browser.set_window_size(1280, min(int(height) + 40, 16000))
    paths = [tmp_path / "dashboard.png"]
    if os.environ.get("LARA_SCREENSHOT_DIR"):
        target = Path(os.environ["LARA_SCREENSHOT_DIR"])
        target.mkdir(parents=True, exist_ok=True)
        paths.append(target / "dashboard.png")
    for path in paths:
        assert browser.save_screenshot(str(path))
        assert path.stat().st_size > 50_000

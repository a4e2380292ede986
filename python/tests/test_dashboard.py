"""The static dashboard renders in a real browser and shows the marts' numbers.

Builds reports/dashboard.html from the `clean_sample` warehouse (on a copy, so
the bridge statistics written for the page do not touch the shared fixture),
with real gate results and the bridge PNG, then opens it in headless
Chromium through Selenium and chromedriver: no console error, no request
leaving the file, every chart drawn, key numbers (and their recomputed 95%
intervals) equal to the marts, the surface and role filters change every
number to what the mart says for that filter, no sideways scrolling at
1280 px, hostile values from the logs stay text, and a trace-only build
(prompts and retrievals only) says which inputs are missing. Saves a
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
from html import unescape
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


def _driver(tmp_path_factory):
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
    driver.set_page_load_timeout(60)
    return driver


@pytest.fixture(scope="module")
def browser(dashboard, tmp_path_factory):
    driver = _driver(tmp_path_factory)
    try:
        driver.get(dashboard.resolve().as_uri())
        yield driver
    finally:
        driver.quit()


def _click(browser, dim: str, value: str) -> None:
    from selenium.webdriver.common.by import By

    chip = browser.find_element(By.CSS_SELECTOR, f'button[data-dim="{dim}"][data-value="{value}"]')
    chip.click()
    assert chip.get_attribute("aria-pressed") == "true"


@pytest.fixture()
def unfiltered(browser):
    """Every test starts and ends on 'all surfaces, all roles'."""
    _click(browser, "surface", "all")
    _click(browser, "role", "all")
    yield browser
    _click(browser, "surface", "all")
    _click(browser, "role", "all")


def test_the_page_is_self_contained(dashboard):
    html = dashboard.read_text()
    external = re.findall(r"""(?:src|href)\s*=\s*["'](?:https?:)?//""", html, re.IGNORECASE)
    assert not external, "the dashboard must not reference anything on the network"
    assert "@import" not in html and "url(http" not in html
    assert 'src="data:image/png;base64,' in html
    # One inline script, allowed by its hash; the policy forbids every request.
    found = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert found
    policy = unescape(found.group(1))
    assert policy.startswith("default-src 'none';")
    assert "connect-src" not in policy and "http" not in policy
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.DOTALL)
    assert [attrs for attrs, _ in scripts] == [' type="application/json" id="lara-data"', ""]
    payload = scripts[0][1]
    assert "</" not in payload and "<!--" not in payload and "<" not in payload
    assert json.loads(payload)["tables"]["retrieval"]["surface"]


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


def test_charts_are_drawn(unfiltered):
    from selenium.webdriver.common.by import By

    browser = unfiltered
    charts = browser.find_elements(By.CSS_SELECTOR, "svg.chart")
    assert len(charts) >= 16
    for chart in charts:
        size = chart.size
        assert size["width"] > 100 and size["height"] > 40, size
        assert chart.find_elements(By.TAG_NAME, "title")
    trends = browser.find_elements(By.CSS_SELECTOR, "#trends figure.trend svg.chart")
    assert len(trends) == 9
    # Lines with interval bands, one point per day.
    assert len(browser.find_elements(By.CSS_SELECTOR, "#trends polygon.band")) >= 9
    assert len(browser.find_elements(By.CSS_SELECTOR, "#trends polyline.line")) >= 9
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.scatter circle.pt.hi")) > 10
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.chart rect.bar")) > 30
    sections = {s.get_attribute("id") for s in browser.find_elements(By.CSS_SELECTOR, "section")}
    assert {
        "trends",
        "tier0",
        "tiers",
        "weighted",
        "diagnosis",
        "naive",
        "effective",
        "costs",
        "quality",
        "bridge",
    } <= sections
    # Every chart section states its definition (numerator / denominator).
    assert len(browser.find_elements(By.CSS_SELECTOR, "section .def")) >= 10


def _number(browser, metric: str, where: str):
    from selenium.webdriver.common.by import By

    found = browser.find_elements(
        By.CSS_SELECTOR, f'[data-metric="{metric}"][data-filter="{where}"]'
    )
    assert found, f"no {metric} [{where}] on the page"
    return found[0]


def _close(element, expected: float, percent: bool = True) -> None:
    value = float(element.get_attribute("data-value"))
    assert math.isclose(value, expected, rel_tol=1e-12, abs_tol=1e-12), (value, expected)
    if percent:
        # The text is the value in percent, one decimal.
        assert element.text.endswith("%")
        assert abs(float(element.text.rstrip("%")) - expected * 100) <= 0.05 + 1e-9


def _interval(element, low: float | None, high: float | None) -> None:
    """The page's recomputed interval equals the mart's."""
    for attribute, expected in (("data-ci-low", low), ("data-ci-high", high)):
        got = element.get_attribute(attribute)
        if expected is None:
            assert got is None
        else:
            assert math.isclose(float(got), expected, rel_tol=1e-9, abs_tol=1e-12), attribute


ALL = "surface=all;retrieval_role=all"


def test_numbers_match_the_marts(unfiltered, clean_sample):
    browser = unfiltered
    (gpr, orf) = clean_sample.query(
        "select genuine_positive_rate, observable_failure_rate from marts.agg_tier2_usage "
        "where grouping_level = 'overall'"
    )[0]
    _close(_number(browser, "agg_tier2_usage.genuine_positive_rate", ALL), gpr)
    _close(_number(browser, "agg_tier2_usage.observable_failure_rate", ALL), orf)
    # metrics v2: agent consumption confirmed (over ACR retrievals), per role
    for role, rate in clean_sample.query(
        "select retrieval_role, agent_consumption_confirmed_rate from marts.agg_tier2_usage "
        "where grouping_level = 'role' and agent_consumption_confirmed_rate is not null"
    ):
        _close(
            _number(
                browser,
                "agg_tier2_usage.agent_consumption_confirmed_rate",
                f"surface=all;retrieval_role={role}",
            ),
            rate,
        )

    for role, rate in clean_sample.query(
        "select retrieval_role, completion_rate from marts.agg_tier3_completion "
        "where grouping_level = 'role' and completion_rate is not null"
    ):
        _close(
            _number(
                browser,
                "agg_tier3_completion.completion_rate",
                f"surface=all;retrieval_role={role}",
            ),
            rate,
        )
    for role, rate in clean_sample.query(
        "select retrieval_role, goal_rate from marts.agg_tier3_completion "
        "where grouping_level = 'role' and goal_rate is not null"
    ):
        _close(
            _number(
                browser, "agg_tier3_completion.goal_rate", f"surface=all;retrieval_role={role}"
            ),
            rate,
        )
    (trigger,) = clean_sample.query(
        "select trigger_rate from marts.agg_tier0_routing where grouping_level = 'overall'"
    )[0]
    _close(_number(browser, "agg_tier0_routing.trigger_rate", "surface=all"), trigger)
    # metrics v2: the missed-retrieval estimate, rough beside labelled
    rough, labelled = clean_sample.query(
        "select rough_missed_retrieval_share_estimate, missed_retrieval_prompt_share "
        "from marts.agg_tier0_missed_retrieval where is_period_total and surface = 'all'"
    )[0]
    _close(
        _number(
            browser,
            "agg_tier0_missed_retrieval.rough_missed_retrieval_share_estimate",
            "surface=all",
        ),
        rough,
    )
    _close(
        _number(browser, "agg_tier0_missed_retrieval.missed_retrieval_prompt_share", "surface=all"),
        labelled,
    )
    for role, rate in clean_sample.query(
        "select retrieval_role, reretrieval_rate from marts.agg_reretrieval "
        "where grouping_level = 'role' and reretrieval_rate is not null"
    ):
        _close(
            _number(
                browser, "agg_reretrieval.reretrieval_rate", f"surface=all;retrieval_role={role}"
            ),
            rate,
        )
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
    _close(_number(browser, "agg_tier_diagnosis.masked_retrieval_failure_rate", ALL), masked)
    # Weighted Tier 1 beside the unweighted mean, as agg_tier1_weighted says.
    weighted, unweighted = clean_sample.query(
        "select ndcg_at_k_weighted_mean, ndcg_at_k_mean from marts.agg_tier1_weighted "
        "where grouping_level = 'overall'"
    )[0]
    _close(_number(browser, "agg_tier1_weighted.ndcg_at_k_mean", ALL), unweighted, False)
    shown = _number(browser, "agg_tier1_weighted.ndcg_at_k_weighted_mean", ALL)
    if weighted is None:
        assert shown.get_attribute("data-value") == ""
    else:
        _close(shown, weighted, False)
    # Stage latency per stage, for every surface.
    for stage, latency in clean_sample.query(
        "select stage, mean_latency_ms from marts.agg_stage_costs "
        "where is_period_total and surface = 'all'"
    ):
        element = _number(browser, "agg_stage_costs.mean_latency_ms", f"surface=all;stage={stage}")
        _close(element, latency, False)


def test_intervals_are_recomputed_as_the_marts_compute_them(unfiltered, clean_sample):
    browser = unfiltered
    row = clean_sample.query(
        "select genuine_positive_rate_ci_low, genuine_positive_rate_ci_high "
        "from marts.agg_tier2_usage where grouping_level = 'overall'"
    )[0]
    _interval(_number(browser, "agg_tier2_usage.genuine_positive_rate", ALL), *row)
    row = clean_sample.query(
        "select ndcg_at_k_mean_ci_low, ndcg_at_k_mean_ci_high "
        "from marts.agg_tier1_quality where grouping_level = 'overall'"
    )[0]
    _interval(_number(browser, "agg_tier1_quality.ndcg_at_k_mean", ALL), *row)
    row = clean_sample.query(
        "select trigger_rate_ci_low, trigger_rate_ci_high "
        "from marts.agg_tier0_routing where grouping_level = 'overall'"
    )[0]
    _interval(_number(browser, "agg_tier0_routing.trigger_rate", "surface=all"), *row)
    for role, low, high in clean_sample.query(
        "select retrieval_role, completion_rate_ci_low, completion_rate_ci_high "
        "from marts.agg_tier3_completion where grouping_level = 'role'"
    ):
        where = f"surface=all;retrieval_role={role}"
        _interval(_number(browser, "agg_tier3_completion.completion_rate", where), low, high)


def test_a_filter_changes_every_number_to_what_the_mart_says(unfiltered, clean_sample):
    browser = unfiltered
    overall = float(
        _number(browser, "agg_tier2_usage.genuine_positive_rate", ALL).get_attribute("data-value")
    )
    surface, gpr, low, high = clean_sample.query(
        "select surface, genuine_positive_rate, genuine_positive_rate_ci_low, "
        "genuine_positive_rate_ci_high from marts.agg_tier2_usage "
        "where grouping_level = 'surface' and surface = 'chat'"
    )[0]
    assert not math.isclose(gpr, overall), "pick a surface whose rate differs"
    _click(browser, "surface", surface)
    where = f"surface={surface};retrieval_role=all"
    card = _number(browser, "agg_tier2_usage.genuine_positive_rate", where)
    _close(card, gpr)
    _interval(card, low, high)
    assert not browser.find_elements(
        "css selector",
        f'[data-metric="agg_tier2_usage.genuine_positive_rate"][data-filter="{ALL}"]',
    ), "the unfiltered number is still shown"
    (trigger,) = clean_sample.query(
        "select trigger_rate from marts.agg_tier0_routing "
        "where grouping_level = 'surface' and surface = ?",
        [surface],
    )[0]
    _close(_number(browser, "agg_tier0_routing.trigger_rate", f"surface={surface}"), trigger)
    # The daily trend of the filtered surface: one point per day of the mart.
    days = clean_sample.query(
        "select strftime(retrieval_date, '%Y-%m-%d'), genuine_positive_rate "
        "from marts.agg_tier2_usage where grouping_level = 'day x surface' and surface = ? "
        "and genuine_positive_rate is not null order by 1",
        [surface],
    )
    assert len(days) >= 3
    for day, rate in days:
        point = _number(browser, "agg_tier2_usage.genuine_positive_rate", f"{where};day={day}")
        _close(point, rate, False)
    # Then a role within the surface: the mart's 'surface x role' row.
    role, completion, ndcg = clean_sample.query(
        "select t3.retrieval_role, t3.completion_rate, t1.ndcg_at_k_mean "
        "from marts.agg_tier3_completion as t3 inner join marts.agg_tier1_quality as t1 "
        "on t1.grouping_level = t3.grouping_level and t1.surface = t3.surface "
        "and t1.retrieval_role = t3.retrieval_role "
        "where t3.grouping_level = 'surface x role' and t3.surface = ? "
        "order by t3.in_scope_retrieval_count desc limit 1",
        [surface],
    )[0]
    _click(browser, "role", role)
    where = f"surface={surface};retrieval_role={role}"
    _close(_number(browser, "agg_tier3_completion.completion_rate", where), completion)
    if ndcg is not None:
        _close(_number(browser, "agg_tier1_quality.ndcg_at_k_mean", where), ndcg, False)
    # Marts without a role dimension say so instead of pretending to filter.
    note = browser.find_element("css selector", "#tier0 .filter-note")
    assert "Not split by retrieval role" in note.text


def test_no_sideways_scrolling_at_1280_px(unfiltered, clean_sample):
    browser = unfiltered
    browser.set_window_size(1280, 1000)
    overflowing = """
        return [document.documentElement.scrollWidth, window.innerWidth,
            Array.from(document.querySelectorAll('.table-wrap, section, figure'))
                .filter(e => e.scrollWidth > e.clientWidth + 1)
                .map(e => (e.closest('section') || e).id + ':' + e.className)];
    """
    states = [("surface", "all"), ("surface", "template_search"), ("role", "find")]
    for dim, value in states:
        _click(browser, dim, value)
        page_width, window_width, wide = browser.execute_script(overflowing)
        assert window_width == 1280
        assert page_width <= window_width, (dim, value, page_width)
        assert not wide, (dim, value, wide)


def test_diagnosis_matrix_adds_up(unfiltered, clean_sample):
    from selenium.webdriver.common.by import By

    browser = unfiltered
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
    shown = _number(browser, "agg_tier_diagnosis.labelled_retrieval_count", ALL)
    assert int(float(shown.get_attribute("data-value"))) == labelled


def test_gate_verdict_is_shown(browser):
    verdict = _number(browser, "gate.verdict", "")
    assert verdict.get_attribute("data-value") in ("passed", "warnings", "failed")


def test_gate_panel_shows_every_day(browser, clean_sample, dashboard):
    days = sorted(
        p.name.removeprefix("dt=")
        for p in (clean_sample.raw_path / "actions").iterdir()
        if p.name.startswith("dt=")
    )
    shown = browser.find_elements("css selector", '[data-metric="gate.lineage_coverage"]')
    assert [e.get_attribute("data-filter").removeprefix("partition=") for e in shown] == days
    gate = json.loads((dashboard.parent / "gate" / "gate_results.json").read_text())
    validated = gate["lineage_coverage"]
    assert 0 < len(validated) < len(days)
    for row in validated:  # the gate's own numbers for the days it validated
        element = _number(browser, "gate.lineage_coverage", f"partition={row['partition']}")
        if row["lineage_coverage"] is None:
            assert element.get_attribute("data-value") == ""
        else:
            _close(element, row["lineage_coverage"])


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


HOSTILE_ROLE = "</script><script>window.pwned = 1</script><!--"
HOSTILE_SURFACE = "chat' onmouseover='window.pwned = 2"
HOSTILE_TEXT = '"><img src=x onerror="window.pwned = 3">'


def test_hostile_values_from_the_logs_stay_text(clean_sample, tmp_path, tmp_path_factory):
    """Surface, role, definition and stage names come from the logs: the page
    shows them as text, in chips, tables and charts, and runs none of them."""
    from selenium.webdriver.common.by import By

    from lara.report.dashboard import render_dashboard
    from lara.report.data import load_dashboard_data

    data = load_dashboard_data(clean_sample.warehouse)
    swaps = {
        "role": ("find", HOSTILE_ROLE),
        "surface": ("chat", HOSTILE_SURFACE),
        "definition_name": (None, HOSTILE_TEXT),
        "stage": ("retrieval", HOSTILE_TEXT),
        "attribution_method": ("direct", HOSTILE_TEXT),
    }
    for table in data.tables.values():
        for column, (old, new) in swaps.items():
            if column in table:
                first = old if old is not None else table[column][0]
                table[column] = [new if value == first else value for value in table[column]]
    html = render_dashboard(data)
    # The JSON block cannot end its <script> element: no "<" at all inside it.
    payload = html.split('<script type="application/json" id="lara-data">', 1)[1]
    assert "<" not in payload.split("</script>", 1)[0]
    page = tmp_path / "hostile.html"
    page.write_text(html, encoding="utf-8")
    driver = _driver(tmp_path_factory)
    try:
        driver.get(page.resolve().as_uri())
        for dim, value in (("surface", HOSTILE_SURFACE), ("role", HOSTILE_ROLE)):
            chip = next(
                c
                for c in driver.find_elements(By.CSS_SELECTOR, f'button[data-dim="{dim}"]')
                if c.get_attribute("data-value") == value
            )
            assert chip.text == value
            chip.click()
            assert chip.get_attribute("data-value") == value
        body = driver.find_element(By.TAG_NAME, "body").text
        assert HOSTILE_ROLE in body and HOSTILE_SURFACE in body
        _click(driver, "surface", "all")
        _click(driver, "role", "all")
        body = driver.find_element(By.TAG_NAME, "body").text
        assert HOSTILE_TEXT in body
        assert driver.execute_script("return window.pwned") is None
        assert not driver.find_elements(By.CSS_SELECTOR, "img[src='x']")
        assert len(driver.find_elements(By.TAG_NAME, "script")) == 2
        assert not driver.find_elements(By.CSS_SELECTOR, "[onmouseover], [onerror]")
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def trace_only(tmp_path_factory) -> Path:
    """A build on prompts and retrievals only (what a trace export gives), and its
    dashboard after the statistics steps of `lara run`."""
    from lara.bridge import run_bridge_statistics
    from lara.dbt import run_dbt
    from lara.generate import GeneratorConfig, generate
    from lara.ingest.writer import write_empty_parquet
    from lara.production_bridge import run_production_bridge_statistics
    from lara.report import build_dashboard

    root = tmp_path_factory.mktemp("trace_only")
    raw = root / "raw"
    generate(GeneratorConfig(sessions=150, days=2, seed=5), raw, progress=False)
    for folder in raw.iterdir():
        if folder.is_dir() and folder.name not in ("prompts", "retrievals"):
            shutil.rmtree(folder)
    # The contract requires an actions table: an empty typed file, as `lara
    # ingest` writes when the traces hold no tool spans.
    first_day = sorted(p.name for p in (raw / "prompts").iterdir())[0].removeprefix("dt=")
    write_empty_parquet("actions", raw, first_day)
    warehouse = root / "lara.duckdb"
    # Unit tests do not depend on the data: the other builds of the suite run them.
    result = run_dbt(
        ["build", "--exclude-resource-type", "unit_test"],
        raw,
        warehouse,
        extra_env={"DBT_TARGET_PATH": str(root / "target"), "DBT_LOG_PATH": str(root / "logs")},
        capture=True,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
    assert run_bridge_statistics(warehouse, resamples=20, seed=0, plot_dir=root)["status"] in (
        "ok",
        "no_replay_data",
    )
    run_production_bridge_statistics(warehouse, resamples=20, seed=0)
    from lara.export import export_marts

    assert export_marts(warehouse, root / "exports")
    return build_dashboard(warehouse, root / "dashboard.html", None, None)


def test_trace_only_logs_say_which_inputs_are_missing(trace_only, tmp_path_factory):
    from selenium.webdriver.common.by import By

    driver = _driver(tmp_path_factory)
    try:
        driver.get(trace_only.resolve().as_uri())
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
        assert not errors, errors
        assert driver.execute_script("return document.documentElement.dataset.rendered")

        def absent(metric: str, where: str) -> str:
            element = _number(driver, metric, where)
            assert element.get_attribute("data-value") == ""
            return element.get_attribute("data-absent")

        assert absent("agg_abandonment.abandonment_rate_naive", "surface=assistant") == (
            "no outcome events logged"
        )
        assert absent("agg_tier3_completion.completion_rate", ALL) == "no outcome events logged"
        assert absent("agg_tier1_quality.ndcg_at_k_mean", ALL) == "no relevance labels logged"
        assert absent("agg_tier2_usage.genuine_positive_rate", ALL) == "no actions logged"
        assert absent("bridge_statistics.bridge_share", "") == "no replay experiments logged"
        # What the logs do support is still shown.
        trigger = _number(driver, "agg_tier0_routing.trigger_rate", "surface=all")
        assert 0 < float(trigger.get_attribute("data-value")) <= 1
        text = driver.find_element(By.TAG_NAME, "body").text
        for message in (
            "no outcome events logged",
            "no relevance labels logged",
            "no replay experiments logged",
        ):
            assert message in text
        # Nowhere a 100% or 0% abandonment, completion or use rate.
        for metric in (
            "agg_abandonment.abandonment_rate_naive",
            "agg_abandonment.abandonment_rate_lineage_corrected",
            "agg_tier3_completion.completion_rate",
            "agg_tier2_usage.genuine_positive_rate",
            "agg_tier2_usage.unobserved_rate",
        ):
            shown = driver.find_elements(By.CSS_SELECTOR, f'[data-metric="{metric}"]')
            assert shown
            assert all(e.get_attribute("data-value") == "" for e in shown), metric
    finally:
        driver.quit()

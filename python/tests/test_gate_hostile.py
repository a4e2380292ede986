"""Hostile log values cannot run script in the gate's reports, nor leak user ids or text.

Every string field of every contract table that can reach the gate gets
payloads (script tags, attribute break-outs, quotes, backslashes, unicode):
ids, enum values, timestamps, numbers, lists, free text, file names and
`dt=` folder names (one folder is `dt="><img src=x onerror=alert(1)>`). Then
`lara check` runs, and every HTML page it writes is opened in headless
Chromium: no payload may open an alert or set the global `__lara_xss`. The
payloads must still be visible as text (so the test is not vacuous), and no
raw user id or free text may appear in any file the gate writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from browser import headless_chromium
from lara.contract import Column, Table, load_contract

NEWEST = "2026-08-03"

# Every payload either calls alert() or sets window.__lara_xss when it runs.
PAYLOADS = (
    "<script>window.__lara_xss=1;alert(1)</script>",
    '"><img src=x onerror="window.__lara_xss=2;alert(2)">',
    "'><svg onload=window.__lara_xss=3>",
    '\\"</script><script>window.__lara_xss=4</script>\\',
    '<iframe srcdoc="<script>parent.__lara_xss=5</script>"></iframe>',
    "ünï\u2028cödé \u202e<b onmouseover=alert(6)>ß</b> \"'`${alert(7)}`",
)
# Payloads without whitespace: they pass the id format check, so they reach the
# pages as the keys of rows that fail other checks (duplicates, lineage).
ID_PAYLOADS = (
    "<script>window.__lara_xss=21</script>",
    '"><svg/onload=window.__lara_xss=22>',
    "'\\\"><img/src/onerror=alert(23)>",
)
FILE_NAMES = (
    '"><img src=x onerror=alert(11)>.jsonl',
    "'><svg onload=window.__lara_xss=12>.jsonl",
    "<b onclick=alert(13)>dup.jsonl",
)
FOLDERS = ('dt="><img src=x onerror=alert(1)>', "dt='><svg onload=window.__lara_xss=31>")
SECRET_USER = "user secret 4711"  # raw user id: whitespace fails id_format
SECRET_TEXT = "free text secret 4712"


def _valid(column: Column, payload: str) -> object:
    """A value that passes the row checks of `column` (ids and free text: `payload`)."""
    kind = column.lara_type
    if kind in ("id", "string"):
        return payload
    if kind == "enum":
        return column.values[0]
    if kind == "timestamp":
        return f"{NEWEST}T10:00:00Z"
    if kind == "boolean":
        return True
    if kind == "integer":
        return 1
    if kind == "float":
        return 0.5
    if kind == "string_list":
        return [payload]
    raise ValueError(kind)


def _other(column: Column, value: object) -> object | None:
    """Another valid value of `column` (a conflicting version), or None."""
    kind = column.lara_type
    if kind == "enum" and len(column.values) > 1:
        return column.values[-1]
    if kind == "timestamp":
        return f"{NEWEST}T11:00:00Z"
    if kind == "string":
        return f"{value}_v2"
    return None


def _hostile_rows(table: Table) -> list[dict]:
    """Every column holds a payload (a list column alternates list / plain text)."""
    rows = []
    for index, payload in enumerate(PAYLOADS):
        row: dict[str, object] = {}
        for column in table.columns:
            if column.lara_type == "string_list" and index % 2:
                row[column.name] = [payload, " "]
            else:
                row[column.name] = payload
        if "user_id" in row:
            row["user_id"] = f"{SECRET_USER} {payload}"
        rows.append(row)
    return rows


def _valid_rows(table: Table) -> tuple[list[dict], list[dict]]:
    """Rows that pass the row checks, keyed by payloads; and conflicting versions."""
    rows, conflicts = [], []
    for payload in ID_PAYLOADS:
        row = {c.name: _valid(c, payload) for c in table.columns}
        if "user_id" in row:
            row["user_id"] = "usersecret4713"
        rows.append(row)
        for column in table.columns:
            changed = _other(column, row[column.name])
            if table.key and column.name not in table.key and changed is not None:
                conflicts.append({**row, column.name: changed})
                break
    return rows, conflicts


def _write(path: Path, rows: list[dict], extra_lines: tuple[str, ...] = ()) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(row, ensure_ascii=False) for row in rows] + list(extra_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def plant_payloads(raw: Path) -> None:
    """Payloads in every string field of every contract table, file and folder names."""
    broken_line = (
        '{"prompt_id": "p_broken", "user_id": "'
        + SECRET_USER
        + '", "prompt_text": "'
        + SECRET_TEXT
        + '", "surface": "<script>window.__lara_xss=41</script>'
    )
    for table in load_contract().values():
        newest = raw / table.name / f"dt={NEWEST}"
        valid, conflicts = _valid_rows(table)
        extra = (broken_line,) if table.name == "prompts" else ()
        _write(newest / FILE_NAMES[0], _hostile_rows(table), extra)
        _write(newest / FILE_NAMES[1], valid + conflicts)
        _write(newest / FILE_NAMES[2], valid)  # exact re-deliveries
    contract = load_contract()
    _write(raw / "retrievals" / FOLDERS[0] / "part-0.jsonl", _valid_rows(contract["retrievals"])[0])
    _write(raw / "prompts" / FOLDERS[1] / FILE_NAMES[0], _hostile_rows(contract["prompts"]))


@pytest.fixture(scope="module")
def gate_pages(small_raw_sample, tmp_path_factory) -> tuple[int, Path]:
    """`lara check` (newest day; the odd folders are checked on every run) on the payloads."""
    from lara.cli import main

    raw = tmp_path_factory.mktemp("hostile") / "raw"
    shutil.copytree(small_raw_sample, raw)
    plant_payloads(raw)
    out = raw.parent / "reports" / "gate"
    code = main(["check", "--raw-path", str(raw), "--out", str(out), "--quiet"])
    return code, out


def _visit(driver, page: Path) -> tuple[list[str], object, str]:
    """Open `page`; the alerts it raised, the value of window.__lara_xss, its text."""
    from selenium.common.exceptions import (
        NoAlertPresentException,
        TimeoutException,
        UnexpectedAlertPresentException,
    )
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    alerts: list[str] = []
    try:
        driver.get(page.resolve().as_uri())
    except UnexpectedAlertPresentException as error:
        alerts.append(str(error.alert_text))
    try:  # onerror / onload handlers run just after the load
        WebDriverWait(driver, 0.5).until(expected_conditions.alert_is_present())
    except TimeoutException:
        pass
    while True:
        try:
            alert = driver.switch_to.alert
            alerts.append(alert.text)
            alert.accept()
        except NoAlertPresentException:
            break
    flag = driver.execute_script("return window.__lara_xss ?? null")
    text = driver.execute_script("return document.body ? document.body.innerText : ''")
    return alerts, flag, text


def test_no_payload_runs_in_any_gate_page(gate_pages, tmp_path_factory):
    code, out = gate_pages
    assert code == 2  # the payload rows fail the gate
    pages = sorted(out.rglob("*.html"))
    assert (out / "data_docs" / "index.html") in pages and len(pages) > 10
    ran, shown = {}, []
    with headless_chromium(tmp_path_factory.mktemp("chromium-hostile")) as driver:
        for page in pages:
            alerts, flag, text = _visit(driver, page)
            if alerts or flag is not None:
                ran[str(page.relative_to(out))] = f"{len(alerts)} alert(s), __lara_xss={flag}"
            shown.append(text)
    assert not ran, f"script ran in {len(ran)} page(s): {ran}"
    # Not vacuous: the payloads are in the pages, as text.
    text = "\n".join(shown)
    assert PAYLOADS[0] in text and ID_PAYLOADS[0] in text
    assert FOLDERS[0].removeprefix("dt=") in text
    assert FILE_NAMES[0] in text


def test_no_raw_user_id_or_free_text_in_any_gate_output(gate_pages):
    _, out = gate_pages
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.suffix == ".csv" for p in files) and any(p.suffix == ".json" for p in files)
    for path in files:
        content = path.read_text(encoding="utf-8", errors="replace")
        for secret in ("user secret", "usersecret", "free text secret"):
            assert secret not in content, f"{secret!r} in {path.relative_to(out)}"
    # The failing user ids are named by their salted hash (as in the marts).
    failing = (out / "failing_ids.csv").read_text(encoding="utf-8")
    salt = os.environ.get("LARA_USER_ID_SALT", "lara-sample-salt")
    hashed = hashlib.sha256(f"{salt}|{SECRET_USER} {PAYLOADS[0]}".encode()).hexdigest()
    assert hashed in failing


def test_file_names_are_not_read_as_globs(small_raw_sample, tmp_path):
    """`a*.jsonl` must not also read `ab.jsonl`, nor `c[x].jsonl` read `cx.jsonl` instead."""
    from lara.gate import run_gate

    raw = tmp_path / "raw"
    shutil.copytree(small_raw_sample, raw)
    day = raw / "retrievals" / f"dt={NEWEST}"
    baseline = run_gate(small_raw_sample, tmp_path / "before", data_docs=False)
    names = {"a*.jsonl": 3, "ab.jsonl": 2, "c[x].jsonl": 1, "cx.jsonl": 1, "q?.jsonl": 1}
    for name, rows in names.items():
        stem = "".join(ch for ch in name.removesuffix(".jsonl") if ch.isalnum())
        lines = [
            {
                "retrieval_id": f"r_glob_{stem}_{k}_{len(name)}",
                "prompt_id": f"p_glob_{k}",
                "session_guid": "s_glob",
                "ts": f"{NEWEST}T10:00:00Z",
                "retrieval_role": "find",
                "returned_asset_ids": ["a_1"],
            }
            for k in range(rows)
        ]
        _write(day / name, lines)
    result = run_gate(raw, tmp_path / "out", data_docs=False, tables=["retrievals"])

    def rows_checked(gate) -> int:
        (check,) = [
            c
            for c in gate.checks
            if c.table == "retrievals"
            and c.name == "id_format:retrieval_id"
            and c.partition == NEWEST
        ]
        return check.element_count

    assert rows_checked(result) == rows_checked(baseline) + sum(names.values())
    assert "exact_duplicate" not in result.failed_checks("retrievals")
    sources = pd.read_csv(result.failing_ids_path, dtype=str)["source"]
    for name in names:  # the ghost prompts name each file's own rows, by the real file name
        assert sources.str.startswith(f"retrievals/dt={NEWEST}/{name}:").sum() == names[name]

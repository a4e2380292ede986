"""The data-quality gate (lara.gate): suites, lineage checks, exit codes, offline Data Docs.

Samples come from the project's generator at small sizes (`lara.generate`,
300 sessions over 2 days); the lineage and file-level defects the generator
does not inject come from a small hand-written fixture. Each gate run is
shared by the tests that read it (module-scoped fixtures): GX validation and
Data Docs rendering dominate the time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from lara.contract import load_contract
from lara.gate import DEFECT_CHECKS, GateResult, add_gate_arguments, gate_main, run_gate
from lara.gate.config import default_config_path, load_config
from lara.gate.docs import external_urls, offline_html
from lara.gate.suites import render_snapshot, snapshot_dir
from lara.generate import GeneratorConfig, generate

STAGING_REASONS = {
    "json_parse_error",
    "invalid_partition",
    "missing_required",
    "empty_id",
    "invalid_timestamp",
    "invalid_type",
    "invalid_enum",
    "out_of_range",
    "invalid_list",
    "conflicting_duplicate",
}


def _generate(root: Path, bad_rows: bool) -> dict:
    config = GeneratorConfig(
        sessions=300, days=2, seed=3, fmt="mixed", gzip=True, bad_rows=bad_rows
    )
    return generate(config, root, progress=False)


def _failing(result: GateResult) -> pd.DataFrame:
    return pd.read_csv(result.failing_ids_path, dtype=str, keep_default_na=False)


def _run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    add_gate_arguments(parser)
    return gate_main(parser.parse_args(argv))


# --- shared runs ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def clean_sample(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("gate_clean") / "raw"
    _generate(root, bad_rows=False)
    return root


@pytest.fixture(scope="module")
def clean_run(clean_sample, tmp_path_factory) -> tuple[int, Path]:
    """The clean sample through the command line (newest day, Data Docs on)."""
    out = tmp_path_factory.mktemp("gate_clean_out")
    code = _run_cli(["--raw-path", str(clean_sample), "--out", str(out), "--quiet"])
    return code, out


@pytest.fixture(scope="module")
def bad_run(tmp_path_factory) -> tuple[dict, GateResult]:
    """The generator's --bad-rows sample, every partition, Data Docs on."""
    root = tmp_path_factory.mktemp("gate_bad") / "raw"
    manifest = _generate(root, bad_rows=True)
    out = tmp_path_factory.mktemp("gate_bad_out")
    return manifest, run_gate(root, out, all_days=True)


# --- configuration and suites ---------------------------------------------------------


def test_defect_kinds_map_to_checks():
    assert STAGING_REASONS <= set(DEFECT_CHECKS)
    config = load_config()
    for check in DEFECT_CHECKS.values():
        assert config.check(check).enabled


def test_suite_snapshots_match_the_contract_and_config():
    config = load_config()
    for table in load_contract().values():
        path = snapshot_dir() / f"lara_{table.name}.json"
        assert path.read_text() == render_snapshot(table, config), (
            f"{path} is stale: run `python -m lara.gate --write-suites`"
        )


def test_config_is_validated(tmp_path):
    document = yaml.safe_load(default_config_path().read_text())
    document["checks"]["json_parse"]["severity"] = "fatal"
    path = tmp_path / "gate.yml"
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(ValueError, match="severity"):
        load_config(path)
    document["checks"]["json_parse"]["severity"] = "error"
    document["checks"]["no_such_check"] = {"severity": "error"}
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(ValueError, match="unknown check"):
        load_config(path)


# --- a clean sample passes --------------------------------------------------------------


def test_clean_sample_passes(clean_run):
    code, out = clean_run
    results = json.loads((out / "gate_results.json").read_text())
    assert code == 0, [f["name"] for f in results["failures"]]
    assert results["verdict"] == "passed" and results["exit_code"] == 0
    assert results["selection"]["mode"] == "newest"
    assert results["summary"]["failed"] == 0 and results["summary"]["checks"] > 50
    tables = {c["table"] for c in results["checks"]}
    assert {"prompts", "retrievals", "actions"} <= tables
    coverage = results["lineage_coverage"]
    assert len(coverage) == 1 and 0.5 < coverage[0]["lineage_coverage"] <= 1.0
    assert len(pd.read_csv(out / "failing_ids.csv")) == 0


def test_data_docs_render_offline(clean_run, bad_run):
    _, out = clean_run
    for docs in (out / "data_docs", bad_run[1].data_docs_index.parent):
        pages = list(docs.rglob("*.html"))
        assert (docs / "index.html") in pages and len(pages) > 5
        assert external_urls(docs) == {}
        for page in pages:
            text = page.read_text()
            assert "http://" not in text and "https://" not in text, page
            assert "<style>" in text and "window.$ = window.jQuery" in text
    index = (bad_run[1].data_docs_index).read_text()
    assert "LARA data-quality gate" in index and "verdict-failed" in index


def test_offline_html_removes_every_internet_reference():
    page = (
        "<html><head><link rel='stylesheet' href='https://cdn.example/x.css'>"
        '<script src="https://cdn.example/x.js"></script></head><body>'
        '<img src="https://s3.example/logo.png"/> <a href="https://example.org/doc">docs</a>'
        '<form action="https://example.org/newsletter"><input></form>'
        '<div data-url="http://example.org/x">see http://example.org/y</div>'
        "<style>.logo { background: url('https://s3.example/logo.png') 0 0; }</style>"
        "</body></html>"
    )
    text = offline_html(page, "static/logo.png", "<style></style>")
    assert "http" not in text
    assert '<img src="static/logo.png"/>' in text and "docs" in text and "<a " not in text
    assert "background: none 0 0" in text


# --- every injected defect is caught by its own check ----------------------------------


def _expected_check(table: str, reason: str, column: str | None) -> str:
    check = DEFECT_CHECKS[reason]
    return f"{check}:{column}" if column else check


def test_every_generated_defect_is_reported_by_its_check(bad_run):
    manifest, result = bad_run
    failing = _failing(result)
    log = manifest["bad_rows"]
    contract = load_contract()
    assert log["defects"], "the generator injected no defects"
    seen_reasons = set()
    for table, reasons in log["defects"].items():
        key_ids = [c for c in contract[table].key if contract[table].column(c).lara_type == "id"]
        for reason, injected in reasons.items():
            seen_reasons.add(reason)
            for entry in injected["rows"]:
                column = entry.get("column") if reason != "json_parse_error" else None
                check = _expected_check(table, reason, column)
                hits = failing[(failing["table"] == table) & (failing["check"] == check)]
                assert len(hits), f"{table}: {reason} on {column} not reported as {check}"
                if entry.get("file"):
                    in_file = hits[hits["source"].str.startswith(entry["file"] + ":")]
                    assert len(in_file), f"{table}/{check}: nothing failing in {entry['file']}"
                    hits = in_file
                markers = [
                    entry["marker"][k]
                    for k in key_ids
                    if k in entry.get("marker", {}) and k != column and reason != "json_parse_error"
                ]
                for marker in markers:
                    assert hits["row_key"].str.split("|").map(lambda p, m=marker: m in p).any(), (
                        f"{table}/{check}: row {marker} not among the failing ids"
                    )
    assert seen_reasons >= {"json_parse_error", "missing_required", "empty_id", "invalid_enum"}
    failed = result.failed_checks()
    for table, duplicates in log["exact_duplicates"].items():
        assert "exact_duplicate" in result.failed_checks(table), table
        for entry in duplicates["rows"]:
            if entry.get("key"):
                rows = failing[
                    (failing["table"] == table) & (failing["check"] == "exact_duplicate")
                ]
                first = next(iter(entry["key"].values()))
                assert rows["row_key"].str.contains(first, regex=False).any(), entry
    for table, conflicts in log["conflicts"].items():
        check = "conflicting_duplicate:" + ",".join(contract[table].key)
        assert check in result.failed_checks(table), (table, sorted(failed))
        rows = failing[(failing["table"] == table) & (failing["check"] == check)]
        for entry in conflicts:
            first = next(iter(entry["key"].values()))
            assert (rows["row_key"].str.contains(str(first), regex=False)).sum() >= 2, entry


def test_bad_sample_fails_with_counted_traceable_rows(bad_run):
    _, result = bad_run
    assert result.verdict == "failed" and result.exit_code == 2
    results = json.loads(result.results_path.read_text())
    assert results["exit_code"] == 2 and results["selection"]["mode"] == "all"
    failing = _failing(result)
    assert results["summary"]["failing_rows"] == len(failing) > 0
    for failure in results["failures"]:
        if failure["unexpected_count"] is None:
            continue
        rows = failing[
            (failing["partition"] == failure["partition"])
            & (failing["table"] == failure["table"])
            & (failing["check"] == failure["name"])
        ]
        assert len(rows) == failure["unexpected_count"], failure["name"]
        assert 0 < len(failure["sample"]) <= 20
        assert all(
            item["_source"].startswith(failure["table"] + "/dt=") for item in failure["sample"]
        )
    validation = json.loads(Path(results["outputs"]["validations"][0]).read_text())
    assert validation["results"] and "statistics" in validation
    expectation = validation["results"][0]["expectation_config"]
    assert expectation["meta"]["lara_check"] and expectation["severity"] in ("critical", "warning")


# --- exit codes ---------------------------------------------------------------------------


def _newest_prompts_row_as_json(partition: Path) -> str:
    """One row of a prompts partition (Parquet or JSON Lines) as a JSON line."""
    source = sorted(p for p in partition.iterdir() if not p.name.startswith(("_", ".")))[0]
    con = duckdb.connect()
    if source.name.endswith(".parquet"):
        frame = con.execute(f"select * from read_parquet('{source}') limit 1").df()
        return frame.to_json(orient="records", lines=True, date_format="iso").strip()
    return con.execute(
        f"select line from read_csv('{source}', columns = {{'line': 'VARCHAR'}}, "
        "delim = chr(31), quote = '', escape = '', header = false, auto_detect = false) limit 1"
    ).fetchone()[0]


def test_a_warning_only_defect_exits_1(clean_sample, clean_run, tmp_path):
    """An exact re-delivery (severity warning) on a clean sample: warnings, exit 1."""
    raw = tmp_path / "raw"
    shutil.copytree(clean_sample, raw)
    newest = json.loads((clean_run[1] / "gate_results.json").read_text())["selection"]
    partition = raw / "prompts" / f"dt={newest['partitions'][0]}"
    line = _newest_prompts_row_as_json(partition)
    (partition / "redelivery.jsonl").write_text(line + "\n")
    code = _run_cli(["--raw-path", str(raw), "--out", str(tmp_path / "out"), "--no-docs"])
    results = json.loads((tmp_path / "out" / "gate_results.json").read_text())
    assert [f["name"] for f in results["failures"]] == ["exact_duplicate"]
    assert results["failures"][0]["severity"] == "warning"
    assert code == 1 and results["verdict"] == "warnings"


def test_the_three_exit_codes(clean_run, bad_run, tmp_path):
    assert clean_run[0] == 0
    assert bad_run[1].exit_code == 2
    # unknown day: the gate cannot run, which fails too
    assert _run_cli(["--raw-path", str(tmp_path), "--out", str(tmp_path / "o")]) == 2


# --- lineage integrity and file-level defects (hand-written fixture) ----------------------

DAY1, DAY2 = dt.date(2026, 8, 1), dt.date(2026, 8, 2)


def _ts(day: dt.date, seconds: int) -> str:
    moment = dt.datetime.combine(day, dt.time(), dt.UTC) + dt.timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _day_tables(day: dt.date, n: int) -> dict[str, pd.DataFrame]:
    """A consistent day: n prompts, one retrieval each, a place, an edit and an export."""
    d = day.strftime("%m%d")
    ids = range(n)
    prompt_ids = [f"p_{d}_{k}" for k in ids]
    retrieval_ids = [f"r_{d}_{k}" for k in ids]
    returned = [[f"a_{d}_{k}_{j}" for j in range(4)] for k in ids]
    prompts = pd.DataFrame(
        {
            "prompt_id": prompt_ids,
            "session_guid": [f"s_{d}_{k}" for k in ids],
            "user_id": "u_1",
            "surface": "chat",
            "ts": [_ts(day, 3600 + 60 * k) for k in ids],
        }
    )
    retrievals = pd.DataFrame(
        {
            "retrieval_id": retrieval_ids,
            "prompt_id": prompt_ids,
            "session_guid": prompts["session_guid"],
            "ts": [_ts(day, 3601 + 60 * k) for k in ids],
            "retrieval_role": "find",
            "returned_asset_ids": returned,
        }
    )
    place = pd.DataFrame(
        {
            "action_id": [f"x_{d}_{k}_place" for k in ids],
            "session_guid": prompts["session_guid"],
            "prompt_id": prompt_ids,
            "ts": [_ts(day, 3605 + 60 * k) for k in ids],
            "actor": "agent",
            "action_type": "place",
            "consumed_asset_id": [r[0] for r in returned],
            "source_retrieval_id": retrieval_ids,
            "document_id": [f"doc_{d}_{k}" for k in ids],
        }
    )
    edit = place.assign(
        action_id=[f"x_{d}_{k}_edit" for k in ids],
        ts=[_ts(day, 3610 + 60 * k) for k in ids],
        actor="user",
        action_type="edit",
        source_retrieval_id=None,
    )
    export = edit.assign(
        action_id=[f"x_{d}_{k}_export" for k in ids], action_type="export", consumed_asset_id=None
    )
    actions = pd.concat([place, edit, export], ignore_index=True)
    return {"prompts": prompts, "retrievals": retrievals, "actions": actions}


def _write_jsonl(frame: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(frame.to_json(orient="records", lines=True))


@pytest.fixture(scope="module")
def lineage_run(tmp_path_factory) -> GateResult:
    """Day 2 breaks each lineage rule for 10 of 100 actions, plus file-level defects."""
    raw = tmp_path_factory.mktemp("gate_lineage") / "raw"
    for day in (DAY1, DAY2):
        tables = _day_tables(day, 100)
        actions = tables["actions"]
        if day == DAY2:
            place = actions.index[actions["action_type"] == "place"]
            edit = actions.index[actions["action_type"] == "edit"]
            actions.loc[place[:10], "source_retrieval_id"] = "r_nowhere"  # dangling
            actions.loc[place[10:20], "consumed_asset_id"] = "a_substituted"  # not returned
            actions.loc[edit[:10], "document_id"] = "doc_never_placed"  # unresolvable
            actions.loc[edit[10:30], "document_id"] = None  # no lineage at all
            # an edit on the asset placed the day before (any partition resolves)
            actions.loc[edit[30], ["consumed_asset_id", "document_id"]] = [
                "a_0801_5_0",
                "doc_0801_5",
            ]
        for name, frame in tables.items():
            folder = raw / name / f"dt={day.isoformat()}"
            if name == "retrievals" and day == DAY1:
                folder.mkdir(parents=True)
                pq.write_table(
                    pa.Table.from_pandas(frame, preserve_index=False), folder / "p.parquet"
                )
            else:
                _write_jsonl(frame, folder / "part-0.jsonl")
    day2 = raw / "actions" / f"dt={DAY2.isoformat()}"
    (day2 / "notes.csv").write_text("not,a,log\n")  # unsupported_file
    (day2 / "broken.parquet").write_bytes(b"PAR1 this is not parquet")  # unreadable_file
    # an export (no asset: outside the lineage rules) whose prompt_id is a Parquet BIGINT
    typed = _day_tables(DAY2, 1)["actions"].iloc[[2]].assign(action_id="x_typed", prompt_id=7)
    pq.write_table(pa.Table.from_pandas(typed, preserve_index=False), day2 / "typed.parquet")
    _write_jsonl(
        typed.iloc[[0]].assign(action_id="x_bad_day"), raw / "actions" / "dt=2026-02-30" / "p.jsonl"
    )
    config = yaml.safe_load(default_config_path().read_text())
    config["checks"]["lineage_coverage"]["mostly"] = 0.95
    path = raw.parent / "gate.yml"
    path.write_text(yaml.safe_dump(config))
    return run_gate(
        raw, raw.parent / "out", day=DAY2, config_path=path, tables=["actions"], data_docs=False
    )


def _check(result: GateResult, name: str, partition: str = DAY2.isoformat()):
    found = [c for c in result.checks if c.name == name and c.partition == partition]
    assert len(found) == 1, (name, partition)
    return found[0]


def _applicable(check) -> int:
    """Rows a check applies to (the lineage columns are null elsewhere)."""
    return check.element_count - (check.missing_count or 0)


def test_lineage_checks_name_the_broken_rule(lineage_run):
    result = lineage_run
    dangling = _check(result, "lineage_source_known")
    assert not dangling.success and dangling.unexpected_count == 10 and _applicable(dangling) == 100
    assert {s["action_id"] for s in dangling.sample} == {f"x_0802_{k}_place" for k in range(10)}
    returned = _check(result, "lineage_consumed_in_returned")
    assert not returned.success and returned.unexpected_count == 10 and _applicable(returned) == 90
    placement = _check(result, "lineage_placement_resolvable")
    assert not placement.success and placement.unexpected_count == 10
    assert _applicable(placement) == 80  # 100 edits - 20 without a document
    coverage = _check(result, "lineage_coverage")
    assert not coverage.success and coverage.severity == "warning"
    assert coverage.unexpected_count == 20 and _applicable(coverage) == 200
    (row,) = result.coverage
    assert row["partition"] == DAY2.isoformat() and row["lineage_coverage"] == pytest.approx(0.9)
    assert row["source_known_share"] == pytest.approx(0.9)
    assert result.exit_code == 2


def test_file_level_defects(lineage_run):
    result = lineage_run
    failed = result.failed_checks("actions")
    assert {"unsupported_file", "unreadable_file", "parquet_type", "invalid_partition"} <= failed
    typed = _check(result, "parquet_type")
    assert typed.unexpected_count == 1 and typed.sample[0]["action_id"] == "x_typed"
    bad_day = _check(result, "invalid_partition", "2026-02-30")
    assert bad_day.unexpected_count == 1 and bad_day.sample[0]["action_id"] == "x_bad_day"
    unreadable = _check(result, "unreadable_file")
    assert unreadable.sample[0]["_source"].endswith("broken.parquet:0")
    assert set(result.partitions) == {DAY2.isoformat(), "2026-02-30"}

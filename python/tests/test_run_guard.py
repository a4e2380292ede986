"""`lara run`: one run at a time per warehouse, and publishing only when the gate passes.

One real `lara run` (subprocess, the installed `lara` command) builds a small
sample whose newest partition holds reproduction 4's lineage faults and one
invalid `retrieval_role`: the build succeeds (the dbt relationship tests
warn), the gate fails (exit 2). While it runs, a second `lara run` on the
same warehouse stops at once (issue 20, reproduction 8: it used to fail with
a DuckDB lock traceback, or make the first fail), and a third with
`--wait-lock 2` waits, then gives up. The failed gate leaves "yesterday's"
published dashboard and exports untouched and writes its own beside, marked
as not published. The rest (a lock held by this test, a stale lock, a lock of
another host, publishing after a passing gate) reuses that warehouse and
needs no build.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from lara.lock import RunLock
from lineage_faults import NEWEST, append_jsonl, plant_reproduction_4

EXIT_LOCKED = 75
YESTERDAY = {
    "reports/dashboard.html": "<html><body>yesterday's published dashboard</body></html>",
    "exports/_index.json": '{"published": true, "yesterday": true}',
    "exports/fct_retrievals/fct_retrievals.parquet": "yesterday's parquet bytes",
}


def _lara() -> str:
    found = shutil.which("lara", path=str(Path(sys.executable).parent))
    assert found, "the lara command is not installed next to this Python"
    return found


def _env(root: Path, raw: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "LARA_RAW_PATH": str(raw),
            "LARA_DUCKDB_PATH": str(root / "warehouse" / "lara.duckdb"),
            "DBT_TARGET_PATH": str(root / "target"),
            "DBT_LOG_PATH": str(root / "logs"),
        }
    )
    return env


def _run_args(root: Path, *extra: str) -> list[str]:
    return [
        _lara(),
        "run",
        "--resamples",
        "20",
        "--reports-dir",
        str(root / "reports"),
        "--exports-dir",
        str(root / "exports"),
        *extra,
    ]


def _lara_run(
    root: Path, raw: Path, *extra: str, timeout: float = 300
) -> subprocess.CompletedProcess:
    return subprocess.run(
        _run_args(root, *extra),
        env=_env(root, raw),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _snapshot(*paths: Path) -> dict[str, tuple[int, str]]:
    """Every file under `paths`: (mtime_ns, sha256)."""
    found = {}
    for base in paths:
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for path in files:
            found[str(path)] = (
                path.stat().st_mtime_ns,
                hashlib.sha256(path.read_bytes()).hexdigest(),
            )
    return found


@pytest.fixture(scope="module")
def first_run(small_raw_sample, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("run_guard")
    raw = root / "raw"
    shutil.copytree(small_raw_sample, raw)
    plant_reproduction_4(raw)
    append_jsonl(
        raw / "retrievals" / f"dt={NEWEST}",
        [
            {
                "retrieval_id": "r_bad_role",
                "prompt_id": "p_ghost_0",
                "session_guid": "s_1",
                "ts": f"{NEWEST}T12:00:00Z",
                "retrieval_role": "not_a_role",
                "returned_asset_ids": ["a_1"],
            }
        ],
    )
    for relative, text in YESTERDAY.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    lock_file = root / "warehouse" / "lara.duckdb.lock"
    with (root / "first.out").open("w") as out, (root / "first.err").open("w") as err:
        first = subprocess.Popen(_run_args(root), env=_env(root, raw), stdout=out, stderr=err)
        try:
            holder = None
            while first.poll() is None and holder is None:
                time.sleep(0.2)
                holder = RunLock(root / "warehouse" / "lara.duckdb").holder()
            assert holder is not None and holder.pid == first.pid, (
                f"the first run did not take the lock ({lock_file}); it exited {first.poll()}"
            )
            second = _lara_run(root, raw, timeout=120)
            waiting = _lara_run(root, raw, "--wait-lock", "2", timeout=120)
            still_running = first.poll() is None
            first.wait(timeout=1800)
        finally:
            if first.poll() is None:
                first.kill()
    return {
        "root": root,
        "raw": raw,
        "first_pid": first.pid,
        "first_code": first.returncode,
        "first_out": (root / "first.out").read_text(),
        "first_err": (root / "first.err").read_text(),
        "second": second,
        "waiting": waiting,
        "first_ran_throughout": still_running,
    }


def test_a_second_run_stops_at_once_naming_the_first(first_run):
    second = first_run["second"]
    assert second.returncode == EXIT_LOCKED, second.stdout + second.stderr
    message = second.stderr
    assert f"pid {first_run['first_pid']} on host {socket.gethostname()}" in message
    assert "command `lara run --resamples 20" in message and "since 20" in message
    assert "Nothing was done" in message and "--wait-lock" in message
    assert "lara.duckdb.lock" in message
    assert "dbt" not in second.stdout  # it built nothing


def test_wait_lock_waits_then_gives_up(first_run):
    waiting = first_run["waiting"]
    assert first_run["first_ran_throughout"]  # the first run held the lock during both
    assert waiting.returncode == EXIT_LOCKED, waiting.stdout + waiting.stderr
    assert "waiting up to 2 s" in waiting.stdout
    assert f"pid {first_run['first_pid']}" in waiting.stdout
    assert "after waiting 2 s" in waiting.stderr
    assert "dbt" not in waiting.stdout


def test_the_first_run_built_and_its_gate_failed(first_run):
    out = first_run["first_out"]
    assert first_run["first_code"] == 2, out[-3000:] + first_run["first_err"][-3000:]
    # dbt's relationship tests warn on reproduction 4 (late arrival is normal there).
    for test in (
        "relationships_stg_lara__actions_source_retrieval_id",
        "relationships_stg_lara__retrievals_prompt_id",
    ):
        assert any("WARN 1" in line and test in line for line in out.splitlines()), test
    assert "verdict: failed (exit code 2)" in out
    results = json.loads((first_run["root"] / "reports/gate/gate_results.json").read_text())
    failed = {(f["table"], f["name"], f["severity"]) for f in results["failures"]}
    assert ("retrievals", "invalid_enum:retrieval_role", "error") in failed
    assert ("actions", "lineage_source_known", "warning") in failed
    assert results["lineage_lookups"]["warehouse_tables"] == ["placements", "prompts", "retrievals"]
    # The lock is released: the file stays, empty.
    assert RunLock(first_run["root"] / "warehouse" / "lara.duckdb").holder() is None


def test_a_failed_gate_publishes_nothing(first_run):
    root = first_run["root"]
    for relative, text in YESTERDAY.items():
        assert (root / relative).read_text() == text, f"{relative} was overwritten"
    assert not (root / "exports" / "agg_tier2_usage").exists()
    assert "NOT PUBLISHING" in first_run["first_out"]
    assert "lara: NOT PUBLISHED. The data-quality gate failed (exit 2)" in first_run["first_err"]

    page = (root / "reports" / "unpublished" / "dashboard.html").read_text()
    assert 'id="lara-unpublished"' in page and "<title>NOT PUBLISHED" in page
    assert '<meta name="lara-published" content="false">' in page
    assert "agg_tier2_usage" in page or "Tier 2" in page  # a real dashboard, marked

    exports = root / "exports" / "unpublished"
    index = json.loads((exports / "_index.json").read_text())
    assert index["published"] is False and index["gate"]["verdict"] == "failed"
    assert "gate failed" in index["unpublished_reason"]
    assert "NOT PUBLISHED" in (exports / "UNPUBLISHED.txt").read_text()
    parquet = sorted(exports.rglob("*.parquet"))
    assert len(parquet) == len(index["marts"]) > 10
    for path in parquet:
        metadata = pq.read_metadata(path).metadata
        assert metadata[b"lara_published"] == b"false", path
        assert metadata[b"lara_gate_verdict"] == b"failed", path


def test_the_run_writes_dbts_docs_where_it_says(first_run):
    # The run's DBT_TARGET_PATH is root/target: the docs site is there, and
    # the summary names that place (not the project's own target folder).
    target = first_run["root"] / "target"
    out = first_run["first_out"]
    assert f"dbt docs:           {target / 'static_index.html'}" in out, out[-2000:]
    assert f"dbt artifacts:      {target}\n" in out
    site = (target / "static_index.html").read_text()
    assert "fct_retrievals" in site and "agg_tier2_usage" in site
    catalog = json.loads((target / "catalog.json").read_text())
    assert {"model.lara.fct_retrievals", "model.lara.agg_tier2_usage"} <= set(catalog["nodes"])
    # `dbt docs generate --no-compile` after the build: the docs keep the SQL
    # the build compiled and ran, models and data tests alike.
    nodes = json.loads((target / "manifest.json").read_text())["nodes"]
    ran = [
        node
        for node in nodes.values()
        if node["package_name"] == "lara" and node["resource_type"] in ("model", "test")
    ]
    assert len(ran) > 300
    uncompiled = [node["name"] for node in ran if not node.get("compiled_code")]
    assert not uncompiled, uncompiled[:10]
    assert '"marts"."fct_retrievals"' in nodes["model.lara.agg_tier2_usage"]["compiled_code"]


def test_a_held_lock_leaves_everything_untouched(first_run):
    root, raw = first_run["root"], first_run["raw"]
    with RunLock(root / "warehouse" / "lara.duckdb") as lock:
        lock.acquire()
        # Everything a run could touch, the lock file (naming this process) included.
        before = _snapshot(root / "warehouse", root / "reports", root / "exports")
        refused = _lara_run(root, raw, timeout=120)
        after = _snapshot(root / "warehouse", root / "reports", root / "exports")
    assert refused.returncode == EXIT_LOCKED
    assert f"pid {os.getpid()} on host {socket.gethostname()}" in refused.stderr
    assert len(before) > 50 and after == before


def test_wait_lock_takes_the_lock_once_released(first_run, tmp_path):
    root = first_run["root"]
    lock = RunLock(root / "warehouse" / "lara.duckdb")
    lock.acquire()
    # A raw folder that does not exist: the run stops right after taking the lock.
    waiting = subprocess.Popen(
        _run_args(root, "--wait-lock", "120"),
        env=_env(root, tmp_path / "no_such_raw"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        announced = waiting.stdout.readline()  # printed (and flushed) while it waits
    finally:
        lock.release()
    out, err = waiting.communicate(timeout=180)
    assert f"pid {os.getpid()}" in announced and "waiting up to 120 s" in announced
    assert "lock acquired after waiting" in out
    assert waiting.returncode == 1 and "is not a folder" in err


def test_a_stale_lock_is_taken_over(first_run, tmp_path):
    root = first_run["root"]
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    pid = int(dead.stdout)
    lock_file = root / "warehouse" / "lara.duckdb.lock"
    stale = {
        "pid": pid,
        "host": socket.gethostname(),
        "command": "lara run",
        "since": "2026-08-04T03:30:00+00:00",
    }
    lock_file.write_text(json.dumps(stale))
    taken = _lara_run(root, tmp_path / "no_such_raw", timeout=120)
    assert f"took over a stale lock: pid {pid} on host {socket.gethostname()}" in taken.stdout
    assert "no longer running" in taken.stdout
    assert taken.returncode == 1 and "is not a folder" in taken.stderr
    assert RunLock(root / "warehouse" / "lara.duckdb").holder() is None

    # A lock left by another host cannot be judged from here: stop, say what to do.
    lock_file.write_text(json.dumps({**stale, "host": "elsewhere.invalid"}))
    refused = _lara_run(root, tmp_path / "no_such_raw", timeout=120)
    assert refused.returncode == EXIT_LOCKED
    assert "host elsewhere.invalid" in refused.stderr and f"delete {lock_file}" in refused.stderr
    lock_file.write_text("")


def test_a_passing_gate_publishes(first_run, small_raw_sample, tmp_path, capsys):
    """The publishing step of `lara run` after a passing gate (on the run's warehouse)."""
    from lara.cli import publish_outputs
    from lara.gate.runner import run_gate

    root = first_run["root"]
    reports, exports = tmp_path / "reports", tmp_path / "exports"
    shutil.copytree(root / "reports" / "unpublished", reports / "unpublished")
    shutil.copytree(root / "exports" / "unpublished", exports / "unpublished")
    gate = run_gate(small_raw_sample, tmp_path / "gate", data_docs=False)
    assert gate.exit_code == 0
    outputs = publish_outputs(
        root / "warehouse" / "lara.duckdb", gate, None, None, reports, exports
    )
    assert outputs.published and outputs.dashboard == reports / "dashboard.html"
    page = outputs.dashboard.read_text()
    assert "lara-unpublished" not in page and "NOT PUBLISHED" not in page
    index = json.loads((exports / "_index.json").read_text())
    assert index["published"] is True and index["gate"]["verdict"] == "passed"
    assert not (exports / "UNPUBLISHED.txt").exists()
    parquet = sorted(exports.glob("*/*.parquet"))
    assert len(parquet) == len(index["marts"])
    assert all(pq.read_metadata(p).metadata[b"lara_published"] == b"true" for p in parquet)
    # The unpublished outputs of the earlier (failed) run are gone.
    assert not (reports / "unpublished").exists() and not (exports / "unpublished").exists()
    assert "removed the unpublished outputs of an earlier run" in capsys.readouterr().out

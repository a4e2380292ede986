"""`lara bench`'s IR comparison: NDCG@K of the project's compiled SQL
(`int_retrieval_relevance`, the macros of macros/metrics/ir.sql) in DuckDB against
pytrec_eval's `ndcg_cut` on the same random labelled lists, and its report section."""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from lara.dbt import dbt_env, dbt_executable
from lara.paths import project_dir


@dataclass
class IrResult:
    lists: int
    sql_s: float
    pytrec_s: float
    pytrec_build_s: float
    max_abs_diff: float

    @property
    def ratio(self) -> float:
        return self.sql_s / self.pytrec_s if self.pytrec_s else float("nan")


def bench_ir(
    lists: int, seed: int, compiled_sql: str, threads: int, memory_limit: str, log=print
) -> IrResult:
    """NDCG@K of the project's model SQL in DuckDB vs pytrec_eval on `lists` random
    ranked lists with graded labels (same lists, same K)."""
    import duckdb
    import numpy as np
    import pytrec_eval
    import yaml

    k = int(yaml.safe_load((project_dir() / "dbt_project.yml").read_text())["vars"]["lara_k"])
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 21, size=lists)
    n = int(lengths.sum())
    rid = np.repeat(np.arange(lists), lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    rank = np.arange(n) - starts + 1
    asset = rng.integers(0, 50, size=n)  # may repeat within a list; dedupe keeps the first
    # de-duplicate (rid, asset), keep first occurrence, re-rank
    key = rid.astype(np.int64) * 1000 + asset
    _, first = np.unique(key, return_index=True)
    first.sort()
    rid, asset = rid[first], asset[first]
    starts = np.searchsorted(rid, rid, side="left")
    rank = np.arange(rid.size) - starts + 1
    judged = rng.random(rid.size) < 0.6
    grades = rng.integers(0, 4, size=rid.size)
    l_rid, l_asset, l_grade = rid[judged], asset[judged], grades[judged]
    # some judged relevant assets that were not returned (raise the ideal DCG)
    extra = rng.integers(0, lists, size=lists // 5)
    l_rid = np.concatenate([l_rid, extra])
    l_asset = np.concatenate([l_asset, 1000 + rng.integers(0, 50, size=extra.size)])
    l_grade = np.concatenate([l_grade, rng.integers(1, 4, size=extra.size)])
    key = l_rid.astype(np.int64) * 10_000 + l_asset
    _, first = np.unique(key, return_index=True)
    l_rid, l_asset, l_grade = l_rid[first], l_asset[first], l_grade[first]
    log(f"[bench] IR: {lists:,} lists, {rid.size:,} returned rows, {l_rid.size:,} judgements")

    import pyarrow as pa

    assets = pa.table(
        {
            "retrieval_id": pa.array(rid.astype(str)),
            "session_guid": pa.array(np.full(rid.size, "s")),
            "asset_id": pa.array(asset.astype(str)),
            "asset_rank": pa.array(rank.astype(np.int64)),
        }
    )
    labels = pa.table(
        {
            "retrieval_id": pa.array(l_rid.astype(str)),
            "asset_id": pa.array(l_asset.astype(str)),
            "grade": pa.array(l_grade.astype(np.int64)),
        }
    )
    retrievals = pa.table(
        {
            "retrieval_id": pa.array(np.arange(lists).astype(str)),
            "session_guid": pa.array(np.full(lists, "s")),
        }
    )
    # A full build of the model (its sessions_this_run import is not read then).
    sessions = pa.table(
        {"session_guid": pa.array(["s"]), "session_date": pa.array([None], pa.date32())}
    )
    sql = re.sub(r'"[A-Za-z0-9_]+"\."(intermediate|staging|run_state)"\.', r'"\1".', compiled_sql)
    sql = sql.replace('"run_state"."lara_sessions_this_run"', "bench_sessions")
    sql = sql.replace('"intermediate"."int_retrievals_scoped"', "bench_retrievals")
    sql = sql.replace('"intermediate"."int_retrieval_assets"', "bench_assets")
    sql = sql.replace('"intermediate"."int_relevance_labels_resolved"', "bench_labels")
    con = duckdb.connect()
    con.execute(f"set threads = {threads}")
    con.execute(f"set memory_limit = '{memory_limit}'")
    for name, table in (
        ("bench_assets", assets),
        ("bench_labels", labels),
        ("bench_retrievals", retrievals),
        ("bench_sessions", sessions),
    ):
        con.register(f"{name}_arrow", table)
        con.execute(f"create table {name} as select * from {name}_arrow")
        con.unregister(f"{name}_arrow")
    start = time.perf_counter()
    con.execute(f"create table ndcg as {sql}")
    sql_s = time.perf_counter() - start
    ours = dict(
        con.execute("select retrieval_id, ndcg_at_k from ndcg where is_labelled").fetchall()
    )
    con.close()

    start = time.perf_counter()
    qrel: dict[str, dict[str, int]] = {}
    for r, a, g in zip(l_rid.astype(str), l_asset.astype(str), l_grade.tolist(), strict=True):
        qrel.setdefault(r, {})[a] = g
    run: dict[str, dict[str, float]] = {q: {} for q in qrel}
    for r, a, rk in zip(rid.astype(str), asset.astype(str), rank.tolist(), strict=True):
        if r in run:
            run[r][a] = float(10_000 - rk)
    build_s = time.perf_counter() - start
    start = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(qrel, {f"ndcg_cut.{k}"})
    scores = evaluator.evaluate(run)
    pytrec_s = time.perf_counter() - start
    diff = max(
        (abs(scores[q][f"ndcg_cut_{k}"] - (ours.get(q) or 0.0)) for q in scores), default=0.0
    )
    log(
        f"[bench] IR: SQL {sql_s:.1f} s, pytrec_eval {pytrec_s:.1f} s (+{build_s:.1f} s dicts),"
        f" max |diff| {diff:.2e}"
    )
    return IrResult(len(qrel), sql_s, pytrec_s, build_s, diff)


def render_ir(ir: IrResult | None) -> list[str]:
    """The report's IR section (nothing when the comparison was not run)."""
    if ir is None:
        return []
    return [
        "",
        "## Tier 1 IR metrics at scale",
        "",
        f"NDCG@K over {ir.lists:,} labelled lists (random lists of 0-20 assets, graded"
        " 0-3, 60% judged, some judged assets not returned): the compiled SQL of"
        " `int_retrieval_relevance` (the macros of macros/metrics/ir.sql) in DuckDB vs"
        " pytrec_eval's `ndcg_cut` on the same lists.",
        "",
        "| lists | DuckDB SQL s | pytrec_eval evaluate s | pytrec_eval dict build s"
        " | SQL / pytrec_eval | max abs diff |",
        "|---:|---:|---:|---:|---:|---:|",
        f"| {ir.lists:,} | {ir.sql_s:.2f} | {ir.pytrec_s:.2f} | {ir.pytrec_build_s:.2f}"
        f" | {ir.ratio:.2f} | {ir.max_abs_diff:.1e} |",
    ]


def compiled_relevance(work: Path) -> str:
    path = work / "target/compiled/lara/models/intermediate/retrieval/int_retrieval_relevance.sql"
    if not path.exists():
        env = dbt_env(
            work / "none",
            work / "compile.duckdb",
            {"DBT_TARGET_PATH": str(work / "target"), "DBT_LOG_PATH": str(work / "logs")},
        )
        subprocess.run(
            [
                dbt_executable(),
                "compile",
                "--select",
                "int_retrieval_relevance",
                "--project-dir",
                str(project_dir()),
            ],
            env=env,
            cwd=project_dir(),
            capture_output=True,
            text=True,
            check=False,
        )
    return path.read_text()

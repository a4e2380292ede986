"""Tier 1 IR metrics of the marts checked against pytrec_eval (trec_eval).

Random ranked lists and graded labels are written as raw log files, dbt
builds fct_retrievals, and precision@1, precision@K and NDCG@K of every
labelled retrieval are compared with pytrec_eval's P_1, P_K and ndcg_cut_K
(relevance_level = var relevant_grade_min) within 1e-9. The random data
covers lists shorter than K, empty lists, repeated ids (de-duplicated keeping
first occurrences, as trec_eval sees a run), unjudged assets, judged relevant
assets that were not returned (they raise the ideal DCG), and several
judgements of one pair (human over LLM, latest within a kind).

Definitions compared (metrics.md Tier 1 and trec_eval agree): P_k divides by
k even when fewer were returned; ndcg_cut_k uses gain = grade (every grade,
relevance_level plays no part) and discount log2(rank + 1), with the ideal
DCG from all judged grades; an empty ranking scores 0 (pytrec_eval scores
every query of the qrels).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import numpy as np
import pytest
import yaml

from lara.dbt import run_dbt
from lara.paths import project_dir

pytrec_eval = pytest.importorskip("pytrec_eval")

START = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)
TOLERANCE = 1e-9
# list lengths around K = 10 (and 5): empty, shorter, equal, longer
LENGTHS = [0, 1, 3, 5, 9, 10, 11, 15]
LENGTH_WEIGHTS = [0.05, 0.1, 0.15, 0.15, 0.1, 0.15, 0.15, 0.15]


@dataclass(frozen=True)
class IrCase:
    retrievals: dict[str, list[str]]
    judgements: list[dict]


def _iso(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def _write_table(root: Path, table: str, rows: list[dict], time_key: str) -> None:
    by_day: dict[str, list[dict]] = {}
    for row in rows:
        by_day.setdefault(row[time_key][:10], []).append(row)
    for day, day_rows in by_day.items():
        folder = root / table / f"dt={day}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = "".join(json.dumps(row) + "\n" for row in day_rows)
        (folder / "part-0.jsonl").write_text(lines)


def make_case(seed: int, n_retrievals: int = 400) -> IrCase:
    """Random lists (0-15 long, ids from a small pool so some repeat) and labels."""
    rng = np.random.default_rng(seed)
    retrievals: dict[str, list[str]] = {}
    judgements: list[dict] = []
    for i in range(n_retrievals):
        rid = f"r{i:04d}"
        pool = [f"a{i:04d}_{j}" for j in range(rng.integers(1, 20))]
        length = int(rng.choice(LENGTHS, p=LENGTH_WEIGHTS))
        ranked = [str(rng.choice(pool)) for _ in range(length)]
        retrievals[rid] = ranked
        if rng.random() < 0.15:
            continue  # unlabelled retrieval
        returned = list(dict.fromkeys(ranked))
        judged = [a for a in returned if rng.random() < 0.7]
        unreturned = [f"u{i:04d}_{j}" for j in range(rng.integers(0, 3))]
        for asset in judged + unreturned:
            for _ in range(int(rng.integers(1, 4))):
                judgements.append(
                    {
                        "retrieval_id": rid,
                        "asset_id": asset,
                        "grade": int(rng.integers(0, 4)),
                        "judge": str(rng.choice(["human", "llm"], p=[0.3, 0.7])),
                        "judged_at": _iso(
                            START + timedelta(days=2, minutes=int(rng.integers(0, 5000)))
                        ),
                    }
                )
    # one (retrieval, asset, judge, judged_at) per judgement: the contract key
    unique = {(j["retrieval_id"], j["asset_id"], j["judge"], j["judged_at"]): j for j in judgements}
    return IrCase(retrievals, list(unique.values()))


def resolve_labels(judgements: list[dict]) -> dict[str, dict[str, int]]:
    """Human over LLM, then latest; equal times keep the higher grade."""
    best: dict[tuple[str, str], tuple] = {}
    for j in judgements:
        key = (j["retrieval_id"], j["asset_id"])
        rank = (j["judge"] == "human", j["judged_at"], j["grade"])
        if key not in best or rank > best[key][0]:
            best[key] = (rank, j["grade"])
    qrel: dict[str, dict[str, int]] = {}
    for (rid, asset), (_, grade) in best.items():
        qrel.setdefault(rid, {})[asset] = grade
    return qrel


def write_raw(case: IrCase, root: Path) -> None:
    prompts, retrievals = [], []
    for i, (rid, ranked) in enumerate(case.retrievals.items()):
        ts = _iso(START + timedelta(seconds=i))
        prompts.append(
            {
                "prompt_id": f"p_{rid}",
                "session_guid": f"s_{rid}",
                "user_id": "u1",
                "surface": "template_search",
                "ts": ts,
                "prompt_text": "query",
            }
        )
        retrievals.append(
            {
                "retrieval_id": rid,
                "prompt_id": f"p_{rid}",
                "session_guid": f"s_{rid}",
                "ts": ts,
                "query_text": "query",
                "retrieval_role": "find",
                "returned_asset_ids": ranked,
            }
        )
    first = next(iter(case.retrievals))
    actions = [
        {
            "action_id": "x1",
            "session_guid": f"s_{first}",
            "ts": _iso(START + timedelta(hours=1)),
            "actor": "user",
            "action_type": "click",
        }
    ]
    _write_table(root, "prompts", prompts, "ts")
    _write_table(root, "retrievals", retrievals, "ts")
    _write_table(root, "actions", actions, "ts")
    _write_table(root, "relevance_labels", case.judgements, "judged_at")


def project_vars() -> dict:
    return yaml.safe_load((project_dir() / "dbt_project.yml").read_text())["vars"]


def build(case: IrCase, root: Path, dbt_vars: dict | None) -> dict[str, dict]:
    raw = root / "raw"
    write_raw(case, raw)
    warehouse = root / "lara.duckdb"
    # cautious: skip tests that also read models outside the selection
    args = ["build", "--select", "+fct_retrievals", "--indirect-selection", "cautious"]
    if dbt_vars:
        args += ["--vars", json.dumps(dbt_vars)]
    result = run_dbt(
        args,
        raw,
        warehouse,
        extra_env={"DBT_TARGET_PATH": str(root / "target"), "DBT_LOG_PATH": str(root / "logs")},
        capture=True,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute(
            """
            select retrieval_id, is_labelled, precision_at_1, precision_at_k, ndcg_at_k,
                label_coverage_at_k, distinct_returned_count, is_empty
            from marts.fct_retrievals
            """
        ).fetchall()
    names = [
        "is_labelled",
        "precision_at_1",
        "precision_at_k",
        "ndcg_at_k",
        "label_coverage_at_k",
        "distinct_returned_count",
        "is_empty",
    ]
    return {row[0]: dict(zip(names, row[1:], strict=True)) for row in rows}


def trec_scores(case: IrCase, k: int, relevance_level: int) -> dict[str, dict[str, float]]:
    qrel = resolve_labels(case.judgements)
    run = {}
    for rid in qrel:
        ranked = list(dict.fromkeys(case.retrievals[rid]))  # first occurrences, as trec_eval
        run[rid] = {asset: float(len(ranked) - i) for i, asset in enumerate(ranked)}
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrel, {"P.1", f"P.{k}", f"ndcg_cut.{k}"}, relevance_level=relevance_level
    )
    return evaluator.evaluate(run)


@pytest.fixture(scope="module")
def ir_case() -> IrCase:
    return make_case(seed=20260801)


@pytest.fixture(
    scope="module",
    params=[None, {"lara_k": 5, "relevant_grade_min": 2}],
    ids=["project_defaults", "k5_grade2"],
)
def built(request, ir_case: IrCase, tmp_path_factory) -> tuple[dict, dict[str, dict]]:
    """The case built once per setting of the vars: (settings, fct_retrievals rows)."""
    settings = {**project_vars(), **(request.param or {})}
    marts = build(ir_case, tmp_path_factory.mktemp("ir_metrics"), request.param)
    return settings, marts


def test_case_covers_the_edge_cases(ir_case: IrCase):
    qrel = resolve_labels(ir_case.judgements)
    lengths = [len(set(r)) for r in ir_case.retrievals.values()]
    assert 0 in lengths and any(0 < n < 5 for n in lengths) and any(n > 10 for n in lengths)
    assert any(len(r) != len(set(r)) for r in ir_case.retrievals.values())
    assert any(a not in ir_case.retrievals[rid] for rid, grades in qrel.items() for a in grades)
    assert any(
        a not in qrel.get(rid, {}) for rid, ranked in ir_case.retrievals.items() for a in ranked
    )
    # pairs where human-over-LLM and plain latest-wins disagree
    latest: dict[tuple[str, str], tuple[str, int]] = {}
    for j in ir_case.judgements:
        key = (j["retrieval_id"], j["asset_id"])
        if key not in latest or (j["judged_at"], j["grade"]) > latest[key]:
            latest[key] = (j["judged_at"], j["grade"])
    assert any(latest[(rid, a)][1] != g for rid, grades in qrel.items() for a, g in grades.items())


def test_tier1_metrics_match_pytrec_eval(ir_case: IrCase, built: tuple[dict, dict[str, dict]]):
    settings, marts = built
    k, level = int(settings["lara_k"]), int(settings["relevant_grade_min"])
    expected = trec_scores(ir_case, k, level)
    qrel = resolve_labels(ir_case.judgements)
    assert set(marts) == set(ir_case.retrievals)
    for rid, row in marts.items():
        if rid not in qrel:
            assert not row["is_labelled"]
            assert row["precision_at_1"] is None and row["ndcg_at_k"] is None, rid
            continue
        assert row["is_labelled"], rid
        scores = expected[rid]
        assert math.isclose(row["precision_at_1"], scores["P_1"], abs_tol=TOLERANCE), rid
        assert math.isclose(row["precision_at_k"], scores[f"P_{k}"], abs_tol=TOLERANCE), rid
        assert math.isclose(row["ndcg_at_k"], scores[f"ndcg_cut_{k}"], abs_tol=TOLERANCE), rid


def test_label_coverage_and_empty_lists(ir_case: IrCase, built: tuple[dict, dict[str, dict]]):
    settings, marts = built
    k = int(settings["lara_k"])
    qrel = resolve_labels(ir_case.judgements)
    for rid, ranked in ir_case.retrievals.items():
        row = marts[rid]
        distinct = list(dict.fromkeys(ranked))
        assert row["distinct_returned_count"] == len(distinct)
        assert row["is_empty"] == (len(ranked) == 0)
        if rid not in qrel or not distinct:
            assert row["label_coverage_at_k"] is None, rid
            continue
        top = distinct[:k]
        coverage = sum(a in qrel[rid] for a in top) / len(top)
        assert math.isclose(row["label_coverage_at_k"], coverage, abs_tol=TOLERANCE), rid

"""Tests of the sample-log generator (small N, a few seconds in total).

Besides schema / determinism / manifest checks, two reference implementations
written independently of the generator's vectorised code check its claims:

* ``_classify``: the staging validation rules applied row by row to the raw
  files (reason order as in the brief), to check ``expected_staging`` and that
  every injected defect triggers exactly its own reason;
* ``_mini_mart``: a straightforward, loop-based reading of metrics.md on the
  clean rows, to check the ``planted.exact`` values.
"""

from __future__ import annotations

import datetime as dt
import functools
import gzip
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from lara.contract import load_contract
from lara.generate import CONTRACT, SCHEMAS, TABLES, GeneratorConfig, generate
from lara.generate.schema import coded

SMALL = dict(sessions=2000, days=4, seed=7, relevance_label_share=0.03, replay_trajectories=40)
PARSE_ERROR = "__parse_error__"
OUTCOMES = {"export", "share", "download"}


# --------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict]]:
    out = {}
    for name, kw in {
        "parquet": dict(fmt="parquet"),
        "parquet_again": dict(fmt="parquet"),
        "jsonl": dict(fmt="jsonl", gzip=True),
        "mixed": dict(fmt="mixed"),
    }.items():
        root = tmp_path_factory.mktemp(name)
        cfg = GeneratorConfig(**SMALL, bad_rows=True, **kw)
        out[name] = (root, generate(cfg, root, progress=False))
    return out


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("big")
    cfg = GeneratorConfig(sessions=30_000, days=7, seed=11)
    return root, generate(cfg, root, progress=False)


# --------------------------------------------------------------------------
# reference reader / validator
# --------------------------------------------------------------------------
def _files(root: Path, table: str) -> list[Path]:
    return sorted(p for p in (root / table).rglob("*") if p.is_file())


def _read_raw(root: Path, table: str) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for f in _files(root, table):
        rel = f.relative_to(root).as_posix()
        if f.name.endswith(".parquet"):
            rows += [(rel, r) for r in pq.read_table(f).to_pylist()]
        elif f.name.endswith((".jsonl", ".jsonl.gz")):
            opener = gzip.open if f.name.endswith(".gz") else open
            with opener(f, "rt", encoding="utf-8") as fh:
                for line in fh:
                    line = line.rstrip("\n")
                    try:
                        obj = json.loads(line)
                        if not isinstance(obj, dict):
                            raise ValueError
                    except ValueError:
                        obj = (PARSE_ERROR, line)
                    rows.append((rel, obj))
        else:
            raise AssertionError(f"unexpected file {rel}")
    return rows


def _parse_ts(v: Any) -> dt.datetime | None:
    if isinstance(v, dt.datetime):
        return v
    if not isinstance(v, str):
        return None
    try:
        t = dt.datetime.fromisoformat(v)
    except ValueError:
        return None
    return t if t.tzinfo is not None else None


def _type_ok(v: Any, typ: str) -> bool:
    if typ == "string":
        return isinstance(v, str)
    if typ == "bool":
        return isinstance(v, bool)
    if typ == "int64":
        return isinstance(v, int) and not isinstance(v, bool)
    if typ == "double":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    raise AssertionError(typ)


def _classify(table: str, row: Any) -> str | None:
    """Staging reason of a raw row (None = valid), in the documented order."""
    if isinstance(row, tuple):
        return "json_parse_error"
    c = CONTRACT[table]
    if any(row.get(col) is None for col in c["required"]):
        return "missing_required"
    for col in c["ids"]:
        v = row.get(col)
        if isinstance(v, str) and v.strip() == "":
            return "empty_id"
    for col in c["timestamps"]:
        if row.get(col) is not None and _parse_ts(row[col]) is None:
            return "invalid_timestamp"
    for f in SCHEMAS[table]:
        if f.name in c["lists"] or f.name in c["timestamps"] or row.get(f.name) is None:
            continue
        if not _type_ok(row[f.name], str(f.type)):
            return "invalid_type"
    for col, allowed in c["enums"].items():
        v = row.get(col)
        if v is not None and v.strip().lower() not in allowed:
            return "invalid_enum"
    for col, (lo, hi) in c["ranges"].items():
        v = row.get(col)
        if v is not None and ((lo is not None and v < lo) or (hi is not None and v > hi)):
            return "out_of_range"
    for col in c["lists"]:
        v = row.get(col)
        if v is None:
            continue
        if not isinstance(v, list) or any(
            x is None or not isinstance(x, str) or x.strip() == "" for x in v
        ):
            return "invalid_list"
    return None


def _normalise(table: str, row: dict) -> dict:
    c = CONTRACT[table]
    out = {}
    for f in SCHEMAS[table]:
        v = row.get(f.name)
        if f.name in c["timestamps"] and v is not None:
            v = _parse_ts(v).astimezone(dt.UTC)
        elif f.name in c["enums"] and v is not None:
            v = v.strip().lower()
        elif isinstance(v, list):
            v = tuple(v)
        elif isinstance(v, int) and str(f.type) == "double":
            v = float(v)
        out[f.name] = v
    return out


@functools.cache
def _stage(root: Path, table: str) -> tuple[dict, list[dict], list[tuple[str, Any, str | None]]]:
    """Reference staging: counts per outcome, clean rows, classified raw rows."""
    raw = _read_raw(root, table)
    classified = [(rel, r, _classify(table, r)) for rel, r in raw]
    quarantined = Counter(reason for _, _, reason in classified if reason)
    valid = [_normalise(table, r) for _, r, reason in classified if reason is None]
    content = Counter(tuple(sorted((k, v) for k, v in r.items())) for r in valid)
    exact = sum(n - 1 for n in content.values())
    key = CONTRACT[table]["key"]
    clean_rows = [dict(k) for k in content]
    if key:
        by_key: dict[tuple, list[tuple]] = defaultdict(list)
        for k, n in content.items():
            by_key[tuple(dict(k)[c] for c in key)].append((k, n))
        bad = {kk: v for kk, v in by_key.items() if len(v) > 1}
        if bad:
            quarantined["conflicting_duplicate"] += sum(n for v in bad.values() for _, n in v)
            exact -= sum(n - 1 for v in bad.values() for _, n in v)
            clean_rows = [dict(k) for kk, v in by_key.items() if kk not in bad for k, _ in v]
    counts = {
        "clean": len(clean_rows),
        "exact_duplicates": exact,
        "quarantined": dict(sorted(quarantined.items())),
    }
    return counts, clean_rows, classified


# --------------------------------------------------------------------------
# reference mart (metrics.md, loop-based)
# --------------------------------------------------------------------------
def _latest(rows: list[dict], key: str) -> dict[str, dict]:
    best: dict[str, dict] = {}
    for r in rows:
        rank = (r["judge"] == "human", r["judged_at"])
        cur = best.get(r[key])
        if cur is None or rank > (cur["judge"] == "human", cur["judged_at"]):
            best[r[key]] = r
    return best


def _mini_mart(clean: dict[str, list[dict]]) -> dict[str, Any]:
    prompts = {r["prompt_id"]: r for r in clean["prompts"]}
    syn = {p for p, r in prompts.items() if r["is_synthetic"] is True}
    rets = {r["retrieval_id"]: r for r in clean["retrievals"]}
    n_ret = Counter(r["prompt_id"] for r in rets.values())
    ns = [r for r in prompts.values() if r["prompt_id"] not in syn]
    out: dict[str, Any] = {"prompts_per_surface": Counter(r["surface"] for r in ns)}
    out["trigger"] = {
        s: (
            sum(1 for r in ns if r["surface"] == s and n_ret[r["prompt_id"]]),
            sum(1 for r in ns if r["surface"] == s),
        )
        for s in ("chat", "editor_assistant", "template_search")
    }
    sess = defaultdict(list)
    for r in ns:
        sess[r["session_guid"]].append(r["surface"])
    assist = [v for v in sess.values() if any(s != "template_search" for s in v)]
    out["assistant_sessions"] = (len(assist), sum(len(v) for v in assist))
    labels = {p: r for p, r in _latest(clean["prompt_labels"], "prompt_id").items() if p in prompts}
    labels = {p: r for p, r in labels.items() if p not in syn}
    with_ret = [p for p in labels if n_ret[p]]
    intent = [p for p in labels if labels[p]["has_retrieval_intent"]]
    out["misroute"] = (
        sum(1 for p in with_ret if not labels[p]["has_retrieval_intent"]),
        len(with_ret),
    )
    out["missed"] = (sum(1 for p in intent if not n_ret[p]), len(intent))
    out["multi"] = (
        sum(1 for r in labels.values() if r["retrieval_intent_count"] >= 2),
        len(labels),
    )
    no_intent = {p for p, r in labels.items() if not r["has_retrieval_intent"]}
    nsr = {k: r for k, r in rets.items() if r["prompt_id"] not in syn}
    scope = {k for k, r in nsr.items() if r["prompt_id"] not in no_intent}
    out["in_scope"] = len(scope)
    out["misrouted"] = len(nsr) - len(scope)
    out["empty"] = sum(1 for k in scope if len(rets[k]["returned_asset_ids"]) == 0)
    out["roles"] = Counter(rets[k]["retrieval_role"] or "unknown" for k in scope)
    # attribution, in time order
    acts = sorted(clean["actions"], key=lambda a: (a["ts"], a["action_id"]))
    by_sess = defaultdict(list)
    for k, r in rets.items():
        by_sess[r["session_guid"]].append((r["ts"], k))
    for v in by_sess.values():
        v.sort()
    place_res: dict[tuple, str | None] = {}
    placers: dict[str, set] = defaultdict(set)
    attributed = []
    for a in acts:
        res, method = [], None
        src, asset, doc = a["source_retrieval_id"], a["consumed_asset_id"], a["document_id"]
        if src is not None and src in rets:
            res, method = [src], "direct"
        elif asset and doc and place_res.get((doc, asset)):
            res, method = [place_res[(doc, asset)]], "placement"
        elif a["action_type"] in OUTCOMES and doc and not asset and placers[doc]:
            res, method = sorted(placers[doc]), "document"
        elif asset:
            for ts, k in reversed(by_sess.get(a["session_guid"], [])):
                if ts <= a["ts"] and asset in rets[k]["returned_asset_ids"]:
                    res, method = [k], "temporal"
                    break
        if a["action_type"] == "place" and doc and asset:
            place_res[(doc, asset)] = res[0] if res else None
            if res:
                placers[doc].add(res[0])
        attributed += [(a, k, method) for k in res]
    acr = {
        k
        for a, k, _ in attributed
        if a["actor"] == "agent"
        and a["prompt_id"] == rets[k]["prompt_id"]
        and a["consumed_asset_id"] in rets[k]["returned_asset_ids"]
    }
    out["acr"] = Counter(rets[k]["retrieval_role"] or "unknown" for k in acr & scope)
    cross = [
        (a["action_id"], k)
        for a, k, m in attributed
        if a["actor"] == "user"
        and a["action_type"] in OUTCOMES
        and m in ("direct", "placement", "document")
        and k in scope
        and a["session_guid"] != rets[k]["session_guid"]
    ]
    out["cross"] = (len({x for x, _ in cross}), len(cross))
    out["synthetic"] = (
        len(syn),
        sum(1 for r in rets.values() if r["prompt_id"] in syn),
        sum(1 for a in clean["actions"] if a["prompt_id"] in syn),
    )
    turns = {r["prompt_id"] for k, r in rets.items() if k in scope}
    goals = {
        p: r
        for p, r in _latest(clean["goal_labels"], "prompt_id").items()
        if p in turns and p not in syn
    }
    out["goal"] = (sum(1 for r in goals.values() if r["goal_achieved"]), len(goals))
    return out


# --------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------
def test_determinism(runs: dict) -> None:
    (a, ma), (b, mb) = runs["parquet"], runs["parquet_again"]
    assert ma == mb
    fa = [p.relative_to(a) for p in sorted(a.rglob("*")) if p.is_file()]
    fb = [p.relative_to(b) for p in sorted(b.rglob("*")) if p.is_file()]
    assert fa == fb
    for rel in fa:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_timings_measure_the_writing_and_stay_out_of_the_output(tmp_path: Path) -> None:
    """`generate(..., timings=)` (what `lara bench` reports): the process's CPU seconds
    and the part of them spent writing files, each file timed in its writer thread; the
    files and the manifest are those of a run without timings."""
    config = dict(sessions=300, seed=5, replay=False)
    timings: dict[str, float] = {}
    timed = generate(GeneratorConfig(**config), tmp_path / "a", False, timings=timings)
    plain = generate(GeneratorConfig(**config), tmp_path / "b", False)
    assert timed == plain
    assert set(timings) == {"cpu_seconds", "write_cpu_seconds"}
    assert 0 < timings["write_cpu_seconds"] < timings["cpu_seconds"]
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.parquet"))
    assert files and all(
        (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes() for rel in files
    )


def test_seed_changes_data(tmp_path: Path) -> None:
    m1 = generate(GeneratorConfig(sessions=300, seed=1, replay=False), tmp_path / "a", False)
    m2 = generate(GeneratorConfig(sessions=300, seed=2, replay=False), tmp_path / "b", False)
    assert m1["tables"]["prompts"]["rows_written"] != m2["tables"]["prompts"]["rows_written"] or (
        m1["planted"] != m2["planted"]
    )


@pytest.mark.parametrize("seed", [1, 3, 7])
def test_tiny_bad_row_samples_generate(tmp_path: Path, seed: int) -> None:
    """A sample so small that every prompt label can be a conflict victim
    still generates, and its manifest still accounts for every row."""
    config = GeneratorConfig(sessions=20, days=1, seed=seed, fmt="mixed", gzip=True, bad_rows=True)
    manifest = generate(config, tmp_path / "tiny", False)
    for table, counts in manifest["expected_staging"].items():
        written = manifest["tables"][table]["rows_written"]
        accounted = (
            counts["clean"] + counts["exact_duplicates"] + sum(counts["quarantined"].values())
        )
        assert accounted == written, table
    assert manifest["tables"]["prompts"]["rows_written"] > 0


def test_format_does_not_change_content(runs: dict) -> None:
    mp, mj, mm = runs["parquet"][1], runs["jsonl"][1], runs["mixed"][1]
    for key in ("expected_staging", "planted"):
        assert mp[key] == mj[key] == mm[key]


def test_parquet_schema(runs: dict) -> None:
    root, _ = runs["parquet"]
    for t in TABLES:
        files = [f for f in _files(root, t) if f.suffix == ".parquet"]
        assert files, t
        for f in files:
            s = pq.read_schema(f)
            assert s.names == SCHEMAS[t].names, (t, f)
            # Parquet names the list item field "element"; the type is list<string> either way
            got = [str(x.type).replace("element:", "item:") for x in s]
            assert got == [str(x.type) for x in SCHEMAS[t]], (t, f)
    first = next(f for f in _files(root, "prompts") if f.suffix == ".parquet")
    ts = pq.read_schema(first).field("ts").type
    assert str(ts) == "timestamp[us, tz=UTC]"


def test_parquet_files_follow_the_log_contract(runs: dict) -> None:
    """Columns as the contract lists them, typed by their lara_type (stage_spans.latency_ms
    is written as whole milliseconds, which the contract's float accepts)."""
    arrow = {
        "id": "string",
        "string": "string",
        "enum": "string",
        "timestamp": "timestamp[us, tz=UTC]",
        "boolean": "bool",
        "integer": "int64",
        "float": "double",
        "string_list": "list<item: string>",
    }
    contract = load_contract()
    assert set(contract) - set(TABLES) == {
        "label_sample_design",
        "prompt_label_sample_design",
    }  # not simulated
    root, _ = runs["parquet"]
    for t in TABLES:
        columns = contract[t].columns
        want = [
            "int64" if (t, c.name) == ("stage_spans", "latency_ms") else arrow[c.lara_type]
            for c in columns
        ]
        for f in (f for f in _files(root, t) if f.suffix == ".parquet"):
            s = pq.read_schema(f)
            assert s.names == [c.name for c in columns], (t, f)
            assert [str(x.type).replace("element:", "item:") for x in s] == want, (t, f)


def test_enum_codes_must_be_the_contracts_values() -> None:
    assert coded("actions", "actor", ("agent", "user")) == ("agent", "user")
    with pytest.raises(RuntimeError, match=r"actions\.actor"):
        coded("actions", "actor", ("user", "agent", "robot"))
    with pytest.raises(RuntimeError, match=r"prompts\.surface"):
        coded("prompts", "surface", ("chat", "editor_assistant"))


def test_jsonl_schema_and_types(runs: dict) -> None:
    root, m = runs["jsonl"]
    for t in TABLES:
        names = SCHEMAS[t].names
        for rel, row, reason in _stage(root, t)[2]:
            if reason is None:
                assert list(row) == names, (t, rel)
        assert all(f.name.endswith(".jsonl.gz") for f in _files(root, t)), t


@pytest.mark.parametrize("fmt", ["parquet", "jsonl", "mixed"])
def test_manifest_counts_match_reference_staging(runs: dict, fmt: str) -> None:
    root, m = runs[fmt]
    for t in TABLES:
        counts, _, classified = _stage(root, t)
        exp = m["expected_staging"][t]
        assert len(classified) == m["tables"][t]["rows_written"], t
        assert (
            exp["clean"] + exp["exact_duplicates"] + sum(exp["quarantined"].values())
            == m["tables"][t]["rows_written"]
        )
        assert counts == exp, t
        on_disk = {f.relative_to(root).as_posix() for f in _files(root, t)}
        assert on_disk == set(m["tables"][t]["files"])


def test_mixed_tables_hold_both_formats(runs: dict) -> None:
    root, _ = runs["mixed"]
    for t in TABLES:
        kinds = {f.name.split(".", 1)[1] for f in _files(root, t)}
        assert "parquet" in kinds and "jsonl" in kinds, (t, kinds)


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_each_injected_defect_has_exactly_its_reason(runs: dict, fmt: str) -> None:
    root, m = runs[fmt]
    log = m["bad_rows"]
    expected_kinds = {
        "json_parse_error": set(TABLES),
        "missing_required": set(TABLES),
        "empty_id": set(TABLES),
        "invalid_timestamp": {
            "prompts",
            "retrievals",
            "actions",
            "relevance_labels",
            "prompt_labels",
            "goal_labels",
        },
        "invalid_type": {
            "prompts",
            "relevance_labels",
            "prompt_labels",
            "goal_labels",
            "stage_spans",
            "replay_documents",
            "replay_queries",
        },
        "invalid_enum": {
            "prompts",
            "retrievals",
            "actions",
            "relevance_labels",
            "prompt_labels",
            "goal_labels",
            "stage_spans",
            "replay_documents",
        },
        "out_of_range": {
            "relevance_labels",
            "prompt_labels",
            "stage_spans",
            "replay_documents",
            "replay_queries",
        },
        "invalid_list": {"retrievals"},
    }
    for reason, tables in expected_kinds.items():
        have = {t for t, d in log["defects"].items() if d.get(reason, {}).get("count", 0) > 0}
        assert have == tables, reason
    conflict_tables = {t for t in TABLES if CONTRACT[t]["key"]}
    assert set(log["conflict_keys"]) == conflict_tables
    assert set(log["exact_duplicates"]) == set(TABLES)
    for t, per_reason in log["defects"].items():
        classified = _stage(root, t)[2]
        for reason, info in per_reason.items():
            assert info["count"] == len(info["rows"]) == 2
            for e in info["rows"]:
                if reason == "json_parse_error":
                    hits = [
                        (rel, r)
                        for rel, r, _ in classified
                        if isinstance(r, tuple) and r[1] == e["raw"]
                    ]
                else:
                    hits = [
                        (rel, r)
                        for rel, r, _ in classified
                        if isinstance(r, dict)
                        and all(r.get(c) == v for c, v in e["marker"].items())
                    ]
                assert len(hits) == 1, (t, reason, e["marker"])
                rel, row = hits[0]
                assert rel == e["file"]
                assert _classify(t, row) == reason, (t, reason, row)
    # parquet output: JSON-only defects live in bad-rows.jsonl next to parquet parts
    if fmt == "parquet":
        bad_files = [f for t in TABLES for f in _files(root, t) if f.name == "bad-rows.jsonl"]
        assert bad_files
        assert all((f.parent / "part-0.parquet").exists() for f in bad_files)


def test_unnormalised_enums_are_clean(runs: dict) -> None:
    root, m = runs["parquet"]
    un = m["bad_rows"]["unnormalised_enums"]
    assert sum(v["count"] for k, v in un.items() if k != "note") >= 8
    raw = _read_raw(root, "prompts")
    odd = [r for _, r in raw if isinstance(r, dict) and isinstance(r.get("surface"), str)]
    odd = [r for r in odd if r["surface"] not in ("chat", "editor_assistant", "template_search")]
    odd = [r for r in odd if _classify("prompts", r) is None]
    assert odd and all(r["surface"] != r["surface"].strip().lower() for r in odd)


def test_json_timestamps_have_offsets_and_right_instant(runs: dict) -> None:
    pj, _ = runs["jsonl"]
    pp, _ = runs["parquet"]
    suffixes = Counter()
    raw_ts: dict[str, str] = {}
    for f in _files(pj, "actions"):
        with gzip.open(f, "rt") as fh:
            for line in fh:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if isinstance(r.get("ts"), str) and _parse_ts(r["ts"]) and r.get("action_id"):
                    raw_ts[r["action_id"]] = r["ts"]
                    suffixes[r["ts"][-6:] if r["ts"][-6] in "+-" else "Z"] += 1
    assert {"Z", "+00:00", "+02:00", "-05:00"} <= set(suffixes)
    par = {
        r["action_id"]: r["ts"]
        for f in _files(pp, "actions")
        if f.suffix == ".parquet"
        for r in pq.read_table(f, columns=["action_id", "ts"]).to_pylist()
    }
    shifted = 0
    for aid, s in raw_ts.items():
        if aid in par:
            assert _parse_ts(s) == par[aid], (aid, s)
            if s.endswith("+02:00"):
                # local wall clock is two hours ahead of UTC
                assert _parse_ts(s).replace(tzinfo=None) - par[aid].replace(tzinfo=None) == (
                    dt.timedelta(hours=2)
                )
                shifted += 1
    assert shifted > 0


def test_replay_realised_on_staged_rows(runs: dict) -> None:
    """Realised replay values use clean rows with normalised enums (bad rows injected)."""
    root, m = runs["parquet"]
    docs = _stage(root, "replay_documents")[1]
    real = m["planted"]["replay"]["realised"]
    assert real["n_documents"] == len(docs)
    assert real["failed_replays"] == sum(d["counterfactual_status"] != "ok" for d in docs)
    un = m["bad_rows"]["unnormalised_enums"]["replay_documents"]["rows"]
    assert any(r["value"].strip().lower() == "ok" for r in un)


@pytest.mark.parametrize("fmt", ["parquet", "mixed"])
def test_planted_exact_values_match_reference_mart(runs: dict, fmt: str) -> None:
    root, m = runs[fmt]
    clean = {t: _stage(root, t)[1] for t in TABLES[:6]}
    ref = _mini_mart(clean)
    ex = m["planted"]["exact"]

    def nd(x: dict) -> tuple[int, int]:
        return x["numerator"], x["denominator"]

    assert dict(ref["prompts_per_surface"]) == {
        k: v for k, v in ex["prompts_per_surface"].items() if v
    }
    for s in ("chat", "editor_assistant", "template_search"):
        assert ref["trigger"][s] == nd(ex["trigger_rate"][s]), s
    assert ref["assistant_sessions"] == (
        ex["sessions"]["assistant_sessions"],
        ex["sessions"]["prompts_per_assistant_session"]["numerator"],
    )
    t0 = ex["tier0_labelled"]
    assert ref["misroute"] == nd(t0["misroute"])
    assert ref["missed"] == nd(t0["missed_retrieval"])
    assert ref["multi"] == nd(t0["multi_intent"])
    assert ref["in_scope"] == ex["retrievals"]["in_scope"]
    assert ref["misrouted"] == ex["retrievals"]["misrouted_labelled"]
    assert ref["empty"] == ex["empty_result_rate"]["numerator"]
    assert dict(ref["roles"]) == {k: v for k, v in ex["retrievals_per_role"].items() if v}
    acr = {k: v["numerator"] for k, v in ex["agent_consumption_per_role"].items()}
    acr.pop("overall")
    assert dict(ref["acr"]) == {k: v for k, v in acr.items() if v}
    cs = ex["cross_session_outcomes"]
    assert ref["cross"] == (cs["events"], cs["attributions"])
    assert cs["events"] > 0
    sy = ex["synthetic"]
    assert ref["synthetic"] == (sy["prompts"], sy["retrievals"], sy["actions"])
    assert ref["goal"] == nd(ex["goal_rate"])
    assert m["bad_rows"]["conflict_keys"]["prompts"]  # victims really removed


def test_behaviour(big: tuple[Path, dict]) -> None:
    root, m = big
    ex = m["planted"]["exact"]
    pps = ex["prompts_per_surface"]
    assistant = pps["chat"] + pps["editor_assistant"]
    assert 5 * assistant < pps["template_search"] < 20 * assistant
    tr = {k: v["rate"] for k, v in ex["trigger_rate"].items()}
    assert tr["template_search"] == 1.0
    assert tr["editor_assistant"] < tr["chat"] < 0.2
    assert abs(ex["empty_result_rate"]["rate"] - 0.015) < 0.004
    ppa = ex["sessions"]["prompts_per_assistant_session"]["rate"]
    ppc = ex["sessions"]["prompts_per_chat_session"]["rate"]
    assert 1.8 < ppa < 2.3 and 2.4 < ppc < 2.9
    rw = m["planted"]["expected"]["naive_rewrite_rate_latent"]
    assert rw["chat"] > rw["template_search"]
    roles = ex["retrievals_per_role"]
    assert roles["find"] > roles["browse"] > roles["operate"] and roles["unknown"] > 0
    assert ex["cross_session_outcomes"]["events"] > 0
    assert ex["synthetic"]["prompts"] > 0


def test_nullable_columns_are_sometimes_null(big: tuple[Path, dict]) -> None:
    root, _ = big
    nullable = {
        "prompts": ["prompt_text", "prompt_kind", "is_synthetic"],
        "retrievals": ["query_text", "retrieval_role", "displayed_asset_ids"],
        "actions": ["prompt_id", "consumed_asset_id", "source_retrieval_id", "document_id"],
        "replay_documents": [
            "proxy_score",
            "answer_f1_counterfactual",
            "next_recall_counterfactual",
            "turns_counterfactual",
        ],
    }
    for t, cols in nullable.items():
        tbl = pq.ParquetDataset(root / t).read(columns=cols)
        for c in cols:
            n = tbl[c].null_count
            assert 0 < n < tbl.num_rows, (t, c)
    req = pq.ParquetDataset(root / "prompts").read(columns=["prompt_id", "ts", "surface"])
    assert all(req[c].null_count == 0 for c in req.column_names)


def test_cross_session_exports_have_no_prompt(big: tuple[Path, dict]) -> None:
    root, _ = big
    acts = pq.ParquetDataset(root / "actions").read()
    sessions = pq.ParquetDataset(root / "prompts").read(columns=["session_guid"])[0]
    later = acts.filter(pc.invert(pc.is_in(acts["session_guid"], sessions.unique()))).to_pylist()
    assert later
    assert all(a["prompt_id"] is None and a["document_id"] for a in later)
    assert {a["action_type"] for a in later} >= {"export", "edit"}


def test_replay_realised(big: tuple[Path, dict]) -> None:
    root, m = big
    rp = m["planted"]["replay"]
    real = rp["realised"]
    assert abs(real["spearman_ctu_sru"] - rp["parameters"]["replay_rho"]) < 0.05
    assert abs(real["spearman_ctu_proxy"] - rp["parameters"]["proxy_rho"]) < 0.05
    assert 2.5 < real["oer"]["ratio"] < 6.5
    assert 0.15 < real["bridge_cell_share_reader"] < 0.35
    docs = pq.ParquetDataset(root / "replay_documents").read().to_pandas()
    failed = docs["counterfactual_status"] != "ok"
    assert real["failed_replays"] == int(failed.sum()) > 0
    f1c = np.where(failed, 0.0, docs["answer_f1_counterfactual"].fillna(0))
    rc = np.where(failed, 0.0, docs["next_recall_counterfactual"].fillna(0))
    tc = np.where(failed, 100, docs["turns_counterfactual"].fillna(0))
    ctu = (
        docs["answer_f1_original"]
        - f1c
        + docs["next_recall_original"]
        - rc
        - (docs["turns_original"] - tc)
    )
    sru = docs["reader_score_with"] - docs["reader_score_without"]
    rho = np.corrcoef(ctu.rank(), sru.rank())[0, 1]
    assert rho == pytest.approx(real["spearman_ctu_sru"], abs=1e-6)


def test_config_validation() -> None:
    with pytest.raises(ValueError):
        GeneratorConfig(fmt="csv").validate()
    with pytest.raises(ValueError):
        GeneratorConfig(replay_rho=1.5).validate()
    cfg = GeneratorConfig(sessions=5)
    assert GeneratorConfig.from_dict(json.loads(json.dumps(cfg.__dict__))) == cfg


def test_cli_reports_rows_written(tmp_path: Path, capsys) -> None:
    from lara.cli import main

    out = tmp_path / "cli"
    args = ["generate", "--sessions", "60", "--days", "1", "--seed", "2", "--out", str(out)]
    assert main(args) == 0
    manifest = json.loads((out / "_manifest.json").read_text())
    total = sum(t["rows_written"] for t in manifest["tables"].values())
    assert total > 0
    assert f"wrote {total:,} rows" in capsys.readouterr().out


@pytest.mark.parametrize("value", ["two", "0", "-3", "2.5"])
def test_a_generator_thread_count_that_is_not_a_whole_number_names_the_setting(
    monkeypatch, capsys, tmp_path, value
):
    from lara import cli
    from lara.generate.config import thread_count

    monkeypatch.setenv("LARA_GENERATE_THREADS", value)
    with pytest.raises(ValueError, match="LARA_GENERATE_THREADS must be a whole number"):
        thread_count()
    # `lara generate` says so and exits 2 (a usage error), no traceback, no file
    out = tmp_path / "out"
    assert cli.main(["generate", "--sessions", "5", "--days", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    # the message alone: no progress bar was started before the setting was read
    assert err == (
        "lara generate: LARA_GENERATE_THREADS must be a whole number of at least 1, "
        f"got {value!r}\n"
    )
    assert not list(out.rglob("*.parquet")) and not list(out.rglob("*.jsonl*"))
    monkeypatch.setenv("LARA_GENERATE_THREADS", "3")
    assert thread_count() == 3

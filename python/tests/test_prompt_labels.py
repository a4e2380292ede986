"""Tier 0 prompt labelling: `lara label-sample --unit prompts` on a small warehouse of
prompts, `lara label-import --unit prompts` with hostile rows, and a weighted (Hajek)
share of retrieval intent checked against a population whose share is known."""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from lara.cli import main
from lara.labels import draw_design, weighted_mean
from lara.prompt_labels import (
    PROMPT_JUDGING_COLUMNS,
    PROMPT_REJECT_REASONS,
    add_label_import_arguments,
    label_import_main,
    label_import_prompts,
    label_sample_prompts,
)

SAMPLED_AT = dt.datetime(2026, 8, 20, 9, 30, tzinfo=dt.UTC)
IMPORTED_AT = dt.datetime(2026, 8, 22, 12, 0, tzinfo=dt.UTC)
STAMP = "20260822T120000000000Z"
HOSTILE_TEXTS = [
    "'; drop table x; --",
    'she said "find the Q3 deck", then\nleft',
    "naïve 検索 🚀 \u202etxet\u202c",
    "x" * 5000,
]
ASSISTANT = ("chat", "editor_assistant")
TRUE_INTENT_PROBABILITY = {"retrieval": 0.9, "no_retrieval": 0.1}


def _warehouse(path: Path, n: int = 600, seed: int = 5) -> pd.DataFrame:
    """A warehouse with the two relations label-sample --unit prompts reads:
    `marts.fct_prompts` (synthetic prompts already left out, as the mart does) and
    `staging.stg_lara__prompts` (every prompt, with its text and time)."""
    rng = np.random.default_rng(seed)
    surface = rng.choice(["chat", "editor_assistant", "template_search"], n, p=[0.4, 0.3, 0.3])
    prompted_at = pd.Timestamp("2026-08-03T00:00:00") + pd.to_timedelta(
        rng.integers(0, 14 * 86400, n), unit="s"
    )  # Monday of 2026-W32 + 14 days: two ISO weeks
    texts = [f"prompt {i}" for i in range(n)]
    texts[: len(HOSTILE_TEXTS)] = HOSTILE_TEXTS
    staged = pd.DataFrame(
        {
            "prompt_id": [f"p{i:04d}" for i in range(n)],
            "session_guid": [f"s{i // 4:04d}" for i in range(n)],
            "surface": surface,
            "prompt_text": texts,
            "prompted_at": prompted_at,
            "is_synthetic": rng.random(n) < 0.05,
        }
    )
    staged.loc[:3, "is_synthetic"] = False  # the hostile texts stay in the frame
    staged.loc[:3, "surface"] = "chat"
    marts = staged[~staged["is_synthetic"]].assign(
        prompt_date=lambda d: d["prompted_at"].dt.date,
        is_retrieval_turn=lambda d: rng.random(len(d)) < np.where(d["surface"] == "chat", 0.4, 0.3),
    )[["prompt_id", "session_guid", "surface", "prompt_date", "is_retrieval_turn"]]
    with duckdb.connect(str(path)) as con:
        con.execute("create schema staging")
        con.execute("create schema marts")
        con.register("s", staged)
        con.register("m", marts)
        con.execute("create table staging.stg_lara__prompts as select * from s")
        con.execute("create table marts.fct_prompts as select * from m")
    frame = marts.merge(staged[["prompt_id", "prompt_text", "prompted_at"]], on="prompt_id")
    return frame.assign(
        triggered=np.where(frame["is_retrieval_turn"], "retrieval", "no_retrieval"),
        iso_week=frame["prompted_at"].dt.strftime("%G-W%V"),
    )


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    root = tmp_path_factory.mktemp("prompt_labels")
    population = _warehouse(root / "w.duckdb")
    out = root / "sample"
    summary = label_sample_prompts(root / "w.duckdb", out, total=90, seed=11, sampled_at=SAMPLED_AT)
    return root, population, out, summary


def _strata(frame: pd.DataFrame) -> pd.Series:
    return frame["surface"] + "|" + frame["triggered"] + "|" + frame["iso_week"]


# --- sampling ---------------------------------------------------------------------------


def test_frame_is_the_assistant_prompts_and_probabilities_are_n_over_n(sampled):
    _, population, out, summary = sampled
    frame = population[population["surface"].isin(ASSISTANT)]
    assert summary["unit"] == "prompts" and summary["scope"] == "assistant"
    assert summary["prompts_in_frame"] == len(frame)
    assert summary["prompts_sampled"] == summary["judging_rows"] == 90
    design = pd.read_csv(out / "sample_design.csv", dtype={"prompt_id": str})
    assert list(design.columns) == [
        "prompt_id",
        "stratum",
        "stratum_population_size",
        "stratum_sample_size",
        "inclusion_probability",
        "sampled_at",
    ]
    assert len(design) == 90 and design["prompt_id"].is_unique
    assert set(design["prompt_id"]) <= set(frame["prompt_id"])  # no template_search
    sizes = _strata(frame).value_counts()
    assert set(sizes.index) == set(summary["strata_sizes"]) and len(sizes) == 8  # 2 x 2 x 2
    assert all(len(s.split("|")) == 3 for s in sizes.index)
    for row in design.itertuples():
        assert row.stratum_population_size == sizes[row.stratum]
        assert row.inclusion_probability == pytest.approx(
            row.stratum_sample_size / row.stratum_population_size
        )
    drawn = design.groupby("stratum").size()
    assert drawn.to_dict() == design.groupby("stratum")["stratum_sample_size"].first().to_dict()
    assert drawn.sum() == 90 and (drawn >= 1).all()


def test_judging_files_carry_the_prompt_and_blank_labels(sampled):
    _, population, out, _ = sampled
    judging = pd.read_csv(out / "judging.csv", dtype=str, keep_default_na=False)
    lines = pd.read_json(out / "judging.jsonl", lines=True, dtype=False)
    assert list(judging.columns) == list(lines.columns) == PROMPT_JUDGING_COLUMNS
    assert list(judging["prompt_id"]) == list(lines["prompt_id"])
    blank = ["has_retrieval_intent", "retrieval_intent_count", "judge", "judged_at"]
    assert (judging[blank] == "").all().all() and lines[blank].isna().all().all()
    assert set(judging["sampled_at"]) == {"2026-08-20T09:30:00.000000Z"}
    truth = population.set_index("prompt_id")
    for row in lines.itertuples():  # texts, hostile ones too, unchanged in both files
        assert row.prompt_text == truth.loc[row.prompt_id, "prompt_text"]
        assert row.stratum == f"{row.surface}|{row.triggered}|{row.iso_week}"
    assert list(judging["prompt_text"]) == list(lines["prompt_text"])
    assert judging["stratum"].is_monotonic_increasing


def test_scope_all_takes_every_surface(sampled, tmp_path):
    root, population, _, _ = sampled
    summary = label_sample_prompts(
        root / "w.duckdb", tmp_path, total=30, scope="all", strata=("surface",)
    )
    assert summary["prompts_in_frame"] == len(population)
    assert set(summary["strata_sizes"]) == {"chat", "editor_assistant", "template_search"}


def test_sample_is_reproducible_per_seed(sampled):
    root, _, out, _ = sampled
    again, other = root / "again", root / "other"
    label_sample_prompts(root / "w.duckdb", again, total=90, seed=11, sampled_at=SAMPLED_AT)
    label_sample_prompts(root / "w.duckdb", other, total=90, seed=12, sampled_at=SAMPLED_AT)
    for name in ("judging.csv", "judging.jsonl", "sample_design.csv", "_sample.json"):
        assert (again / name).read_bytes() == (out / name).read_bytes()
    assert (other / "judging.csv").read_text() != (out / "judging.csv").read_text()


def test_per_stratum_sizes_by_pattern(sampled, tmp_path):
    root, population, _, _ = sampled
    frame = population[population["surface"].isin(ASSISTANT)]
    summary = label_sample_prompts(
        root / "w.duckdb",
        tmp_path,
        sizes={"chat|retrieval": 7, "*|no_retrieval": 3, "editor*": 1000},
        default_size=0,
        strata=("surface", "triggered"),
        sampled_at=SAMPLED_AT,
    )
    design = pd.read_csv(tmp_path / "sample_design.csv")
    population_sizes = (frame["surface"] + "|" + frame["triggered"]).value_counts()
    assert design.groupby("stratum").size().to_dict() == {
        "chat|no_retrieval": 3,
        "chat|retrieval": 7,
        "editor_assistant|no_retrieval": 3,  # the first matching pattern wins
        "editor_assistant|retrieval": population_sizes["editor_assistant|retrieval"],  # capped
    }
    assert summary["allocation"] == "per_stratum"
    census = design[design["stratum"] == "editor_assistant|retrieval"]
    assert (census["inclusion_probability"] == 1).all()


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_sample_command_line_and_its_errors(sampled, tmp_path):
    root, _, _, _ = sampled
    warehouse = str(root / "w.duckdb")
    common = ["label-sample", "--unit", "prompts", "--warehouse", warehouse]
    code, out, _ = _run(*common, "--out", str(tmp_path / "a"), "--total", "20", "--seed", "3")
    assert code == 0 and "20 of" in out and "prompts in 8 strata" in out
    code, _, _ = _run(*common, "--out", str(tmp_path / "b"), "--size", "*|retrieval|*=2")
    assert code == 0
    assert len(pd.read_csv(tmp_path / "b" / "sample_design.csv")) == 8  # 4 strata x 2
    code, _, _ = _run(
        *common, "--out", str(tmp_path / "c"), "--total", "5", "--strata", "triggered"
    )
    assert code == 0 and json.loads((tmp_path / "c" / "_sample.json").read_text())["strata"] == 2
    for extra, message in (
        (["--total", "5", "--k", "5"], "--k: only with --unit retrievals"),
        (["--total", "5", "--include-empty"], "--include-empty: only with --unit retrievals"),
        (["--total", "5", "--scope", "tier"], "--scope tier is not assistant|all"),
        (["--total", "5", "--strata", "retrieval_role"], "strata must be among"),
        ([], "give a total or per-stratum sizes"),
    ):
        code, _, err = _run(*common, "--out", str(tmp_path / "x"), *extra)
        assert code == 2 and message in err, (extra, err)
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    code, _, err = _run(*common[:-1], str(empty), "--out", str(tmp_path / "y"), "--total", "5")
    assert code == 2 and "marts.fct_prompts" in err and "run `dbt build` first" in err
    with duckdb.connect(str(empty)) as con:  # only template searches: nothing in scope
        con.execute("create schema marts; create schema staging")
        con.execute(
            "create table marts.fct_prompts as select 'p1' as prompt_id, "
            "'template_search' as surface, date '2026-08-03' as prompt_date, "
            "true as is_retrieval_turn"
        )
        con.execute(
            "create table staging.stg_lara__prompts as select 'p1' as prompt_id, "
            "'x' as prompt_text, timestamp '2026-08-03 10:00' as prompted_at"
        )
    code, _, err = _run(*common[:-1], str(empty), "--out", str(tmp_path / "y"), "--total", "5")
    assert code == 2 and "the sampling frame is empty" in err
    assert not (tmp_path / "y").exists()
    # the default unit is still retrievals (and --scope assistant is not one of theirs)
    code, _, err = _run("label-sample", "--warehouse", warehouse, "--out", str(tmp_path / "z"))
    assert code == 2 and "give a total" in err
    code, _, err = _run(
        "label-sample", "--warehouse", warehouse, "--out", str(tmp_path / "z"), "--total", "5"
    )
    assert code == 2 and "stg_lara__retrievals" in err
    code, _, err = _run("label-sample", "--scope", "assistant", "--out", "z", "--total", "5")
    assert code == 2 and "not tier|non_synthetic|all" in err


# --- importing judgements ---------------------------------------------------------------


def _judged(out: Path) -> pd.DataFrame:
    judging = pd.read_csv(out / "judging.csv", dtype=str, keep_default_na=False)
    count = judging.index % 3  # 0, 1 or 2 intents
    judging["has_retrieval_intent"] = np.where(count > 0, "true", "false")
    judging["retrieval_intent_count"] = count.astype(str)
    judging["judge"] = np.where(judging.index % 2 == 0, "human", "llm")
    judging["judged_at"] = np.where(
        judging.index % 4 < 2, "2026-08-21T10:00:00Z", "2026-08-22T08:00:00+02:00"
    )
    return judging


def _written(raw: Path, table: str) -> list[dict]:
    return [
        json.loads(line)
        for path in sorted((raw / table).rglob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]


def test_import_writes_labels_and_design_partitions(sampled, tmp_path):
    _, _, out, _ = sampled
    judging = _judged(out)
    second_judge = judging.iloc[[0]].assign(
        judge="llm" if judging["judge"].iloc[0] == "human" else "human"
    )
    spelled = judging.iloc[[1, 2]].copy()
    spelled["has_retrieval_intent"] = ["YES", "1"]  # other spellings of true
    file = tmp_path / "returned.csv"
    pd.concat([judging.iloc[3:], judging.iloc[[3]], second_judge, spelled]).to_csv(
        file, index=False
    )
    raw = tmp_path / "raw"
    report = label_import_prompts(file, raw, imported_at=IMPORTED_AT)
    assert report["rejected"] == 0 and report["unjudged_skipped"] == 0
    assert report["exact_duplicates_dropped"] == 1  # row 3 twice: written once
    assert report["labels_written"] == len(judging) - 3 + 1 + 2
    files = sorted(p.relative_to(raw).as_posix() for p in raw.rglob("*.jsonl"))
    assert files == [
        f"prompt_label_sample_design/dt=2026-08-20/design-{STAMP}.jsonl",
        f"prompt_labels/dt=2026-08-21/labels-{STAMP}.jsonl",
        f"prompt_labels/dt=2026-08-22/labels-{STAMP}.jsonl",
    ]
    labels = _written(raw, "prompt_labels")
    assert len(labels) == report["labels_written"]
    assert {tuple(sorted(line)) for line in labels} == {
        ("has_retrieval_intent", "judge", "judged_at", "prompt_id", "retrieval_intent_count")
    }
    assert all(isinstance(line["has_retrieval_intent"], bool) for line in labels)
    assert all(isinstance(line["retrieval_intent_count"], int) for line in labels)
    assert all(
        line["has_retrieval_intent"] == (line["retrieval_intent_count"] > 0) for line in labels
    )
    assert {line["judged_at"] for line in labels} == {
        "2026-08-21T10:00:00.000000Z",
        "2026-08-22T06:00:00.000000Z",
    }
    by_id = {line["prompt_id"]: line for line in labels}
    assert by_id[judging["prompt_id"].iloc[1]]["has_retrieval_intent"] is True
    design = _written(raw, "prompt_label_sample_design")
    assert len(design) == len({d["prompt_id"] for d in design}) == len(judging)  # once a prompt
    expected = pd.read_csv(out / "sample_design.csv", dtype={"prompt_id": str})
    assert {d["prompt_id"] for d in design} == set(expected["prompt_id"])
    first = design[0]
    assert set(first) == {
        "prompt_id",
        "stratum",
        "inclusion_probability",
        "sampled_at",
        "stratum_population_size",
        "stratum_sample_size",
    }
    row = expected.set_index("prompt_id").loc[first["prompt_id"]]
    assert first["inclusion_probability"] == pytest.approx(row["inclusion_probability"])
    assert first["stratum_population_size"] == row["stratum_population_size"]
    assert first["sampled_at"] == "2026-08-20T09:30:00.000000Z"


def _hostile_rows(judging: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """One or more malformed rows per reject reason (JSON parsing aside)."""
    base = judging.iloc[:1]
    rows, expected = [], {}

    def bad(reason: str, **values: str) -> None:
        row = base.copy()
        for column, value in values.items():
            row[column] = value
        rows.append(row)
        expected[reason] = expected.get(reason, 0) + 1

    bad("missing_prompt_id", prompt_id="  ")
    bad("invalid_prompt_id", prompt_id="'; drop table x; --")
    bad("invalid_prompt_id", prompt_id="prömpt-検索")
    bad("invalid_prompt_id", prompt_id="p" * 300)
    bad("invalid_prompt_id", prompt_id='p"1')
    bad("unknown_prompt_id", prompt_id="p9999")
    bad("invalid_has_retrieval_intent", has_retrieval_intent="maybe")
    bad("invalid_has_retrieval_intent", has_retrieval_intent="'; drop table x; --")
    bad("invalid_retrieval_intent_count", has_retrieval_intent="true", retrieval_intent_count="-1")
    bad("invalid_retrieval_intent_count", has_retrieval_intent="true", retrieval_intent_count="1.5")
    bad("invalid_retrieval_intent_count", has_retrieval_intent="true", retrieval_intent_count="two")
    bad("invalid_retrieval_intent_count", has_retrieval_intent="true", retrieval_intent_count="")
    bad(
        "invalid_retrieval_intent_count",
        has_retrieval_intent="yes",
        retrieval_intent_count="9" * 40,
    )
    bad("inconsistent_intent_count", has_retrieval_intent="false", retrieval_intent_count="2")
    bad("inconsistent_intent_count", has_retrieval_intent="TRUE", retrieval_intent_count="0")
    bad("invalid_judge", judge="robot")
    bad("invalid_judge", judge="human'; --")
    bad("invalid_judged_at", judged_at="yesterday")
    bad("invalid_judged_at", judged_at="2026-13-45T99:00:00Z")
    bad("invalid_inclusion_probability", inclusion_probability="0")
    bad("invalid_inclusion_probability", inclusion_probability="1.5")
    bad("invalid_inclusion_probability", inclusion_probability="NaN")
    bad("invalid_sampled_at", sampled_at="soon")
    bad("missing_stratum", stratum=" ")
    bad("invalid_stratum_size", stratum_population_size="0")
    bad("invalid_stratum_size", stratum_sample_size="inf")
    bad("invalid_stratum_size", stratum_sample_size="2.5")
    conflict = judging.iloc[[5, 5]].copy()  # the same key, two different labels
    conflict["judged_at"] = "2026-08-23T00:00:00Z"
    conflict["has_retrieval_intent"] = ["true", "false"]
    conflict["retrieval_intent_count"] = ["1", "0"]
    rows.append(conflict)
    expected["conflicting_duplicate"] = 2
    return pd.concat(rows), expected


def test_every_reject_reason_from_hostile_rows(sampled, tmp_path):
    _, _, out, _ = sampled
    judging = _judged(out)
    hostile, expected = _hostile_rows(judging)
    good = judging.iloc[10:20]
    unjudged = judging.iloc[[20]].assign(has_retrieval_intent="", retrieval_intent_count="")
    no_intent = judging.iloc[[21]].assign(has_retrieval_intent="No", retrieval_intent_count="")
    frame = pd.concat([good, hostile, unjudged, no_intent])
    lines = [json.dumps(r, ensure_ascii=False) for r in frame.to_dict("records")]
    lines.insert(3, "{not json")
    lines.insert(5, '["a list, not an object"]')
    expected["json_parse_error"] = 2
    file = tmp_path / "returned.jsonl"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = label_import_prompts(
        file,
        tmp_path / "raw",
        known_prompt_ids=set(judging["prompt_id"]),
        imported_at=IMPORTED_AT,
    )
    assert report["rejected_by_reason"] == dict(sorted(expected.items()))
    assert set(report["rejected_by_reason"]) == set(PROMPT_REJECT_REASONS)
    assert report["unjudged_skipped"] == 1
    assert report["labels_written"] == len(good) + 1  # "No" with a blank count: 0 intents
    rejects = [json.loads(x) for x in Path(report["rejects_file"]).read_text().splitlines()]
    assert len(rejects) == report["rejected"] == sum(expected.values())
    parse_errors = [r for r in rejects if r["reject_reason"] == "json_parse_error"]
    assert [r["line"] for r in parse_errors] == [4, 6]
    assert parse_errors[0]["row"] == "{not json\n"
    ids = {r["row"]["prompt_id"] for r in rejects if isinstance(r["row"], dict)}
    assert {"'; drop table x; --", "prömpt-検索", "p" * 300} <= ids  # kept as read
    written = {line["prompt_id"] for line in _written(tmp_path / "raw", "prompt_labels")}
    assert written == set(good["prompt_id"]) | set(no_intent["prompt_id"])
    assert not any("p9999" in line or "drop" in line for line in written)


def test_unjudged_rows_are_skipped_or_rejected(sampled, tmp_path):
    _, _, out, _ = sampled
    report = label_import_prompts(out / "judging.csv", tmp_path / "raw")
    assert report["labels_written"] == 0 and report["rejected"] == 0
    assert report["unjudged_skipped"] == report["rows_read"] == 90
    assert not (tmp_path / "raw").exists()
    report = label_import_prompts(out / "judging.csv", tmp_path / "raw", skip_unjudged=False)
    assert report["rejected_by_reason"] == {"invalid_has_retrieval_intent": 90}


def _import_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_label_import_arguments(parser)
    return parser.parse_args(list(argv))


def test_import_exit_codes_sample_check_and_no_design(sampled, tmp_path):
    _, _, out, _ = sampled
    judging = _judged(out).head(6)
    file = tmp_path / "returned.csv"
    judging.to_csv(file, index=False)
    prompts = ["--unit", "prompts"]
    raw = tmp_path / "raw"
    assert label_import_main(_import_args(str(file), "--out", str(raw), *prompts)) == 0
    assert (raw / "prompt_label_sample_design").is_dir()
    bad = pd.concat([judging, judging.iloc[[0]].assign(judge="robot")])
    bad.to_csv(tmp_path / "bad.csv", index=False)
    args = _import_args(str(tmp_path / "bad.csv"), "--out", str(tmp_path / "r1"), *prompts)
    assert label_import_main(args) == 1  # valid rows written, one rejected
    assert (tmp_path / "bad.csv.rejects.jsonl").exists()
    args = _import_args(
        str(tmp_path / "bad.csv"),
        "--out",
        str(tmp_path / "r2"),
        "--allow-rejects",
        "--no-design",
        "--rejects",
        str(tmp_path / "rejects.jsonl"),
        *prompts,
    )
    assert label_import_main(args) == 0
    assert (tmp_path / "r2" / "prompt_labels").is_dir()
    assert not (tmp_path / "r2" / "prompt_label_sample_design").exists()
    assert (tmp_path / "rejects.jsonl").exists()
    # --sample: only the sample's prompt ids
    foreign = judging.iloc[[0]].assign(prompt_id="p9998")
    pd.concat([judging, foreign]).to_csv(tmp_path / "foreign.csv", index=False)
    args = _import_args(
        str(tmp_path / "foreign.csv"), "--out", str(tmp_path / "r3"), "--sample", str(out), *prompts
    )
    assert label_import_main(args) == 1
    rejects = (tmp_path / "foreign.csv.rejects.jsonl").read_text().splitlines()
    assert [json.loads(r)["reject_reason"] for r in rejects] == ["unknown_prompt_id"]
    # invalid input: exit 2, nothing written
    for argv in (
        [str(tmp_path / "returned.txt"), "--out", str(tmp_path / "r4"), *prompts],
        [str(file), "--out", str(tmp_path / "r4"), "--retrieval-id-pattern", "x", *prompts],
        [str(file), "--out", str(tmp_path / "r4"), "--sample", str(tmp_path / "none"), *prompts],
        [str(file), "--out", str(tmp_path / "r4"), "--prompt-id-pattern", "x"],
        [str(file), "--out", str(tmp_path / "r4"), "--prompt-id-pattern", "(unclosed", *prompts],
    ):
        with contextlib.redirect_stderr(io.StringIO()):
            assert label_import_main(_import_args(*argv)) == 2, argv
    assert not (tmp_path / "r4").exists()
    # a pattern of one's own
    args = _import_args(
        str(file), "--out", str(tmp_path / "r5"), "--prompt-id-pattern", r"q\d+", *prompts
    )
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert label_import_main(args) == 1
    assert not (tmp_path / "r5" / "prompt_labels").exists()


# --- the weighted estimate recovers a known population ----------------------------------


def _truth(population: pd.DataFrame, seed: int = 99) -> pd.Series:
    """Retrieval intent of every frame prompt, drawn with a known probability by
    whether the prompt triggered a retrieval (intent is far likelier where it did)."""
    rng = np.random.default_rng(seed)
    chance = population["triggered"].map(TRUE_INTENT_PROBABILITY).to_numpy()
    return pd.Series(rng.random(len(population)) < chance, index=population["prompt_id"].to_numpy())


#: 60% to all of a stratum of prompts that triggered a retrieval, 30% to 45% of the
#: others. Smaller samples of the rare positives of the no_retrieval
#: strata make the normal interval cover less than 95% (0.91 with 12 a stratum).
OVERSAMPLED = {"*|retrieval|*": 28, "*|no_retrieval|*": 25}


def test_weighted_share_recovers_the_population_where_the_sample_share_does_not(sampled, tmp_path):
    """End to end: a design oversampling the prompts that triggered a retrieval is
    drawn, the sampled prompts are judged with the known truth, imported, read back
    and weighted by their design. The Hajek share of retrieval intent covers the
    population share; the plain share of the judged prompts is far above it."""
    root, population, _, _ = sampled
    frame = population[population["surface"].isin(ASSISTANT)]
    truth = _truth(frame)
    true_share = truth.mean()
    out = tmp_path / "sample"
    label_sample_prompts(root / "w.duckdb", out, sizes=OVERSAMPLED, seed=1, sampled_at=SAMPLED_AT)
    judging = pd.read_csv(out / "judging.csv", dtype=str, keep_default_na=False)
    intent = judging["prompt_id"].map(truth)
    judging["has_retrieval_intent"] = np.where(intent, "true", "false")
    judging["retrieval_intent_count"] = np.where(intent, "1", "0")
    judging["judge"] = "llm"
    judging.to_csv(tmp_path / "judged.csv", index=False)
    raw = tmp_path / "raw"
    report = label_import_prompts(tmp_path / "judged.csv", raw, imported_at=IMPORTED_AT)
    assert report["rejected"] == 0 and report["labels_written"] == len(judging)
    labels = pd.DataFrame(_written(raw, "prompt_labels"))
    design = pd.DataFrame(_written(raw, "prompt_label_sample_design"))
    judged = labels.merge(design, on="prompt_id", validate="one_to_one")
    y = judged["has_retrieval_intent"].astype(float)
    estimate = weighted_mean(y, judged["inclusion_probability"], strata=judged["stratum"])
    assert estimate.ci_low <= true_share <= estimate.ci_high
    assert abs(estimate.estimate - true_share) < 0.05
    assert y.mean() - true_share > 0.1  # the retrieval turns, oversampled, pull it up


def test_weighted_share_is_unbiased_over_many_draws(sampled):
    """The same design drawn again and again from the frame (in memory): the Hajek
    share centres on the population share and its interval covers it about 95% of the
    time; the plain sample share does not."""
    _, population, _, _ = sampled
    frame = population[population["surface"].isin(ASSISTANT)].reset_index(drop=True)
    truth = _truth(frame)
    true_share = truth.mean()
    draws = 400
    weighted, unweighted, covered = np.empty(draws), np.empty(draws), 0
    for seed in range(draws):
        sample = draw_design(
            frame,
            ("surface", "triggered", "iso_week"),
            id_column="prompt_id",
            seed=seed,
            sizes=OVERSAMPLED,
        ).sample
        y = sample["prompt_id"].map(truth).astype(float)
        result = weighted_mean(y, sample["inclusion_probability"], strata=sample["stratum"])
        weighted[seed], unweighted[seed] = result.estimate, y.mean()
        covered += result.ci_low <= true_share <= result.ci_high
    assert abs(weighted.mean() - true_share) < 4 * weighted.std() / np.sqrt(draws)
    assert unweighted.mean() - true_share > 0.1  # about 0.47 against 0.35
    assert 0.9 <= covered / draws <= 0.99

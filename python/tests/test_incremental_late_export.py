"""A late file that re-dates nothing but changes outcomes 20 days back.

A 22-day warehouse is built. Then one file lands in an old partition
(`actions/dt=<day 21>/late-export.jsonl`): a user export in a new,
prompt-less session on day 21 whose source_retrieval_id names a retrieval of
day 1. No session moves to another day, yet the Tier 3 row of that day-1
retrieval must change (a cross-session, retrieval-driven outcome), and so
must day 1's aggregates. The scheduled (incremental) run must touch exactly
that: the day-1 retrieval's session and the new one, days 1 and 21 of the
daily aggregates (and the period totals), nothing else, which the test
reads off the load watermark (`_lara_loaded_at`) of every row. Finally the
warehouse must equal a full refresh over the same files.

Before the late export, a late relevance label lands the same way
(`relevance_labels/dt=<day 21>/late-label.jsonl`, a human judgement of a
day-3 retrieval). A relevance label changes only its own session's rows,
and only in the models that read relevance labels: the run must recompute
that session in `fct_retrievals` and its relevance model, and leave its rows
in the models without relevance labels in their lineage (`fct_prompts`,
`fct_sessions`, the signals) as they were, likewise day 3 of the daily
aggregates that do not read them.

Then a file is rewritten in place without some of its rows (the prompts of
a day-2 session, whose other rows are in other files), and a late file brings a
conflicting version of another prompt: the run must drop those prompts
from every model, as a full refresh would, although no row of its session
was loaded (the base model keeps the row one run as a tombstone, status
`removed`, which puts its session in lara_sessions_this_run; the next
completed run drops the tombstone), and quarantine both versions of the
second. The late file is then rewritten empty: the second prompt is clean
again and leaves dq_quarantine.

Then a late prompt dated the evening before a session's first prompt
moves that session to the day before: every session-grained model must
restamp its rows with the new date (`_lara_session_date`), which is what
reads by session date (lara_in_session_rows_this_run) rely on. The late
file is then rewritten empty: the session moves back a day later, and its
rows stamped with the day before must go, which the delete reaches because
lara_session_dates keeps the earliest date the session has had. The same
again, but the run moving the session back stops after lara_session_dates
(`--select +lara_session_dates`), which is then rebuilt alone
(`--full-refresh`), forgetting the earliest date: the next run must delete
without the bound and still drop the rows stamped with the day before.

Then late files bring a new session of a known user, two days after one of
the user's retrievals, that returns one of its assets again: that earlier
retrieval becomes re-retrieved, although its day is only a lookback day of
the run, and no other user's retrieval of that day is recomputed
(lara_users_this_run). The late prompt is then rewritten to name another
user: the earlier retrieval is no longer re-retrieved, which only the
tombstone of the replaced version can tell the run. A retrieval of another
session then returns the asset, naming a prompt not logged yet; when that
prompt arrives, in a third session, naming the first user, the earlier
retrieval is re-retrieved again. Last, a retrieval of a fourth session
naming that prompt counts in the prompt's row.

Then the reverse of the late export: a late export of a new, prompt-less
session names a retrieval of another day, and a late prompt label then
judges that retrieval's prompt to hold no retrieval intent. The retrieval
is misrouted from then on, and so is the export's attribution, which lives
in the export's session: the label must recompute that session too, which
only the action's `source_retrieval_id` links to the retrieval (the
lineage closure's actions naming a retrieval of a touched session).

Last, references to prompts of other sessions, which the generator never
writes: a late export naming, by prompt_id only, a prompt logged later in
another session takes that prompt's surface when it arrives; a late use of
a retrieval whose prompt is logged in another session, by the temporal rule
in the retrieval's own session, and then exports crediting the prompt's two
retrievals, from two new sessions in two runs, must each reach the prompt's
row in `fct_prompts` (first use evidence, outcome counts over all of its
retrievals, whichever sessions the run recomputes). A relevance label of one
of those retrievals recomputes its session only, which must still find its
prompt in the other session; and a user reject naming the prompt only (the
Tier 2 prompt fallback) must reach the latest of the prompt's retrievals,
as an agent `place` in another session naming the prompt reaches its
retrievals' substitution failures, and keeps them when a later run recomputes
those retrievals without the agent's session; and a later retrieval of the
same session naming a `rewrite` prompt logged in another session re-searches
the earlier one, also after runs that recompute it without that session.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import duckdb
import pytest

from deliveries import build as _build
from warehouse_diff import differences, snapshot

START = dt.date(2026, 8, 1)
DAYS = 22
LATE_DAY = START + dt.timedelta(days=20)


def _query(warehouse: Path, sql: str, params: list | None = None) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def _session_reasons(warehouse: Path) -> dict:
    """The sessions the last run recomputed, with why (lara_sessions_this_run)."""
    return dict(
        _query(warehouse, "select session_guid, reason from run_state.lara_sessions_this_run")
    )


@pytest.fixture(scope="module")
def late_export(tmp_path_factory):
    from lara.generate import GeneratorConfig, generate

    root = tmp_path_factory.mktemp("late_export")
    raw = root / "raw"
    generate(
        GeneratorConfig(sessions=220, days=DAYS, seed=13, start_date=START, replay=False),
        raw,
        progress=False,
    )
    warehouse = root / "incremental.duckdb"
    # Seeds and models only where the test does not look at data tests; the
    # scheduled run under test is a whole `dbt build` (with the tests of its rows).
    _build(raw, warehouse, root, ["build", "--exclude-resource-type", "test"])

    late_label = _deliver_late_label(raw, warehouse, root)
    rewritten = _rewrite_without_a_prompt(raw, warehouse, root)
    returned = _return_an_asset_again(raw, warehouse, root)
    moved = _move_a_session_a_day_earlier(raw, warehouse, root)
    misrouted = _misroute_a_credited_retrieval(raw, warehouse, root)
    prompted = _log_a_named_prompt_later(raw, warehouse, root)
    used = _use_a_retrieval_of_another_sessions_prompt(raw, warehouse, root)
    substituted = _substitute_in_another_session(raw, warehouse, root)
    researched = _research_with_another_sessions_rewrite(raw, warehouse, root)
    credited = _credit_the_retrievals_of_a_prompt_of_another_session(raw, warehouse, root)
    labelled = _label_and_reject_retrievals_of_another_sessions_prompt(raw, warehouse, root)

    # A day-1 retrieval in scope that lineage can credit.
    retrieval_id, session_guid, before_outcomes, before_cross = _query(
        warehouse,
        "select retrieval_id, session_guid, retrieval_driven_outcome_count,"
        " cross_session_outcome_count from marts.fct_retrievals"
        " where retrieval_date = ? and is_in_tier_scope order by retrieval_id limit 1",
        [START],
    )[0]
    before_run = _query(warehouse, "select max(_lara_loaded_at) from marts.fct_retrievals")[0][0]
    before_tier3 = {
        row[0]: row[1:]
        for row in _query(
            warehouse,
            "select coalesce(cast(retrieval_date as varchar), 'period'), completed_retrieval_count,"
            " retrieval_driven_outcome_count, cross_session_outcome_count"
            " from marts.agg_tier3_completion where grouping_level in ('day', 'overall')",
        )
    }

    late_file = raw / "actions" / f"dt={LATE_DAY.isoformat()}" / "late-export.jsonl"
    late_file.write_text(
        json.dumps(
            {
                "action_id": "late_export_1",
                "session_guid": "late_editor_session_1",
                "prompt_id": None,
                "ts": f"{LATE_DAY.isoformat()}T12:00:00Z",
                "actor": "user",
                "action_type": "export",
                "consumed_asset_id": None,
                "source_retrieval_id": retrieval_id,
                "document_id": None,
            }
        )
        + "\n"
    )
    run_log = _build(raw, warehouse, root, ["build"])
    full = root / "full.duckdb"
    _build(raw, full, root, ["build", "--exclude-resource-type", "test"])
    return {
        "warehouse": warehouse,
        "full": full,
        "retrieval_id": retrieval_id,
        "session_guid": session_guid,
        "before": (before_outcomes, before_cross),
        "before_run": before_run,
        "before_tier3": before_tier3,
        "run_log": run_log,
        "late_label": late_label,
        "rewritten": rewritten,
        "returned": returned,
        "moved": moved,
        "misrouted": misrouted,
        "prompted": prompted,
        "used": used,
        "substituted": substituted,
        "researched": researched,
        "credited": credited,
        "labelled": labelled,
        "removed_after_next_run": _query(
            warehouse,
            "select _row_status from staging.base_lara__prompts where prompt_id = ?",
            [rewritten["prompt_id"]],
        ),
    }


REWRITTEN_DAY = START + dt.timedelta(days=1)


def _rewrite_without_a_prompt(raw: Path, warehouse: Path, root: Path) -> dict:
    """Rewrite a day-2 prompts file without the prompts of a session that has
    actions, add a late conflicting version of another prompt, run the
    schedule; then empty the late file and run again. Record what each run did."""
    import pyarrow.parquet as pq

    actions = {
        session
        for path in (raw / "actions").rglob("*.parquet")
        for session in pq.read_table(path, columns=["session_guid"]).column(0).to_pylist()
    }
    (path,) = (raw / "prompts" / f"dt={REWRITTEN_DAY.isoformat()}").glob("*.parquet")
    table = pq.read_table(path)
    sessions = table.column("session_guid").to_pylist()
    # Every prompt of one session goes (so no row of the session is loaded).
    session_guid = next(session for session in sessions if session in actions)
    index = sessions.index(session_guid)
    prompt_id = table.column("prompt_id")[index].as_py()
    pq.write_table(
        table.take([i for i, session in enumerate(sessions) if session != session_guid]), path
    )
    # A conflicting version of another prompt of the day, in a late file.
    rival = next(
        row
        for row in table.to_pylist()
        if row["session_guid"] != session_guid and row["is_synthetic"] is False
    )
    rival_id = rival["prompt_id"]
    rival["prompt_text"] = f"{rival['prompt_text']} (edited)"
    rival["ts"] = rival["ts"].strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    late = path.parent / "late-conflict.jsonl"
    late.write_text(json.dumps(rival) + "\n")
    _build(raw, warehouse, root, ["build"])

    def rival_state() -> dict:
        return {
            "quarantined": _query(
                warehouse,
                "select quarantine_reason from data_quality.dq_quarantine where record_key in"
                " (select _record_key from staging.base_lara__prompts where prompt_id = ?)",
                [rival_id],
            ),
            "in_fct_prompts": _query(
                warehouse, "select count(*) from marts.fct_prompts where prompt_id = ?", [rival_id]
            )[0][0],
        }

    conflicted = rival_state()
    removed = {
        "prompt_id": prompt_id,
        "session_guid": session_guid,
        "in_models": {
            model: _query(
                warehouse, f"select count(*) from {model} where prompt_id = ?", [prompt_id]
            )[0][0]
            for model in ("intermediate.int_prompts_scoped", "marts.fct_prompts")
        },
        "base_statuses": _query(
            warehouse,
            "select _row_status from staging.base_lara__prompts where prompt_id = ?",
            [prompt_id],
        ),
        "reasons": _session_reasons(warehouse),
    }
    late.write_text("")
    _build(raw, warehouse, root, ["build"])
    return {**removed, "conflicted": conflicted, "resolved": rival_state()}


def test_a_row_left_out_of_a_rewritten_file_leaves_every_model(late_export):
    rewritten = late_export["rewritten"]
    assert rewritten["in_models"] == {"intermediate.int_prompts_scoped": 0, "marts.fct_prompts": 0}
    assert rewritten["reasons"].get(rewritten["session_guid"]) == "loaded"
    # A tombstone for one run, dropped by the next completed run.
    assert rewritten["base_statuses"] == [("removed",)]
    assert late_export["removed_after_next_run"] == []


def test_a_conflicting_version_that_leaves_makes_the_first_clean_again(late_export):
    rewritten = late_export["rewritten"]
    assert rewritten["conflicted"]["quarantined"] == [("conflicting_duplicate",)] * 2
    assert rewritten["conflicted"]["in_fct_prompts"] == 0
    assert rewritten["resolved"] == {"quarantined": [], "in_fct_prompts": 1}


RETURN_DAY = START + dt.timedelta(days=12)
RETURN_OFFSET = dt.timedelta(days=2)


def _return_an_asset_again(raw: Path, warehouse: Path, root: Path) -> dict:
    """Land a late session whose retrieval returns an asset of an earlier,
    not re-retrieved retrieval of the same user two days later; run. Then
    give the late session to another user; run. Record both runs."""
    # A unit of a known user on RETURN_DAY, not re-retrieved, with an asset on
    # which the user has no outcome at all (so nothing can come in between).
    retrieval_id, user_id = _query(
        warehouse,
        "select units.retrieval_id, scoped.user_id"
        " from marts.fct_retrieval_reretrievals as units"
        " inner join intermediate.int_retrievals_scoped as scoped"
        " on units.retrieval_id = scoped.retrieval_id"
        " where units.retrieval_date = ? and units.has_known_user and not units.is_reretrieved"
        " and not scoped.is_synthetic"
        " order by units.retrieval_id limit 1",
        [RETURN_DAY],
    )[0]
    outcome_assets = {
        asset
        for (asset,) in _query(
            warehouse,
            "select actions.consumed_asset_id from intermediate.int_actions_scoped as actions"
            " inner join intermediate.int_prompts_scoped as prompts"
            " on actions.session_guid = prompts.session_guid"
            " where prompts.user_id = ? and actions.consumed_asset_id is not null",
            [user_id],
        )
    }
    import pyarrow.parquet as pq

    retrieval = next(
        row
        for path in (raw / "retrievals" / f"dt={RETURN_DAY.isoformat()}").glob("*.parquet")
        for row in pq.read_table(path).to_pylist()
        if row["retrieval_id"] == retrieval_id
    )
    prompt = next(
        row
        for path in (raw / "prompts").rglob("*.parquet")
        for row in pq.read_table(path).to_pylist()
        if row["prompt_id"] == retrieval["prompt_id"]
    )
    asset = next(a for a in retrieval["returned_asset_ids"] if a not in outcome_assets)
    at = (retrieval["ts"] + RETURN_OFFSET).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    day = (RETURN_DAY + RETURN_OFFSET).isoformat()
    late_prompt = {
        **prompt,
        "prompt_id": "late_return_prompt",
        "session_guid": "late_return_session",
        "ts": at,
        "is_synthetic": False,
    }
    late_retrieval = {
        **retrieval,
        "retrieval_id": "late_return_retrieval",
        "prompt_id": "late_return_prompt",
        "session_guid": "late_return_session",
        "ts": at,
        "returned_asset_ids": [asset],
        "displayed_asset_ids": [asset],
    }
    prompt_file = raw / "prompts" / f"dt={day}" / "late-return.jsonl"
    (raw / "retrievals" / f"dt={day}" / "late-return.jsonl").write_text(
        json.dumps(late_retrieval) + "\n"
    )
    prompt_file.write_text(json.dumps(late_prompt) + "\n")
    before_run = _query(
        warehouse, "select max(_lara_loaded_at) from marts.fct_retrieval_reretrievals"
    )[0][0]

    def state() -> dict:
        return {
            "unit": _query(
                warehouse,
                "select is_reretrieved, _lara_loaded_at > ? from marts.fct_retrieval_reretrievals"
                " where retrieval_id = ?",
                [before_run, retrieval_id],
            )[0],
            "users": {
                user
                for (user,) in _query(
                    warehouse, "select user_id from run_state.lara_users_this_run"
                )
            },
            "days": {
                day
                for (day,) in _query(
                    warehouse, "select event_date from run_state.lara_days_this_run"
                )
            },
            # Units of the day recomputed by this run, per user in lara_users_this_run or not.
            "recomputed_by_user": _query(
                warehouse,
                "select scoped.user_id in (select user_id from run_state.lara_users_this_run),"
                " count(case when units._lara_loaded_at > ? then 1 end), count(*)"
                " from marts.fct_retrieval_reretrievals as units"
                " inner join intermediate.int_retrievals_scoped as scoped"
                " on units.retrieval_id = scoped.retrieval_id"
                " where units.retrieval_date = ? and scoped.user_id is not null"
                " group by 1 order by 1",
                [before_run, RETURN_DAY],
            ),
        }

    _build(raw, warehouse, root, ["build"])
    returned = state()
    before_run = _query(
        warehouse, "select max(_lara_loaded_at) from marts.fct_retrieval_reretrievals"
    )[0][0]
    prompt_file.write_text(json.dumps({**late_prompt, "user_id": "late_other_user"}) + "\n")
    # With the move, a retrieval of another session returns the asset again at
    # the same time, naming a prompt not logged yet: it has no user, so it
    # returns the asset to no one.
    named_retrieval = {
        **late_retrieval,
        "retrieval_id": "late_named_retrieval",
        "prompt_id": "late_named_prompt",
        "session_guid": "late_named_session",
    }
    (raw / "retrievals" / f"dt={day}" / "late-named.jsonl").write_text(
        json.dumps(named_retrieval) + "\n"
    )
    _build(raw, warehouse, root, ["build"])
    moved = state()
    # Then the prompt arrives, in a third session, naming the first user: the
    # retrieval's session joins the run through the prompt and the retrieval
    # is now that user's. The loaded session logs the prompt only, on the
    # retrieval's day.
    before_run = _query(
        warehouse, "select max(_lara_loaded_at) from marts.fct_retrieval_reretrievals"
    )[0][0]
    (raw / "prompts" / f"dt={day}" / "late-named.jsonl").write_text(
        json.dumps(
            {**late_prompt, "prompt_id": "late_named_prompt", "session_guid": "late_prompt_session"}
        )
        + "\n"
    )
    _build(raw, warehouse, root, ["build"])
    named = state()
    # Last, a retrieval of a fourth session names that prompt: the prompt's row
    # (in the third session) now counts two retrievals.
    (raw / "retrievals" / f"dt={day}" / "late-naming.jsonl").write_text(
        json.dumps(
            {
                **named_retrieval,
                "retrieval_id": "late_naming_retrieval",
                "session_guid": "late_naming_session",
            }
        )
        + "\n"
    )
    _build(raw, warehouse, root, ["build"])
    counted = _query(
        warehouse,
        "select retrieval_count from marts.fct_prompts where prompt_id = 'late_named_prompt'",
    )
    return {
        "user_id": user_id,
        "returned": returned,
        "moved": moved,
        "named": named,
        "counted": counted,
    }


MOVE_DAY = START + dt.timedelta(days=8)
# Session-grained models with a row per retrieval, prompt or action of the session.
STAMPED_MODELS = (
    "intermediate.int_prompts_scoped",
    "intermediate.int_retrievals_scoped",
    "intermediate.int_retrieval_assets",
    "intermediate.int_actions_scoped",
    "intermediate.int_retrieval_signals",
    "marts.fct_prompts",
    "marts.fct_retrievals",
)


def _move_a_session_a_day_earlier(raw: Path, warehouse: Path, root: Path) -> dict:
    """Land a prompt of a MOVE_DAY session dated 23:30 the day before, in that
    day's partition; run. Record the session's rows before and after."""
    session_guid, first_prompt_id = _query(
        warehouse,
        "select prompts.session_guid, min(prompts.prompt_id)"
        " from intermediate.int_prompts_scoped as prompts"
        " inner join intermediate.int_retrievals_scoped as retrievals"
        " on prompts.session_guid = retrievals.session_guid"
        " inner join intermediate.int_actions_scoped as actions"
        " on prompts.session_guid = actions.session_guid"
        " where prompts._lara_session_date = ? and not prompts.is_synthetic"
        " group by prompts.session_guid order by prompts.session_guid limit 1",
        [MOVE_DAY],
    )[0]
    import pyarrow.parquet as pq

    prompt = next(
        row
        for path in (raw / "prompts" / f"dt={MOVE_DAY.isoformat()}").glob("*.parquet")
        for row in pq.read_table(path).to_pylist()
        if row["prompt_id"] == first_prompt_id
    )
    day_before = MOVE_DAY - dt.timedelta(days=1)
    late_prompt = {
        **prompt,
        "prompt_id": "late_early_prompt",
        "ts": f"{day_before.isoformat()}T23:30:00Z",
    }
    (raw / "prompts" / f"dt={day_before.isoformat()}" / "late-early-prompt.jsonl").write_text(
        json.dumps(late_prompt) + "\n"
    )

    def rows() -> dict:
        return {
            model: _query(
                warehouse,
                f"select count(*), list(distinct _lara_session_date) from {model}"
                " where session_guid = ?",
                [session_guid],
            )[0]
            for model in STAMPED_MODELS
        }

    def dates() -> list[tuple]:
        return _query(
            warehouse,
            "select dates.session_date, dates.earliest_session_date, run.earliest_session_date"
            " from run_state.lara_session_dates as dates"
            " left join run_state.lara_sessions_this_run as run"
            " on dates.session_guid = run.session_guid where dates.session_guid = ?",
            [session_guid],
        )

    before = rows()
    _build(raw, warehouse, root, ["build"])
    moved = {
        "session_guid": session_guid,
        "before": before,
        "after": rows(),
        "session_date": _query(
            warehouse,
            "select session_date from run_state.lara_sessions_this_run where session_guid = ?",
            [session_guid],
        ),
        "dates": dates(),
        "day_before": day_before,
    }
    # The late prompt's file is rewritten empty: the session moves back a day
    # later. Its rows stamped with the day before must go, so the delete's
    # bound must reach back to that earlier date.
    late_file = raw / "prompts" / f"dt={day_before.isoformat()}" / "late-early-prompt.jsonl"
    late_file.write_text("")
    _build(raw, warehouse, root, ["build"])
    moved = {
        **moved,
        "back": rows(),
        "back_dates": dates(),
        "back_bound": _query(
            warehouse,
            "select min(earliest_session_date) from run_state.lara_sessions_this_run",
        )[0][0],
        "back_delete": _executed_sql(root, warehouse, "int_retrieval_assets"),
    }
    # Again, but the run that moves the session back stops after recording its
    # date (the models keep the rows stamped with the day before), and then
    # lara_session_dates alone is rebuilt, forgetting the earliest date. The
    # next scheduled run must still remove those rows.
    late_file.write_text(json.dumps(late_prompt) + "\n")
    _build(raw, warehouse, root, ["build"])
    late_file.write_text("")
    _build(raw, warehouse, root, ["run", "--select", "+lara_session_dates"])
    _build(raw, warehouse, root, ["run", "--select", "lara_session_dates", "--full-refresh"])
    rebuilt_dates = _query(
        warehouse,
        "select session_date, earliest_session_date from run_state.lara_session_dates"
        " where session_guid = ?",
        [session_guid],
    )
    _build(raw, warehouse, root, ["build"])
    return {
        **moved,
        "rebuilt_dates": rebuilt_dates,
        "rebuilt_back": rows(),
        "rebuilt_delete": _executed_sql(root, warehouse, "int_retrieval_assets"),
    }


def _executed_sql(root: Path, warehouse: Path, model: str) -> str:
    """The statements dbt ran last for `model` (target/run: an incremental model's
    delete and insert)."""
    (path,) = (root / f"target-{warehouse.stem}" / "run").rglob(f"{model}.sql")
    return path.read_text()


def test_a_late_earlier_prompt_moves_its_session_and_every_model_restamps_it(late_export):
    moved = late_export["moved"]
    assert moved["session_date"] == [(moved["day_before"],)]
    for model in STAMPED_MODELS:
        count_before, dates_before = moved["before"][model]
        count_after, dates_after = moved["after"][model]
        assert count_before > 0, model
        assert dates_before == [MOVE_DAY], (model, dates_before)
        assert dates_after == [moved["day_before"]], (model, dates_after)
        # The late prompt adds a row to the prompt models only; every other
        # row of the session is still there, under its new date.
        extra = 1 if model in ("intermediate.int_prompts_scoped", "marts.fct_prompts") else 0
        assert count_after == count_before + extra, (model, count_before, count_after)


def test_a_session_moved_back_later_keeps_its_earliest_date_and_loses_the_earlier_rows(
    late_export,
):
    moved = late_export["moved"]
    # lara_session_dates keeps the earliest date the session has had.
    assert moved["dates"] == [(moved["day_before"], moved["day_before"], moved["day_before"])]
    assert moved["back_dates"] == [(MOVE_DAY, moved["day_before"], moved["day_before"])]
    # Every row is back under MOVE_DAY, none left under the day before: the
    # delete reached the rows stamped with the earlier date.
    for model in STAMPED_MODELS:
        assert moved["back"][model] == moved["before"][model], model
    # The delete of lara_replace_sessions is bounded by the least earliest
    # date of the sessions this run, as a date DuckDB can prune row groups by.
    assert moved["back_bound"] <= moved["day_before"]
    assert (
        f"_lara_session_date >= cast('{moved['back_bound'].isoformat()}' as date)"
        in moved["back_delete"]
    ), moved["back_delete"][:2000]


def test_a_session_date_rebuilt_alone_after_a_stopped_run_drops_the_bound_until_a_run_completes(
    late_export,
):
    moved = late_export["moved"]
    # The rebuild forgot that the session was dated the day before ...
    assert moved["rebuilt_dates"] == [(MOVE_DAY, MOVE_DAY)]
    # ... so the next run deleted without the bound, and the rows the stopped
    # run left under the day before are gone (a bounded delete from MOVE_DAY
    # would keep them beside their restamped copies).
    for model in STAMPED_MODELS:
        assert moved["rebuilt_back"][model] == moved["before"][model], model
    assert "delete from" in moved["rebuilt_delete"], moved["rebuilt_delete"][:2000]
    assert "_lara_session_date >=" not in moved["rebuilt_delete"], moved["rebuilt_delete"][:2000]


def test_a_late_return_recomputes_an_earlier_retrieval_of_its_user_only(late_export):
    returned = late_export["returned"]
    first = returned["returned"]
    assert RETURN_DAY not in first["days"]  # a lookback day only
    assert first["unit"] == (True, True)  # re-retrieved now, recomputed by this run
    assert first["users"] == {returned["user_id"]}
    # On that day, the units of the user are recomputed, no other user's.
    by_user = {
        in_users: (recomputed, rows) for in_users, recomputed, rows in first["recomputed_by_user"]
    }
    assert by_user[True][0] == by_user[True][1] > 0
    assert by_user[False][1] > 0 and by_user[False][0] == 0


def test_a_late_session_moved_to_another_user_recomputes_the_first_user(late_export):
    moved = late_export["returned"]["moved"]
    # Only the tombstone of the replaced prompt still names the first user.
    assert moved["users"] == {late_export["returned"]["user_id"], "late_other_user"}
    assert moved["unit"] == (False, True)


def test_a_late_prompt_named_by_another_sessions_retrieval_recomputes_its_user(late_export):
    named = late_export["returned"]["named"]
    # The retrieval naming the prompt returns the asset to the first user
    # again: the earlier retrieval is re-retrieved again, recomputed by this
    # run although the loaded session logs neither a retrieval nor an action.
    assert named["users"] == {late_export["returned"]["user_id"]}
    assert named["unit"] == (True, True)


def test_a_late_retrieval_naming_another_sessions_prompt_counts_in_its_row(late_export):
    # The prompt's session logs nothing new: a loaded retrieval touches its
    # prompt's session too (lara_touched_sessions_select), so the prompt's
    # row is recomputed.
    assert late_export["returned"]["counted"] == [(2,)]


MISROUTE_DAY = START + dt.timedelta(days=5)


def _write_jsonl(path: Path, row: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(row) + "\n")


def _misroute_a_credited_retrieval(raw: Path, warehouse: Path, root: Path) -> dict:
    """Land a late export of a new session crediting a retrieval of MISROUTE_DAY
    (by source_retrieval_id only), run the schedule; then land a human prompt
    label judging the retrieval's prompt to hold no retrieval intent, and run it
    again. Record the export's attribution after each run."""
    retrieval_id, prompt_id = _query(
        warehouse,
        "select retrieval_id, prompt_id from marts.fct_retrievals"
        " where retrieval_date = ? and is_in_tier_scope order by retrieval_id limit 1",
        [MISROUTE_DAY],
    )[0]
    late = raw / "actions" / f"dt={LATE_DAY.isoformat()}" / "late-misrouted-export.jsonl"
    _write_jsonl(
        late,
        {
            "action_id": "late_export_misrouted",
            "session_guid": "late_editor_session_misrouted",
            "prompt_id": None,
            "ts": f"{LATE_DAY.isoformat()}T11:00:00Z",
            "actor": "user",
            "action_type": "export",
            "consumed_asset_id": None,
            "source_retrieval_id": retrieval_id,
            "document_id": None,
        },
    )
    attribution = (
        "select retrieval_id, is_misrouted, _lara_loaded_at from marts.fct_action_attributions"
        " where action_id = 'late_export_misrouted'"
    )
    _build(raw, warehouse, root, ["build"])
    before = _query(warehouse, attribution)
    label = raw / "prompt_labels" / f"dt={LATE_DAY.isoformat()}" / "late-misroute-label.jsonl"
    _write_jsonl(
        label,
        {
            "prompt_id": prompt_id,
            "has_retrieval_intent": False,
            "retrieval_intent_count": 0,
            "judge": "human",
            "judged_at": f"{LATE_DAY.isoformat()}T14:00:00Z",
        },
    )
    _build(raw, warehouse, root, ["build"])
    return {
        "retrieval_id": retrieval_id,
        "before": before,
        "after": _query(warehouse, attribution),
        "retrieval_after": _query(
            warehouse,
            "select is_misrouted, is_in_tier_scope from marts.fct_retrievals"
            " where retrieval_id = ?",
            [retrieval_id],
        ),
        "sessions": _session_reasons(warehouse),
    }


def test_a_label_misrouting_a_credited_retrieval_recomputes_the_crediting_session(late_export):
    misrouted = late_export["misrouted"]
    ((retrieval_id, was_misrouted, loaded_before),) = misrouted["before"]
    assert retrieval_id == misrouted["retrieval_id"] and was_misrouted is False
    assert misrouted["retrieval_after"] == [(True, False)]
    ((_, is_misrouted, loaded_after),) = misrouted["after"]
    assert is_misrouted is True and loaded_after > loaded_before
    assert misrouted["sessions"]["late_editor_session_misrouted"] == "lineage"


def _late_user_action(raw: Path, name: str, session_guid: str, hour: int, **fields) -> None:
    """Land an action of a new session, dated LATE_DAY: a user export naming what
    `fields` gives (prompt_id, source_retrieval_id; actor, action_type and
    consumed_asset_id to change them), and nothing else that links it."""
    _write_jsonl(
        raw / "actions" / f"dt={LATE_DAY.isoformat()}" / f"{name}.jsonl",
        {
            "action_id": name,
            "session_guid": session_guid,
            "prompt_id": None,
            "ts": f"{LATE_DAY.isoformat()}T{hour:02d}:00:00Z",
            "actor": "user",
            "action_type": "export",
            "consumed_asset_id": None,
            "source_retrieval_id": None,
            "document_id": None,
            **fields,
        },
    )


def _log_a_named_prompt_later(raw: Path, warehouse: Path, root: Path) -> dict:
    """Land a late export of a new session naming, by prompt_id only, a prompt not
    logged yet; run. Then land that prompt, in another new session; run. Record the
    export's scoped row and LATE_DAY's unattributed exports by surface after each."""
    import pyarrow.parquet as pq

    prompt = next(
        row
        for path in sorted((raw / "prompts" / f"dt={LATE_DAY.isoformat()}").glob("*.parquet"))
        for row in pq.read_table(path).to_pylist()
        if not row["is_synthetic"] and row["surface"] == "chat"
    )
    _late_user_action(
        raw,
        "late_export_prompted",
        "late_editor_session_prompted",
        15,
        prompt_id="late_named_later",
    )

    def state() -> dict:
        return {
            "action": _query(
                warehouse,
                "select has_known_prompt, reporting_surface, _lara_loaded_at"
                " from intermediate.int_actions_scoped where action_id = 'late_export_prompted'",
            ),
            "unattributed": dict(
                _query(
                    warehouse,
                    "select surface, unattributed_outcome_count"
                    " from marts.agg_unattributed_outcomes"
                    " where action_date = ? and action_type = 'export' and surface <> 'all'",
                    [LATE_DAY],
                )
            ),
        }

    _build(raw, warehouse, root, ["build"])
    before = state()
    _write_jsonl(
        raw / "prompts" / f"dt={LATE_DAY.isoformat()}" / "late-named-later.jsonl",
        {
            **prompt,
            "prompt_id": "late_named_later",
            "session_guid": "late_named_later_session",
            "ts": f"{LATE_DAY.isoformat()}T14:00:00Z",
        },
    )
    _build(raw, warehouse, root, ["build"])
    return {
        "before": before,
        "after": state(),
        "sessions": _session_reasons(warehouse),
    }


def test_a_late_prompt_named_by_another_sessions_action_recomputes_the_action(late_export):
    # The export's session has no prompt of its own; only its prompt_id links it
    # to the prompt's session (the lineage closure's actions naming a prompt of
    # a touched session).
    prompted = late_export["prompted"]
    ((known_before, surface_before, loaded_before),) = prompted["before"]["action"]
    assert (known_before, surface_before) == (False, "unknown")
    ((known_after, surface_after, loaded_after),) = prompted["after"]["action"]
    assert (known_after, surface_after) == (True, "chat") and loaded_after > loaded_before
    assert prompted["sessions"]["late_editor_session_prompted"] == "lineage"
    before, after = prompted["before"]["unattributed"], prompted["after"]["unattributed"]
    assert after["unknown"] == before["unknown"] - 1
    assert after["chat"] == before.get("chat", 0) + 1


def _use_a_retrieval_of_another_sessions_prompt(raw: Path, warehouse: Path, root: Path) -> dict:
    """late_named_retrieval names late_named_prompt, logged in another session
    (_return_an_asset_again). Land a late user `select` of its asset in the
    retrieval's own session a minute after it, without a source id (the
    temporal rule credits it); run. Record the prompt's first use evidence."""
    ((retrieved_at, asset_id),) = _query(
        warehouse,
        "select retrievals.retrieved_at, assets.asset_id"
        " from intermediate.int_retrievals_scoped as retrievals"
        " inner join intermediate.int_retrieval_assets as assets"
        " on retrievals.retrieval_id = assets.retrieval_id"
        " where retrievals.retrieval_id = 'late_named_retrieval'",
    )
    acted_at = retrieved_at + dt.timedelta(minutes=1)
    _write_jsonl(
        raw / "actions" / f"dt={acted_at.date().isoformat()}" / "late-select-named.jsonl",
        {
            "action_id": "late_select_named",
            "session_guid": "late_named_session",
            "prompt_id": None,
            "ts": acted_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "actor": "user",
            "action_type": "select",
            "consumed_asset_id": asset_id,
            "source_retrieval_id": None,
            "document_id": None,
        },
    )
    evidence = (
        "select first_use_evidence_at, _lara_loaded_at from marts.fct_prompts"
        " where prompt_id = 'late_named_prompt'"
    )
    before = _query(warehouse, evidence)
    _build(raw, warehouse, root, ["build"])
    return {
        "acted_at": acted_at,
        "before": before,
        "after": _query(warehouse, evidence),
        "credited": _query(
            warehouse,
            "select retrieval_id, attribution_method from marts.fct_action_attributions"
            " where action_id = 'late_select_named'",
        ),
        "sessions": _session_reasons(warehouse),
    }


def test_a_late_use_of_a_retrieval_of_another_sessions_prompt_reaches_the_prompt(late_export):
    # The action names neither the retrieval nor the prompt: only its session
    # holds the retrieval, whose prompt is logged in another session (the
    # lineage closure's prompt sessions of the retrievals of touched sessions).
    used = late_export["used"]
    assert used["credited"] == [("late_named_retrieval", "temporal")]
    ((first_before, loaded_before),) = used["before"]
    ((first_after, loaded_after),) = used["after"]
    assert first_before is None
    assert first_after == used["acted_at"] and loaded_after > loaded_before
    assert used["sessions"] == {"late_named_session": "loaded", "late_prompt_session": "lineage"}


RESEARCH = (
    "select has_research_failure from marts.fct_retrievals"
    " where retrieval_id = 'late_named_retrieval'"
)


def _research_with_another_sessions_rewrite(raw: Path, warehouse: Path, root: Path) -> dict:
    """Land, in late_named_retrieval's session and 30 s after it, a retrieval with
    an unrelated query naming a `rewrite` prompt logged in a new session (the
    re-search rule: a later retrieval whose prompt is a rewrite); run. Record
    whether late_named_retrieval is re-searched (again after later runs)."""
    (retrieval_path,) = raw.glob("retrievals/dt=*/late-named.jsonl")
    (prompt_path,) = raw.glob("prompts/dt=*/late-named.jsonl")
    retrieval = json.loads(retrieval_path.read_text())
    prompt = json.loads(prompt_path.read_text())
    at = dt.datetime.strptime(retrieval["ts"], "%Y-%m-%dT%H:%M:%S.%fZ")
    stamp = "%Y-%m-%dT%H:%M:%S.%fZ"
    _write_jsonl(
        retrieval_path.with_name("late-research.jsonl"),
        {
            **retrieval,
            "retrieval_id": "late_research_retrieval",
            "prompt_id": "late_research_prompt",
            "ts": (at + dt.timedelta(seconds=30)).strftime(stamp),
            "query_text": "zq unrelated research probe",
        },
    )
    _write_jsonl(
        prompt_path.with_name("late-research.jsonl"),
        {
            **prompt,
            "prompt_id": "late_research_prompt",
            "session_guid": "late_research_prompt_session",
            "prompt_kind": "rewrite",
            "ts": (at + dt.timedelta(seconds=20)).strftime(stamp),
        },
    )
    before = _query(warehouse, RESEARCH)
    _build(raw, warehouse, root, ["build"])
    return {"before": before, "after": _query(warehouse, RESEARCH)}


def test_a_later_retrieval_naming_another_sessions_rewrite_is_a_research(late_export):
    # The later retrieval's prompt is a rewrite logged in another session; the
    # two credited-export runs recompute late_named_retrieval's session without
    # that one, and must still read the prompt's rewrite flag (by prompt).
    researched = late_export["researched"]
    assert researched["before"] == [(False,)]
    assert researched["after"] == [(True,)]
    assert late_export["credited"]["research"] == [(True,)]


PROMPT_ROW = (
    "select retrieval_driven_outcome_count, retrieval_driven_outcome_event_count, _lara_loaded_at"
    " from marts.fct_prompts where prompt_id = 'late_named_prompt'"
)


def _credit_the_retrievals_of_a_prompt_of_another_session(
    raw: Path, warehouse: Path, root: Path
) -> dict:
    """The prompt late_named_prompt is logged in one session and named by the
    retrievals of two others (_return_an_asset_again). Land a late export of a new,
    prompt-less session crediting the first of them, by source_retrieval_id; run.
    Then one crediting the second, from another new session; run. Record the
    prompt's row before and after each."""
    rows = [_query(warehouse, PROMPT_ROW)]
    reasons = []
    for name, retrieval_id in (
        ("late_export_naming", "late_naming_retrieval"),
        ("late_export_named", "late_named_retrieval"),
    ):
        _late_user_action(raw, name, f"{name}_session", 16, source_retrieval_id=retrieval_id)
        _build(raw, warehouse, root, ["build"])
        rows.append(_query(warehouse, PROMPT_ROW))
        reasons.append(_session_reasons(warehouse))
    credited = _query(
        warehouse,
        "select action_id, retrieval_id, is_retrieval_driven_outcome"
        " from marts.fct_action_attributions"
        " where action_id in ('late_export_naming', 'late_export_named') order by action_id",
    )
    return {
        "rows": rows,
        "reasons": reasons,
        "credited": credited,
        "substitutions": _query(warehouse, SUBSTITUTIONS),
        "research": _query(warehouse, RESEARCH),
    }


SUBSTITUTIONS = (
    "select retrieval_id, retrieval_role, has_substitution_failure from marts.fct_retrievals"
    " where retrieval_id in ('late_named_retrieval', 'late_naming_retrieval')"
    " order by retrieval_id"
)


def _substitute_in_another_session(raw: Path, warehouse: Path, root: Path) -> dict:
    """Land an agent `place` of an asset no retrieval returned, in a new session,
    naming late_named_prompt (logged in another session, named by two retrievals
    of two more); run. Record the prompt's retrievals."""
    _late_user_action(
        raw,
        "late_agent_place",
        "late_agent_session",
        15,
        prompt_id="late_named_prompt",
        actor="agent",
        action_type="place",
        consumed_asset_id="late_substitute_asset",
    )
    before = _query(warehouse, SUBSTITUTIONS)
    _build(raw, warehouse, root, ["build"])
    return {"before": before, "after": _query(warehouse, SUBSTITUTIONS)}


def test_an_agent_action_in_another_session_substitutes_for_its_prompts_retrievals(late_export):
    # The action names the prompt only: the closure brings the sessions of the
    # prompt's retrievals (both `find`, a substitution role); the two later runs
    # that recompute one of those sessions each (credited exports, without the
    # agent's session) must still read it by prompt.
    substituted = late_export["substituted"]
    roles = {"late_named_retrieval": "find", "late_naming_retrieval": "find"}
    assert substituted["before"] == [(r, role, False) for r, role in roles.items()]
    assert substituted["after"] == [(r, role, True) for r, role in roles.items()]
    assert late_export["credited"]["substitutions"] == substituted["after"]


def test_outcomes_credited_to_retrievals_of_another_sessions_prompt_count_in_its_row(
    late_export,
):
    # Each export reaches the prompt's session only through the retrieval it
    # names (the lineage closure's prompt sessions of named retrievals); the
    # second run must still count the first retrieval's outcome, whose session
    # it does not recompute.
    credited = late_export["credited"]
    assert credited["credited"] == [
        ("late_export_named", "late_named_retrieval", True),
        ("late_export_naming", "late_naming_retrieval", True),
    ]
    (before,), (first,), (second,) = credited["rows"]
    assert before[:2] == (0, 0)
    assert first[:2] == (1, 1) and first[2] > before[2]
    assert second[:2] == (2, 2) and second[2] > first[2]
    for reasons in credited["reasons"]:
        assert reasons["late_prompt_session"] == "lineage", reasons


def _label_and_reject_retrievals_of_another_sessions_prompt(
    raw: Path, warehouse: Path, root: Path
) -> dict:
    """Land a relevance label of late_named_retrieval (its prompt is logged in
    another session); run. Then a user reject_result of a new session naming
    the prompt only (the Tier 2 prompt fallback); run. Record the prompt's two
    retrievals and the sessions of each run."""
    ((asset_id,),) = _query(
        warehouse,
        "select asset_id from intermediate.int_retrieval_assets"
        " where retrieval_id = 'late_named_retrieval'",
    )
    _write_jsonl(
        raw / "relevance_labels" / f"dt={LATE_DAY.isoformat()}" / "late-named-label.jsonl",
        {
            "retrieval_id": "late_named_retrieval",
            "asset_id": asset_id,
            "grade": 2,
            "judge": "human",
            "judged_at": f"{LATE_DAY.isoformat()}T17:00:00Z",
        },
    )
    retrievals = (
        "select retrieval_id, is_goal_labelled, has_reject_failure from marts.fct_retrievals"
        " where retrieval_id in ('late_named_retrieval', 'late_naming_retrieval')"
        " order by retrieval_id"
    )
    before = _query(warehouse, retrievals)
    _build(raw, warehouse, root, ["build"])
    labelled, labelled_sessions = _query(warehouse, retrievals), _session_reasons(warehouse)
    _late_user_action(
        raw,
        "late_reject_named",
        "late_reject_session",
        18,
        prompt_id="late_named_prompt",
        action_type="reject_result",
    )
    _build(raw, warehouse, root, ["build"])
    return {
        "before": before,
        "labelled": labelled,
        "labelled_sessions": labelled_sessions,
        "rejected": _query(warehouse, retrievals),
        "rejected_sessions": _session_reasons(warehouse),
    }


def test_a_label_of_a_retrieval_of_another_sessions_prompt_keeps_its_prompt(late_export):
    # The label recomputes the retrieval's session only; fct_retrievals still
    # finds the retrieval's prompt (and its goal labels) in the other session.
    labelled = late_export["labelled"]
    assert labelled["before"] == [
        ("late_named_retrieval", False, False),
        ("late_naming_retrieval", False, False),
    ]
    assert labelled["labelled_sessions"] == {"late_named_session": "label"}
    assert labelled["labelled"] == labelled["before"]


def test_a_reject_naming_another_sessions_prompt_reaches_its_latest_retrieval(late_export):
    # The reject names the prompt only: the closure brings the sessions of the
    # prompt's retrievals, and the fallback credits the latest of them (the two
    # share an instant: the greatest retrieval_id).
    labelled = late_export["labelled"]
    assert labelled["rejected"] == [
        ("late_named_retrieval", False, False),
        ("late_naming_retrieval", False, True),
    ]
    sessions = labelled["rejected_sessions"]
    assert sessions["late_reject_session"] == "loaded"
    assert sessions["late_naming_session"] == sessions["late_named_session"] == "lineage"


LABEL_DAY = START + dt.timedelta(days=2)

#: Session-grained models with and without relevance labels in their lineage.
READS_RELEVANCE_LABELS = ("intermediate.int_retrieval_relevance", "marts.fct_retrievals")
READS_NO_RELEVANCE_LABELS = (
    "intermediate.int_retrievals_scoped",
    "intermediate.int_prompts_scoped",
    "intermediate.int_retrieval_signals",
    "marts.fct_prompts",
    "marts.fct_sessions",
)
#: Daily aggregates (and their day column) with and without relevance labels in their lineage.
DAILY_WITH_RELEVANCE_LABELS = (("marts.agg_tier1_quality", "retrieval_date"),)
DAILY_WITHOUT_RELEVANCE_LABELS = (
    ("marts.agg_abandonment", "activity_date"),
    ("marts.agg_rewrites", "activity_date"),
)


def _deliver_late_label(raw: Path, warehouse: Path, root: Path) -> dict:
    """Land a human relevance label of a day-3 retrieval, run the schedule, and
    record what the run recomputed (later runs restamp rows)."""
    retrieval_id, session_guid, asset_id = _query(
        warehouse,
        "select retrievals.retrieval_id, retrievals.session_guid, assets.asset_id"
        " from marts.fct_retrievals as retrievals"
        " inner join intermediate.int_retrieval_assets as assets"
        " on retrievals.retrieval_id = assets.retrieval_id"
        " where retrievals.retrieval_date = ? and retrievals.is_in_tier_scope"
        " order by retrievals.retrieval_id, assets.asset_rank limit 1",
        [LABEL_DAY],
    )[0]
    before_run = _query(warehouse, "select max(_lara_loaded_at) from marts.fct_retrievals")[0][0]
    label_file = raw / "relevance_labels" / f"dt={LATE_DAY.isoformat()}" / "late-label.jsonl"
    label_file.parent.mkdir(parents=True, exist_ok=True)
    label_file.write_text(
        json.dumps(
            {
                "retrieval_id": retrieval_id,
                "asset_id": asset_id,
                "grade": 3,
                "judge": "human",
                "judged_at": f"{LATE_DAY.isoformat()}T13:00:00Z",
            }
        )
        + "\n"
    )
    _build(raw, warehouse, root, ["build"])
    restamped = {
        model: _query(
            warehouse,
            f"select count(case when _lara_loaded_at > ? then 1 end), count(*) from {model}"
            " where session_guid = ?",
            [before_run, session_guid],
        )[0]
        for model in READS_RELEVANCE_LABELS + READS_NO_RELEVANCE_LABELS
    }
    rewritten_days = {
        model: {
            day
            for (day,) in _query(
                warehouse,
                f"select distinct {column} from {model}"
                f" where {column} is not null and _lara_loaded_at > ?",
                [before_run],
            )
        }
        for model, column in DAILY_WITH_RELEVANCE_LABELS + DAILY_WITHOUT_RELEVANCE_LABELS
    }
    return {
        "session_guid": session_guid,
        "sessions": _query(
            warehouse,
            "select session_guid, reason, is_for_every_model, has_loaded_goal_labels,"
            " has_loaded_relevance_labels, has_loaded_stage_spans,"
            " has_loaded_prompt_label_sample_design from run_state.lara_sessions_this_run",
        ),
        "days": _query(
            warehouse,
            "select event_date, is_for_every_model, has_loaded_relevance_labels"
            " from run_state.lara_days_this_run",
        ),
        "restamped": restamped,
        "rewritten_days": rewritten_days,
    }


def test_a_late_label_recomputes_its_session_for_the_label_models_only(late_export):
    label = late_export["late_label"]
    assert label["sessions"] == [(label["session_guid"], "label", False, False, True, False, False)]
    for model in READS_RELEVANCE_LABELS:
        rewritten, rows = label["restamped"][model]
        assert rows > 0 and rewritten == rows, (model, rewritten, rows)
    for model in READS_NO_RELEVANCE_LABELS:
        rewritten, rows = label["restamped"][model]
        assert rows > 0 and rewritten == 0, (model, rewritten, rows)


def test_a_late_label_rewrites_its_day_for_the_label_aggregates_only(late_export):
    label = late_export["late_label"]
    assert label["days"] and all(not every for _, every, _ in label["days"])
    assert all(relevance for _, _, relevance in label["days"])
    label_days = {day for day, _, _ in label["days"]}
    assert LABEL_DAY in label_days
    for model, _ in DAILY_WITH_RELEVANCE_LABELS:
        rewritten = label["rewritten_days"][model]
        assert LABEL_DAY in rewritten and rewritten <= label_days, (model, rewritten)
    for model, _ in DAILY_WITHOUT_RELEVANCE_LABELS:
        assert label["rewritten_days"][model] == set(), model


def test_the_late_file_is_read_as_a_pending_partition(late_export):
    assert "actions: incremental run reads" in late_export["run_log"]


def test_the_credited_retrieval_gains_a_cross_session_outcome(late_export):
    warehouse = late_export["warehouse"]
    outcomes, cross, loaded_at = _query(
        warehouse,
        "select retrieval_driven_outcome_count, cross_session_outcome_count, _lara_loaded_at"
        " from marts.fct_retrievals where retrieval_id = ?",
        [late_export["retrieval_id"]],
    )[0]
    before_outcomes, before_cross = late_export["before"]
    assert (outcomes, cross) == (before_outcomes + 1, before_cross + 1)
    assert loaded_at > late_export["before_run"]
    credited = _query(
        warehouse,
        "select attribution_method, is_cross_session, is_retrieval_driven_outcome"
        " from marts.fct_action_attributions where action_id = 'late_export_1'",
    )
    assert credited == [("direct", True, True)]


def test_only_the_two_sessions_are_recomputed(late_export):
    warehouse = late_export["warehouse"]
    recomputed = {
        session
        for (session,) in _query(
            warehouse,
            "select distinct session_guid from marts.fct_retrievals where _lara_loaded_at > ?"
            " union select distinct session_guid from marts.fct_sessions where _lara_loaded_at > ?",
            [late_export["before_run"], late_export["before_run"]],
        )
    }
    assert recomputed == {late_export["session_guid"], "late_editor_session_1"}
    reasons = _session_reasons(warehouse)
    assert reasons == {"late_editor_session_1": "loaded", late_export["session_guid"]: "lineage"}


def test_day_1_aggregates_change_and_other_days_are_untouched(late_export):
    warehouse = late_export["warehouse"]
    days_this_run = {
        day for (day,) in _query(warehouse, "select event_date from run_state.lara_days_this_run")
    }
    assert START in days_this_run and LATE_DAY in days_this_run
    assert len(days_this_run) <= 4, days_this_run  # the two sessions' days only
    rows = _query(
        warehouse,
        "select retrieval_date, _lara_loaded_at > ? from marts.agg_tier3_completion",
        [late_export["before_run"]],
    )
    for day, rewritten in rows:
        should_be = day is None or day in days_this_run
        assert rewritten == should_be, (day, rewritten)
    after = {
        row[0]: row[1:]
        for row in _query(
            warehouse,
            "select coalesce(cast(retrieval_date as varchar), 'period'), completed_retrieval_count,"
            " retrieval_driven_outcome_count, cross_session_outcome_count"
            " from marts.agg_tier3_completion where grouping_level in ('day', 'overall')",
        )
    }
    before = late_export["before_tier3"]
    day_1 = START.isoformat()
    assert after[day_1][1:] == (before[day_1][1] + 1, before[day_1][2] + 1)
    assert after["period"][1:] == (before["period"][1] + 1, before["period"][2] + 1)
    for day, values in after.items():
        if day not in (day_1, "period"):
            assert values == before[day], day


def test_the_incremental_warehouse_equals_a_full_refresh(late_export):
    problems = differences(snapshot(late_export["warehouse"]), snapshot(late_export["full"]))
    assert not problems, "\n".join(problems[:20])

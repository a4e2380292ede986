"""Injection of malformed, duplicate and conflicting rows into the sample logs.

Every injected defective row is an EXTRA row: a copy of a good row of the same
table with unique marker values (new ids / marker text, see ``MARKERS``) and
exactly one defect, so that it triggers exactly one staging reason (staging
checks in this order: json_parse_error, missing_required, empty_id,
invalid_timestamp, invalid_type, invalid_enum, out_of_range, invalid_list,
then duplicates).  Kinds Parquet can express (nulls, blank ids, bad enum
values, out-of-range numbers, lists holding an empty string or a null, exact
and conflicting duplicates) are written as typed rows into the table's own
files; the others (unparseable line, absent column, unparseable timestamp,
wrong JSON type, a string instead of a list) are JSON-only: in a Parquet
partition they go to ``bad-rows.jsonl``.

Exact duplicates are copies of good rows (same content, same JSON
rendering), delivered half inline, half in a ``late-0`` file (next day's
partition for day-partitioned tables). Conflicts: a second version of a good
row with the same key and one changed column; staging quarantines both
versions, so each conflict moves its victim row out of ``clean`` and adds 2
to ``quarantined.conflicting_duplicate``. Victims are non-synthetic rows
nothing else depends on (see :func:`victim_candidates`); the planted truth is
computed without them.

Unnormalised enums: valid enum values with odd case / surrounding spaces
(``" Chat "``, ``"PLACE"``) written into a few good rows; they count as clean.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lara.generate.arrays import stream
from lara.generate.sample import Sample
from lara.generate.schema import A_CLICK, CONTRACT, NEW, REPLAY_TABLES, TABLES, TEMPLATE, USER


class _Special:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


ABSENT = _Special("ABSENT")  # column left out of the JSON object
NULL = _Special("NULL")  # JSON null / Parquet null
LIST_EMPTY_STR = _Special("LIST_EMPTY_STR")  # list holding an empty string
LIST_NULL = _Special("LIST_NULL")  # list holding a null

_BAD_TS = ("not-a-time", "2024-13-45T99:00:00Z")

#: marker values (``{tag}`` = ``<reason>_<i>``) making each injected row unique
MARKERS: dict[str, dict[str, str]] = {
    "prompts": {"prompt_id": "p_bad_{tag}", "prompt_text": "bad row {tag}"},
    "retrievals": {"retrieval_id": "r_bad_{tag}", "query_text": "bad row {tag}"},
    "actions": {"action_id": "x_bad_{tag}", "document_id": "doc_bad_{tag}"},
    "relevance_labels": {"asset_id": "a_bad_{tag}"},
    "prompt_labels": {"prompt_id": "p_bad_{tag}"},
    "goal_labels": {"prompt_id": "p_bad_{tag}"},
    "stage_spans": {"prompt_id": "p_bad_{tag}"},
    "replay_documents": {"doc_id": "d_bad_{tag}"},
    "replay_queries": {"trajectory_id": "t_bad_{tag}", "query_text": "bad row {tag}"},
    "document_entities": {"doc_id": "d_bad_{tag}", "entity": "Bad Row {tag}"},
}

#: defect variants per table and reason: (column, value); cycled over i
DEFECTS: dict[str, dict[str, list[tuple[str, Any]]]] = {
    "prompts": {
        "missing_required": [("session_guid", NULL), ("user_id", ABSENT)],
        "empty_id": [("session_guid", ""), ("user_id", "   ")],
        "invalid_timestamp": [("ts", _BAD_TS[0]), ("ts", _BAD_TS[1])],
        "invalid_type": [("is_synthetic", "maybe"), ("is_synthetic", "unknown")],
        "invalid_enum": [("surface", "fax"), ("prompt_kind", "other")],
    },
    "retrievals": {
        "missing_required": [("prompt_id", NULL), ("returned_asset_ids", ABSENT)],
        "empty_id": [("retrieval_id", ""), ("session_guid", "  ")],
        "invalid_timestamp": [("ts", _BAD_TS[0]), ("ts", _BAD_TS[1])],
        "invalid_enum": [("retrieval_role", "guess"), ("retrieval_role", "lookup")],
        "invalid_list": [
            ("returned_asset_ids", "a1,a2"),
            ("returned_asset_ids", LIST_EMPTY_STR),
            ("returned_asset_ids", LIST_NULL),
        ],
    },
    "actions": {
        "missing_required": [("actor", NULL), ("session_guid", ABSENT)],
        "empty_id": [("action_id", ""), ("session_guid", "  ")],
        "invalid_timestamp": [("ts", _BAD_TS[0]), ("ts", _BAD_TS[1])],
        "invalid_enum": [("actor", "robot"), ("action_type", "teleport")],
    },
    "relevance_labels": {
        "missing_required": [("grade", NULL), ("judge", ABSENT)],
        "empty_id": [("retrieval_id", ""), ("retrieval_id", "  ")],
        "invalid_timestamp": [("judged_at", _BAD_TS[0]), ("judged_at", _BAD_TS[1])],
        "invalid_type": [("grade", "high"), ("grade", "two")],
        "invalid_enum": [("judge", "crowd"), ("judge", "expert")],
        "out_of_range": [("grade", 7), ("grade", -1)],
    },
    "prompt_labels": {
        "missing_required": [("has_retrieval_intent", NULL), ("judged_at", ABSENT)],
        "empty_id": [("prompt_id", ""), ("prompt_id", "  ")],
        "invalid_timestamp": [("judged_at", _BAD_TS[0]), ("judged_at", _BAD_TS[1])],
        "invalid_type": [("has_retrieval_intent", "maybe"), ("retrieval_intent_count", "x")],
        "invalid_enum": [("judge", "crowd"), ("judge", "expert")],
        "out_of_range": [("retrieval_intent_count", -1), ("retrieval_intent_count", -3)],
    },
    "goal_labels": {
        "missing_required": [("goal_achieved", NULL), ("judge", ABSENT)],
        "empty_id": [("prompt_id", ""), ("prompt_id", "  ")],
        "invalid_timestamp": [("judged_at", _BAD_TS[0]), ("judged_at", _BAD_TS[1])],
        "invalid_type": [("goal_achieved", "maybe"), ("goal_achieved", "unknown")],
        "invalid_enum": [("judge", "crowd"), ("judge", "expert")],
    },
    "stage_spans": {
        "missing_required": [("stage", NULL), ("tokens", ABSENT)],
        "empty_id": [("prompt_id", ""), ("prompt_id", "  ")],
        "invalid_type": [("latency_ms", "fast"), ("tokens", "many")],
        "invalid_enum": [("stage", "deploy"), ("stage", "training")],
        "out_of_range": [("latency_ms", -5), ("tokens", -1)],
    },
    "replay_documents": {
        "missing_required": [("is_relevant", NULL), ("trajectory_id", ABSENT)],
        "empty_id": [("trajectory_id", ""), ("question_id", "  ")],
        "invalid_type": [("step_index", "x"), ("reader_score_with", "high")],
        "invalid_enum": [("counterfactual_status", "crashed"), ("counterfactual_status", "oom")],
        "out_of_range": [
            ("turns_original", 0),
            ("answer_f1_original", 1.5),
            ("next_recall_counterfactual", 1.5),
            ("step_index", -1),
        ],
    },
    "replay_queries": {
        "missing_required": [("query_text", NULL), ("step_index", ABSENT)],
        "empty_id": [("trajectory_id", ""), ("trajectory_id", "  ")],
        "invalid_type": [("step_index", "x"), ("step_index", "first")],
        "out_of_range": [("step_index", -1), ("step_index", -2)],
    },
    "document_entities": {
        "missing_required": [("entity", NULL), ("doc_id", ABSENT)],
        "empty_id": [("doc_id", ""), ("doc_id", "  ")],
    },
}

#: columns that get unnormalised (but valid) enum values in a few good rows
UNNORMALISED: dict[str, list[str]] = {
    "prompts": ["surface", "prompt_kind"],
    "retrievals": ["retrieval_role"],
    "actions": ["action_type", "actor"],
    "relevance_labels": ["judge"],
    "prompt_labels": ["judge"],
    "goal_labels": ["judge"],
    "stage_spans": ["stage"],
    "replay_documents": ["counterfactual_status"],
}

#: column changed in the conflicting version of a victim row
CONFLICT_CHANGE: dict[str, str] = {
    "prompts": "prompt_text",
    "retrievals": "query_text",
    "actions": "ts",
    "relevance_labels": "grade",
    "prompt_labels": "retrieval_intent_count",
    "goal_labels": "goal_achieved",
    "replay_documents": "reader_score_with",
    "replay_queries": "query_text",
}


@dataclass
class Candidates:
    """Rows (row numbers) per table: conflict victims may be drawn from ``victims``; exact
    duplicates, unnormalised enums and defect templates from ``plain`` (default: all)."""

    victims: dict[str, np.ndarray]
    plain: dict[str, np.ndarray]


def victim_candidates(sample: Sample) -> Candidates:
    """Rows that can be conflict victims (nothing important depends on them)."""
    turns, tables = sample.turns, sample.tables
    P, R, A = turns.P, turns.R, sample.actions.A
    cand: dict[str, np.ndarray] = {}
    plain: dict[str, np.ndarray] = {}
    acts_per_prompt = np.bincount(A["prompt"][A["prompt"] >= 0], minlength=turns.nP)
    src_per_ret = np.bincount(A["source"][A["source"] >= 0], minlength=turns.nR)
    last = np.zeros(turns.nP, bool)
    last[turns.last_prompt] = True
    n_prompts_sess = sample.population.n_prompts[P["sess"]]
    prompt_ok = (
        ~P["syn"]
        & ~P["legacy"]
        & (P["surface"] != TEMPLATE)
        & (P["n_ret"] == 0)
        & (acts_per_prompt == 0)
        & ~sample.prompt_labels.labelled
        & ~sample.goal_labels.labelled
        & last
        & (n_prompts_sess >= 2)
        & (P["kind"] == NEW)
    )
    # prefer prompts without stage spans (else their spans become orphans)
    if (prompt_ok & ~sample.spanned).sum() >= sample.cfg.conflicts_per_table:
        prompt_ok &= ~sample.spanned
    ret_ok = (
        ~R["syn"]
        & ~R["legacy"]
        & (src_per_ret == 0)
        & (acts_per_prompt[R["prompt"]] == 0)
        & ~sample.relevance_labels.labelled
        & ~sample.goal_labels.labelled[R["prompt"]]
        & ~sample.prompt_labels.labelled[R["prompt"]]
    )
    act_ok = ~A["syn"] & ~A["legacy"] & (A["actor"] == USER) & (A["atype"] == A_CLICK)
    cand["prompts"] = np.sort(tables["prompts"].row[np.flatnonzero(prompt_ok)])
    # prefer retrievals of prompts with several retrievals (trigger rate unchanged)
    multi = ret_ok & (P["n_ret"][R["prompt"]] >= 2)
    if multi.sum() >= sample.cfg.conflicts_per_table:
        ret_ok = multi
    cand["retrievals"] = np.sort(tables["retrievals"].row[np.flatnonzero(ret_ok)])
    cand["actions"] = np.sort(tables["actions"].row[np.flatnonzero(act_ok)])
    for t in ("relevance_labels", "prompt_labels", "goal_labels") + REPLAY_TABLES:
        if t in tables:
            cand[t] = np.arange(tables[t].num_rows)
    # rows safe to duplicate / decorate: any non-candidate is fine, but keep
    # synthetic rows out so that synthetic counts stay simple
    plain["prompts"] = tables["prompts"].row[np.flatnonzero(~P["syn"])]
    plain["retrievals"] = tables["retrievals"].row[np.flatnonzero(~R["syn"])]
    plain["actions"] = tables["actions"].row[np.flatnonzero(~A["syn"])]
    return Candidates(cand, plain)


@dataclass
class Injection:
    """Result of :func:`inject`."""

    extras: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    victims: dict[str, np.ndarray] = field(default_factory=dict)
    expected: dict[str, dict[str, Any]] = field(default_factory=dict)
    log: dict[str, Any] = field(default_factory=dict)


def _iso(v: Any) -> Any:
    if isinstance(v, _dt.datetime):
        return v.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return v


def _json_line(row: dict[str, Any]) -> str:
    return json.dumps({k: _iso(v) for k, v in row.items()}, separators=(",", ":"))


def _json_only(reason: str, value: Any) -> bool:
    return (
        value is ABSENT
        or reason in ("invalid_timestamp", "invalid_type", "json_parse_error")
        or (reason == "invalid_list" and isinstance(value, str))
    )


def _key_of(table: str, row: dict[str, Any]) -> dict[str, Any] | None:
    key = CONTRACT[table]["key"]
    if key is None:
        return None
    return {k: _iso(row[k]) for k in key}


def _unnormalise(value: str, i: int) -> str:
    return f" {value.capitalize()} " if i % 2 == 0 else value.upper()


def inject(sample: Sample) -> Injection:
    """Plan the injected rows; modifies ``sample.tables`` only for unnormalised enums."""
    cfg = sample.cfg
    built = sample.tables
    inj = Injection()
    tables = [t for t in TABLES if t in built]
    log: dict[str, Any] = {
        "enabled": bool(cfg.bad_rows),
        "per_kind": cfg.bad_rows_per_kind if cfg.bad_rows else 0,
        "reason_order": [
            "json_parse_error",
            "missing_required",
            "empty_id",
            "invalid_timestamp",
            "invalid_type",
            "invalid_enum",
            "out_of_range",
            "invalid_list",
            "exact_duplicate",
            "conflicting_duplicate",
        ],
        "defects": {},
        "exact_duplicates": {},
        "conflict_keys": {},
        "conflicts": {},
        "unnormalised_enums": {
            "note": "valid enum values with odd case / spaces in good rows; staging "
            "normalises them (trim + lower-case) and keeps the rows as clean",
        },
    }
    inj.log = log
    for t in tables:
        inj.extras[t] = []
        inj.victims[t] = np.zeros(0, np.int64)
        inj.expected[t] = {
            "clean": built[t].num_rows,
            "exact_duplicates": 0,
            "quarantined": {},
        }
    if not cfg.bad_rows:
        return inj

    candidates = victim_candidates(sample)
    rng = stream(cfg.seed, "bad_rows")
    k = cfg.bad_rows_per_kind
    for t in tables:
        tbl = built[t].table
        n = tbl.num_rows
        if n == 0:
            continue
        day_table = t not in REPLAY_TABLES
        dts = built[t].dt
        tzs = built[t].tz
        used: set[int] = set()

        def row_of(i: int, tbl: pa.Table = tbl) -> dict[str, Any]:
            return tbl.slice(int(i), 1).to_pylist()[0]

        # ---- conflicts (victims)
        exp = inj.expected[t]
        quarantined: dict[str, int] = {}
        if CONTRACT[t]["key"] is not None and cfg.conflicts_per_table > 0:
            cand = candidates.victims.get(t, np.zeros(0, np.int64))
            vict = (
                np.sort(
                    rng.choice(cand, size=min(cfg.conflicts_per_table, cand.size), replace=False)
                )
                if cand.size
                else np.zeros(0, np.int64)
            )
            inj.victims[t] = vict.astype(np.int64)
            col = CONFLICT_CHANGE[t]
            keys, details = [], []
            for ci, v in enumerate(vict.tolist()):
                used.add(v)
                row = row_of(v)
                new = dict(row)
                old = row[col]
                if col in ("prompt_text", "query_text"):
                    new[col] = (old or "") + " (edited)"
                elif col == "ts":
                    new[col] = old + _dt.timedelta(seconds=1)
                elif col == "grade":
                    new[col] = (old + 1) % 4
                elif col == "retrieval_intent_count":
                    new[col] = old + 1
                    new["has_retrieval_intent"] = True
                elif col == "goal_achieved":
                    new[col] = not old
                elif col == "reader_score_with":
                    new[col] = round(old + 0.01 if old < 0.99 else old - 0.01, 6)
                place = "inline" if ci % 2 == 0 else "late"
                entry = {
                    "key": _key_of(t, row),
                    "changed_column": col,
                    "original": _iso(old),
                    "conflicting": _iso(new[col]),
                    "place": place,
                }
                keys.append(entry["key"])
                details.append(entry)
                inj.extras[t].append(
                    {
                        "dt": int(dts[v]) + (1 if place == "late" and day_table else 0),
                        "place": place,
                        "json_only": False,
                        "row": new,
                        "tz": int(tzs[v]),
                        "log": entry,
                    }
                )
            if vict.size:
                log["conflict_keys"][t] = keys
                log["conflicts"][t] = details
                exp["clean"] -= int(vict.size)
                quarantined["conflicting_duplicate"] = 2 * int(vict.size)

        ok = np.zeros(n, bool)
        ok[candidates.plain.get(t, np.arange(n))] = True
        if t == "retrievals":
            ok &= np.asarray(
                pc.greater(pc.list_value_length(tbl["returned_asset_ids"]), 0).to_numpy(
                    zero_copy_only=False
                )
            )
            has_role = np.asarray(tbl["retrieval_role"].is_valid().to_numpy(zero_copy_only=False))
        if t == "replay_documents":
            ok &= np.asarray(
                pc.equal(tbl["counterfactual_status"], "ok").to_numpy(zero_copy_only=False)
            )
        ok[inj.victims[t]] = False
        pool = np.flatnonzero(ok)

        def fresh(
            count: int,
            extra_mask: np.ndarray | None = None,
            pool: np.ndarray = pool,
            used: set[int] = used,
        ) -> np.ndarray:
            """Up to ``count`` distinct unused pool rows (sampled, no full-set scans)."""
            if count <= 0 or pool.size == 0:
                return np.zeros(0, np.int64)
            draw = min(pool.size, 4 * count + 16)
            cand = pool[np.sort(rng.choice(pool.size, size=draw, replace=False))]
            if extra_mask is not None:
                cand = cand[extra_mask[cand]]
            cand = np.array([c for c in cand.tolist() if c not in used], np.int64)
            if cand.size == 0:
                return cand
            pick = np.sort(rng.choice(cand, size=min(count, cand.size), replace=False))
            used.update(pick.tolist())
            return pick

        # ---- exact duplicates
        dups = fresh(cfg.exact_duplicates_per_table)
        dlog = []
        for di, v in enumerate(dups.tolist()):
            row = row_of(v)
            place = "inline" if di % 2 == 0 else "late"
            entry = {
                "key": _key_of(t, row),
                "row": None if CONTRACT[t]["key"] else {c: _iso(x) for c, x in row.items()},
                "place": place,
            }
            dlog.append(entry)
            inj.extras[t].append(
                {
                    "dt": int(dts[v]) + (1 if place == "late" and day_table else 0),
                    "place": place,
                    "json_only": False,
                    "row": row,
                    "tz": int(tzs[v]),
                    "log": entry,
                }
            )
        if dups.size:
            log["exact_duplicates"][t] = {"count": int(dups.size), "rows": dlog}
            exp["exact_duplicates"] = int(dups.size)

        # ---- unnormalised (valid) enum values in good rows
        if t in UNNORMALISED and cfg.unnormalised_enums_per_table > 0:
            cols = UNNORMALISED[t]
            mask = has_role if t == "retrievals" else None
            rows_u = fresh(cfg.unnormalised_enums_per_table, mask)
            ulog = []
            new_cols: dict[str, tuple[np.ndarray, list[str]]] = {}
            for ui, v in enumerate(rows_u.tolist()):
                col = cols[ui % len(cols)]
                orig = tbl[col][v].as_py()
                if orig is None:  # e.g. null prompt_kind: use the other column
                    col = cols[0]
                    orig = tbl[col][v].as_py()
                val = _unnormalise(orig, ui)
                m, vals = new_cols.setdefault(col, (np.zeros(n, bool), []))
                m[v] = True
                vals.append((v, val))
                ulog.append({"key": _key_of(t, row_of(v)), "column": col, "value": val})
            for col, (m, vals) in new_cols.items():
                vals.sort()
                arr = tbl[col].combine_chunks()
                if pa.types.is_dictionary(arr.type):  # enums are dictionary-encoded in memory
                    arr = arr.cast(pa.string())
                arr = pc.replace_with_mask(arr, pa.array(m), pa.array([x for _, x in vals]))
                tbl = tbl.set_column(tbl.schema.get_field_index(col), col, arr)
            built[t].table = tbl
            if rows_u.size:
                log["unnormalised_enums"][t] = {"count": int(rows_u.size), "rows": ulog}

        # ---- malformed rows
        if k <= 0:
            exp["quarantined"] = dict(sorted(quarantined.items()))
            continue
        reasons = ["json_parse_error"] + list(DEFECTS[t].keys())
        tdefects: dict[str, Any] = {}
        templates = fresh(len(reasons) * k)
        if templates.size == 0:
            templates = pool[:1] if pool.size else np.arange(min(1, n))
        ti = 0
        for reason in reasons:
            rows_log = []
            for i in range(k):
                v = int(templates[ti % templates.size])
                ti += 1
                tag = f"{reason}_{i}"
                row = row_of(v)
                for c, pattern in MARKERS[t].items():
                    row[c] = pattern.format(tag=tag)
                if "judged_at" in row:
                    row["judged_at"] = row["judged_at"] + _dt.timedelta(milliseconds=1 + i)
                entry: dict[str, Any] = {
                    "reason": reason,
                    "marker": {c: row[c] for c in MARKERS[t]},
                }
                if reason == "json_parse_error":
                    line = _json_line(row)
                    raw = line[: max(10, len(line) // 2)]
                    entry.update(column=None, value=None, raw=raw)
                    extra = {"json_only": True, "raw": raw}
                else:
                    col, value = DEFECTS[t][reason][i % len(DEFECTS[t][reason])]
                    json_only = _json_only(reason, value)
                    if value is ABSENT:
                        row.pop(col)
                    elif value is NULL:
                        row[col] = None
                    elif value is LIST_EMPTY_STR:
                        row[col] = (row[col] or ["a1"])[:2] + [""]
                    elif value is LIST_NULL:
                        row[col] = (row[col] or ["a1"])[:2] + [None]
                    else:
                        row[col] = value
                    if col in MARKERS[t] and value is not ABSENT:
                        entry["marker"][col] = row[col]
                    elif value is ABSENT:
                        entry["marker"].pop(col, None)
                    entry.update(
                        column=col,
                        value=repr(value) if isinstance(value, _Special) else value,
                    )
                    if json_only:
                        raw = _json_line(row)
                        entry["raw"] = raw
                        extra = {"json_only": True, "raw": raw}
                    else:
                        entry["row"] = {c: _iso(x) for c, x in row.items()}
                        extra = {"json_only": False, "row": row, "tz": 0}
                extra.update(dt=int(dts[v]), place="inline", log=entry)
                inj.extras[t].append(extra)
                rows_log.append(entry)
            tdefects[reason] = {"count": k, "rows": rows_log}
            quarantined[reason] = quarantined.get(reason, 0) + k
        log["defects"][t] = tdefects
        exp["quarantined"] = {r: quarantined[r] for r in sorted(quarantined)}
    return inj

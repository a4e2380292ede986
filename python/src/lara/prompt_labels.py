"""Tier 0 prompt labels: a stratified sample of prompts to judge, importing the judgements.

Tier 0 asks of a prompt whether it should have triggered a retrieval
(`has_retrieval_intent`) and how many distinct retrieval intents it holds
(`retrieval_intent_count`); the missed-retrieval, multi-intent and
intent-coverage rates of `fct_prompts` / `agg_tier0_routing` read those labels.

- `label_sample_prompts`: draws a stratified random sample of the prompts of a
  built warehouse (`marts.fct_prompts`, synthetic prompts already excluded,
  with the text and time of `staging.stg_lara__prompts`); strata
  surface x triggered (`retrieval` / `no_retrieval`) x ISO week by default;
  writes one judging row per prompt with its inclusion probability n_h / N_h.
- `label_import_prompts`: validates returned judgements and appends them to the
  raw logs as `prompt_labels` partitions, plus the design as the contract
  extension table `prompt_label_sample_design`; refused rows go to a rejects
  file with their reason.

The sampling, allocation, file writing and import machinery is `lara.labels`'s
(retrievals); this module adds the prompt frame and checks, and owns the
`--unit retrievals|prompts` dispatch of `lara label-sample` / `lara
label-import` (it imports `lara.labels`, never the reverse).
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from lara import labels
from lara.arguments import whole_number
from lara.contract import Table
from lara.ingest.writer import contract

UNITS = ("retrievals", "prompts")
PROMPT_STRATUM_DIMENSIONS = ("surface", "triggered", "iso_week")
PROMPT_SCOPES = ("assistant", "all")
#: `--scope assistant`: the surfaces whose prompts go through the assistant's planner.
ASSISTANT_SURFACES = ("chat", "editor_assistant")
PROMPT_DESIGN_TABLE = "prompt_label_sample_design"
DEFAULT_PROMPT_ID_PATTERN = labels.DEFAULT_RETRIEVAL_ID_PATTERN
PROMPT_JUDGING_COLUMNS = [
    "prompt_id",
    "prompt_text",
    "surface",
    "triggered",
    "iso_week",
    "stratum",
    "stratum_population_size",
    "stratum_sample_size",
    "inclusion_probability",
    "sampled_at",
    "has_retrieval_intent",
    "retrieval_intent_count",
    "judge",
    "judged_at",
]
TRUE_TEXT = ("true", "1", "yes")
FALSE_TEXT = ("false", "0", "no")
#: A count of intents: a non-negative integer (`2` and `2.0` pass), at most 9 digits.
INTENT_COUNT_PATTERN = r"[+]?\d{1,9}(\.0*)?"
PROMPT_REJECT_REASONS = (
    "json_parse_error",
    "missing_prompt_id",
    "invalid_prompt_id",
    "unknown_prompt_id",
    "invalid_has_retrieval_intent",
    "invalid_retrieval_intent_count",
    "inconsistent_intent_count",
    "invalid_judge",
    "invalid_judged_at",
    *labels.DESIGN_REJECT_REASONS,
    "invalid_stratum_size",
    "conflicting_duplicate",
)


def prompt_design_spec() -> Table:
    """The contract table `prompt_label_sample_design` (declared in the sources file)."""
    return contract()[PROMPT_DESIGN_TABLE]


# --- sampling -----------------------------------------------------------------------------


def prompt_frame_sql(con: duckdb.DuckDBPyConnection, scope: str) -> str:
    """The sampling frame: the prompts of `fct_prompts` in `scope`, with their strata,
    text and time (the ISO week of `prompted_at`, else of `prompt_date`)."""
    for schema, name in (("marts", "fct_prompts"), ("staging", "stg_lara__prompts")):
        if not labels.relation_exists(con, schema, name):
            raise FileNotFoundError(
                f"lara label-sample --unit prompts: the warehouse has no {schema}.{name} "
                "(run `dbt build` first)"
            )
    surfaces = ", ".join(f"'{surface}'" for surface in ASSISTANT_SURFACES)
    where = "" if scope == "all" else f"where prompts.surface in ({surfaces})"
    return f"""
        select prompts.prompt_id,
            coalesce(prompts.surface, 'unknown') as surface,
            case when coalesce(prompts.is_retrieval_turn, false) then 'retrieval'
                else 'no_retrieval' end as triggered,
            strftime(coalesce(staged.prompted_at, prompts.prompt_date), '%G-W%V') as iso_week,
            staged.prompt_text,
            staged.prompted_at
        from marts.fct_prompts as prompts
        left join staging.stg_lara__prompts as staged
            on prompts.prompt_id = staged.prompt_id
        {where}
    """


def label_sample_prompts(
    warehouse: Path,
    out: Path,
    *,
    total: int | None = None,
    allocation: str = "proportional",
    sizes: Mapping[str, int] | None = None,
    default_size: int = 0,
    min_per_stratum: int = 1,
    seed: int = 7,
    scope: str = "assistant",
    strata: Sequence[str] = PROMPT_STRATUM_DIMENSIONS,
    sampled_at: dt.datetime | None = None,
) -> dict[str, Any]:
    """Draw a sample of prompts from `warehouse` and write the judging files under `out`.

    Frame: the prompts of `marts.fct_prompts` (synthetic prompts are not there),
    of the assistant's surfaces (`scope` `assistant`: chat, editor_assistant) or
    of every surface (`all`). Strata: the values of `strata` (of surface,
    triggered, iso_week) joined by `|`, e.g. `chat|no_retrieval|2026-W32`. Sizes
    as `lara.labels.label_sample`: `sizes` (pattern -> n) else `total`
    allocated by `allocation`, at least `min_per_stratum` a stratum.

    Writes `judging.csv` and `judging.jsonl` (one row per sampled prompt,
    `has_retrieval_intent` / `retrieval_intent_count` / `judge` / `judged_at`
    blank for the judge), `sample_design.csv` and `_sample.json`.
    """
    labels.check_sample_options(total, sizes, strata, PROMPT_STRATUM_DIMENSIONS)
    if scope not in PROMPT_SCOPES:
        raise ValueError(f"lara label-sample: scope {scope!r} is not {'|'.join(PROMPT_SCOPES)}")
    sampled_at = (sampled_at or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        frame_sql = prompt_frame_sql(con, scope)
        frame = con.execute(
            f"select prompt_id, {', '.join(PROMPT_STRATUM_DIMENSIONS)} from ({frame_sql})"
        ).df()
        design = labels.draw_design(
            frame,
            strata,
            id_column="prompt_id",
            seed=seed,
            total=total,
            allocation=allocation,
            sizes=sizes,
            default_size=default_size,
            min_per_stratum=min_per_stratum,
        )
        sample = labels.sampled_details(con, frame_sql, design.sample, "prompt_id", ["prompt_text"])
    sample["sampled_at"] = pd.Timestamp(sampled_at)
    judging = sample.sort_values(["stratum", "prompt_id"]).reset_index(drop=True)
    for column in ("has_retrieval_intent", "retrieval_intent_count", "judge", "judged_at"):
        judging[column] = None
    judging = judging[PROMPT_JUDGING_COLUMNS]
    judging["sampled_at"] = judging["sampled_at"].map(labels.iso_utc)
    summary = {
        "warehouse": str(warehouse),
        "unit": "prompts",
        "sampled_at": labels.iso_utc(sampled_at),
        "seed": seed,
        "scope": scope,
        "strata_dimensions": list(strata),
        "allocation": "per_stratum" if sizes is not None else allocation,
        "total_requested": total,
        "min_per_stratum": min_per_stratum,
        "prompts_in_frame": design.frame_size,
        "strata": len(design.population),
        "prompts_sampled": len(judging),
        "judging_rows": len(judging),
        "strata_sizes": design.strata_sizes(),
    }
    labels.write_sample_files(out, judging, labels.design_rows(judging, "prompt_id"), summary)
    return summary


# --- importing judgements ---------------------------------------------------------------


def _size_ok(sizes: pd.Series, text: pd.Series) -> pd.Series:
    """Blank, or a whole number >= 1 (the contract's stratum size columns)."""
    return (text == "") | (np.isfinite(sizes) & (sizes >= 1) & (sizes == sizes.round()))


def validate_prompt_judgements(
    frame: pd.DataFrame,
    *,
    default_judge: str | None = None,
    prompt_id_pattern: str = DEFAULT_PROMPT_ID_PATTERN,
    known_prompt_ids: Iterable[str] | None = None,
    imported_at: dt.datetime,
) -> pd.DataFrame:
    """The rows with typed columns and `reject_reason` (null = valid, first failure wins).

    `has_retrieval_intent`: true/false, 1/0 or yes/no, any case. A blank
    `retrieval_intent_count` means 0 where the prompt has no retrieval intent;
    otherwise it must be a non-negative integer consistent with the flag
    (no intent: 0; intent: at least 1).
    """
    prompt_id = labels.text_column(frame, "prompt_id")
    intent_text = labels.text_column(frame, "has_retrieval_intent").str.lower()
    intent = intent_text.isin(TRUE_TEXT)
    intent_ok = intent | intent_text.isin(FALSE_TEXT)
    count_text = labels.text_column(frame, "retrieval_intent_count")
    count_text = count_text.where((count_text != "") | ~intent_ok | intent, "0")
    count_ok = count_text.str.fullmatch(INTENT_COUNT_PATTERN)
    count = pd.to_numeric(count_text.where(count_ok), errors="coerce")
    inconsistent = (intent & (count == 0)) | (~intent & (count > 0))
    judge, judged_at, judged_bad = labels.judge_columns(frame, default_judge, imported_at)
    id_ok, known = labels.id_checks(prompt_id, prompt_id_pattern, known_prompt_ids)
    design, design_problems = labels.design_columns(frame)
    sizes_ok = pd.Series(True, index=frame.index)
    if "inclusion_probability" in frame.columns:  # the file carries the design
        for column in ("stratum_population_size", "stratum_sample_size"):
            sizes_ok &= _size_ok(design[column], labels.text_column(frame, column))
    conditions = [
        frame["_parse_error"].astype(bool),
        prompt_id == "",
        ~id_ok,
        ~known,
        ~intent_ok,
        ~count_ok,
        inconsistent,
        ~judge.isin(labels.JUDGES),
        judged_bad,
        *design_problems,
        ~sizes_ok,
    ]
    out = pd.DataFrame(
        {
            "prompt_id": prompt_id,
            "has_retrieval_intent": intent,
            "retrieval_intent_count": count,
            "judge": judge,
            "judged_at": judged_at,
            **design,
            "reject_reason": labels.first_reason(frame, conditions, PROMPT_REJECT_REASONS),
            "_line": frame["_line"],
            "_raw": frame["_raw"],
        }
    )
    # The same judgement key with different labels: every version is refused.
    return labels.mark_conflicting_duplicates(
        out,
        ["prompt_id", "judge", "judged_at"],
        ["has_retrieval_intent", "retrieval_intent_count"],
    )


def label_import_prompts(
    file: Path,
    raw: Path,
    *,
    rejects: Path | None = None,
    default_judge: str | None = None,
    prompt_id_pattern: str = DEFAULT_PROMPT_ID_PATTERN,
    known_prompt_ids: Iterable[str] | None = None,
    skip_unjudged: bool = True,
    write_design: bool = True,
    imported_at: dt.datetime | None = None,
) -> dict[str, Any]:
    """Validate a returned prompt judging file and append its labels to the raw logs.

    Valid rows go to `<raw>/prompt_labels/dt=<judged day>/labels-<timestamp>.jsonl`
    (prompt_id, has_retrieval_intent, retrieval_intent_count, judge, judged_at;
    `judged_at` defaults to the import time where blank); the sample design of
    their prompts, where the file carries it, once per (prompt, sampled_at) to
    `<raw>/prompt_label_sample_design/dt=<sampled day>/design-<timestamp>.jsonl`.
    Rows with a blank `has_retrieval_intent` are unjudged: skipped
    (`skip_unjudged`), else rejected. Refused rows go to `rejects` (default
    `<file>.rejects.jsonl`) with their line and `reject_reason` (one of
    `PROMPT_REJECT_REASONS`). Exact duplicate rows are written once.
    """
    return labels.import_labels(
        file,
        raw,
        validate=functools.partial(
            validate_prompt_judgements,
            default_judge=default_judge,
            prompt_id_pattern=prompt_id_pattern,
            known_prompt_ids=known_prompt_ids,
        ),
        judged_column="has_retrieval_intent",
        labels_table="prompt_labels",
        label_types={
            "prompt_id": None,
            "has_retrieval_intent": "bool",
            "retrieval_intent_count": "int64",
            "judge": None,
            "judged_at": None,
        },
        design=prompt_design_spec(),
        rejects=rejects,
        skip_unjudged=skip_unjudged,
        write_design=write_design,
        imported_at=imported_at,
    )


# --- command line: `lara label-sample` / `lara label-import` with --unit --------------------

_SCOPES = {"retrievals": ("tier", "non_synthetic", "all"), "prompts": PROMPT_SCOPES}
_DIMENSIONS = {"retrievals": labels.STRATUM_DIMENSIONS, "prompts": PROMPT_STRATUM_DIMENSIONS}
_UNIT_HELP = (
    "what to sample and judge: retrievals (default; relevance grades of their top-K assets, "
    "Tier 1) or prompts (retrieval intent, Tier 0)"
)


def _unit_error(message: str) -> int:
    print(f"lara {message}", file=sys.stderr)
    return 2


def add_label_sample_arguments(parser: argparse.ArgumentParser) -> None:
    """`lara label-sample`: the shared sampling options, `--unit` and each unit's own."""
    parser.add_argument("--unit", choices=UNITS, default="retrievals", help=_UNIT_HELP)
    labels.add_sampling_arguments(
        parser, "retrievals or prompts", "the stratum name, e.g. find|chat|2026-W32"
    )
    parser.add_argument(
        "--scope",
        choices=sorted({scope for scopes in _SCOPES.values() for scope in scopes}),
        help="retrievals: tier (default: not synthetic, not misrouted), non_synthetic or all; "
        "prompts: assistant (default: chat and editor_assistant) or all",
    )
    parser.add_argument(
        "--strata",
        help="comma-separated stratum dimensions; retrievals among "
        f"{','.join(labels.STRATUM_DIMENSIONS)}, prompts among "
        f"{','.join(PROMPT_STRATUM_DIMENSIONS)} (default: all of the unit's)",
    )
    parser.add_argument(
        "--k",
        type=whole_number(1),
        help=f"retrievals only: top-K assets per retrieval (default {labels.DEFAULT_K}); "
        "an error with --unit prompts",
    )
    parser.add_argument(
        "--include-empty",
        action="store_true",
        default=None,
        help="retrievals only: keep retrievals with an empty result; an error with --unit prompts",
    )
    parser.set_defaults(func=label_sample_main)


def label_sample_main(args: argparse.Namespace) -> int:
    """Dispatch on `--unit`: fill the unit's defaults, refuse the other unit's options."""
    unit = args.unit
    scope = args.scope or _SCOPES[unit][0]
    if scope not in _SCOPES[unit]:
        return _unit_error(
            f"label-sample: --scope {scope} is not {'|'.join(_SCOPES[unit])} for --unit {unit}"
        )
    strata = args.strata or ",".join(_DIMENSIONS[unit])
    if unit == "retrievals":
        return labels.label_sample_main(
            argparse.Namespace(
                **{
                    **vars(args),
                    "scope": scope,
                    "strata": strata,
                    "k": labels.DEFAULT_K if args.k is None else args.k,
                    "include_empty": bool(args.include_empty),
                }
            )
        )
    given = [
        flag
        for flag, value in (("--k", args.k), ("--include-empty", args.include_empty))
        if value is not None
    ]
    if given:
        return _unit_error(f"label-sample: {' and '.join(given)}: only with --unit retrievals")
    summary = labels.run_sampler(
        argparse.Namespace(**{**vars(args), "strata": strata}),
        label_sample_prompts,
        scope=scope,
    )
    if summary is None:
        return 2
    print(
        f"lara label-sample: {summary['prompts_sampled']} of {summary['prompts_in_frame']} "
        f"prompts in {summary['strata']} strata to judge "
        f"-> {args.out}/judging.csv, judging.jsonl"
    )
    return 0


def add_label_import_arguments(parser: argparse.ArgumentParser) -> None:
    """`lara label-import`: the shared import options, `--unit` and each unit's id pattern."""
    parser.add_argument("--unit", choices=UNITS, default="retrievals", help=_UNIT_HELP)
    labels.add_import_arguments(parser)
    parser.add_argument(
        "--retrieval-id-pattern",
        help="retrievals only: the regular expression a retrieval_id must match in full "
        "(default: letters, digits and _.:/#@+=-, up to 256 characters)",
    )
    parser.add_argument(
        "--prompt-id-pattern",
        help="prompts only: the regular expression a prompt_id must match in full "
        "(default: as for retrieval ids)",
    )
    parser.set_defaults(func=label_import_main)


def label_import_main(args: argparse.Namespace) -> int:
    """Dispatch on `--unit`: refuse the other unit's id pattern, fill the unit's default."""
    other, value = {
        "retrievals": ("--prompt-id-pattern", args.prompt_id_pattern),
        "prompts": ("--retrieval-id-pattern", args.retrieval_id_pattern),
    }[args.unit]
    if value is not None:
        return _unit_error(f"label-import: {other} does not apply to --unit {args.unit}")
    if args.unit == "retrievals":
        pattern = args.retrieval_id_pattern or labels.DEFAULT_RETRIEVAL_ID_PATTERN
        return labels.label_import_main(
            argparse.Namespace(**{**vars(args), "retrieval_id_pattern": pattern})
        )

    def call() -> dict[str, Any]:
        return label_import_prompts(
            Path(args.file),
            Path(args.raw),
            rejects=Path(args.rejects) if args.rejects else None,
            default_judge=args.default_judge,
            prompt_id_pattern=args.prompt_id_pattern or DEFAULT_PROMPT_ID_PATTERN,
            known_prompt_ids=labels.sample_ids(args.sample, "prompt_id") if args.sample else None,
            skip_unjudged=not args.reject_unjudged,
            write_design=not args.no_design,
        )

    return labels.run_import(call, args.allow_rejects)

"""Before/after values of the marts a metric-definition change moves.

    python -m lara.metrics_changes BEFORE.duckdb AFTER.duckdb [--out docs/metrics-changes.md]

BEFORE and AFTER are two warehouses built from the same raw logs (the bundled
sample) by the project before and after a change of metrics.md. Each change
of spec v2 names the numbers it can move (a SQL query over the marts, one
value per row label); the report shows both values and the difference, or
"new" where the column did not exist before. The reasons are written beside
each table, so that a team upgrading knows what moved and why.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb

from lara.paths import project_dir


@dataclass(frozen=True)
class Check:
    label: str
    sql: str  # one row, one value


@dataclass(frozen=True)
class Change:
    title: str
    why: str
    checks: tuple[Check, ...]


def _overall(mart: str, column: str, where: str = "grouping_level = 'overall'") -> str:
    return f"select {column} from marts.{mart} where {where}"


def _period(mart: str, column: str, surface: str = "all") -> str:
    return f"select {column} from marts.{mart} where is_period_total and surface = '{surface}'"


CHANGES: tuple[Change, ...] = (
    Change(
        "1. Synthetic scope is per prompt",
        "A real prompt in a session that also holds a synthetic one stays in (v1 dropped the "
        "whole session); actions without a prompt whose lineage leads to a synthetic retrieval "
        "are now excluded. The generator plants synthetic traffic as whole sessions, so on the "
        "bundled sample these counts do not move; the unit tests in "
        "models/intermediate/scope/_scope__unit_tests.yml show the mixed-session cases.",
        (
            Check(
                "synthetic prompts",
                _overall(
                    "agg_scope_exclusions",
                    "synthetic_count",
                    "record_type = 'prompt' and grouping_level = 'overall'",
                ),
            ),
            Check(
                "synthetic actions",
                _overall(
                    "agg_scope_exclusions",
                    "synthetic_count",
                    "record_type = 'action' and grouping_level = 'overall'",
                ),
            ),
            Check(
                "synthetic sessions",
                _overall(
                    "agg_scope_exclusions",
                    "synthetic_count",
                    "record_type = 'session' and grouping_level = 'overall'",
                ),
            ),
            Check(
                "in-scope sessions (fct_sessions rows)", "select count(*) from marts.fct_sessions"
            ),
            Check(
                "synthetic outcome events",
                _overall("agg_unattributed_outcomes", "synthetic_outcome_count"),
            ),
        ),
    ),
    Change(
        "2. Placement inherits every resolved place (chain_root_method)",
        "Rule 2 now inherits a place resolved by rule 4 too, and records the rule that resolved "
        "the chain's first place. Actions that rule 4 alone credited in v1 now carry a placement "
        "credit, which counts as retrieval-driven in Tier 3; the agreement rate keeps "
        "lineage-backed rows only (direct, or placement rooted in a source id), so it does not "
        "move for this reason.",
        (
            Check(
                "placement credits",
                "select count(*) from marts.fct_action_attributions "
                "where attribution_method = 'placement'",
            ),
            Check(
                "  of which chain_root_method = temporal",
                "select count(*) from "
                "marts.fct_action_attributions where chain_root_method = 'temporal'",
            ),
            Check(
                "temporal credits",
                "select count(*) from marts.fct_action_attributions "
                "where attribution_method = 'temporal'",
            ),
            Check(
                "completion rate (Tier 3, overall)",
                _overall("agg_tier3_completion", "round(completion_rate, 6)"),
            ),
            Check(
                "retrieval-driven outcome events (product health)",
                _overall("agg_unattributed_outcomes", "retrieval_driven_outcome_count"),
            ),
            Check(
                "temporal-only outcome events",
                _overall("agg_unattributed_outcomes", "temporal_only_outcome_count"),
            ),
            Check(
                "lineage-corrected abandonment (assistant sessions)",
                _period("agg_abandonment", "round(abandonment_rate_lineage_corrected, 6)"),
            ),
            Check(
                "agreement rate", _overall("agg_attribution_agreement", "round(agreement_rate, 6)")
            ),
            Check(
                "agreement denominator",
                _overall("agg_attribution_agreement", "lineage_action_count"),
            ),
        ),
    ),
    Change(
        "3. Outcome events vs credits",
        "`retrieval_driven_outcome_count` keeps its meaning (credits: one export credited to "
        "three retrievals counts three times); `retrieval_driven_outcome_event_count` counts "
        "each event once on every row.",
        (
            Check(
                "credits (retrieval_driven_outcome_count), overall",
                _overall("agg_tier3_completion", "retrieval_driven_outcome_count"),
            ),
            Check(
                "distinct events (retrieval_driven_outcome_event_count), overall",
                _overall("agg_tier3_completion", "retrieval_driven_outcome_event_count"),
            ),
            Check(
                "cross-session credits, overall",
                _overall("agg_tier3_completion", "cross_session_outcome_count"),
            ),
            Check(
                "cross-session events, overall",
                _overall("agg_tier3_completion", "cross_session_outcome_event_count"),
            ),
        ),
    ),
    Change(
        "4. A null CTU on an ok replay is quarantined",
        "An `ok` replay without its counterfactual outcomes is quarantined (missing_required) "
        "instead of leaving the percentile population silently. The generator writes none, so "
        "the bundled sample does not move.",
        (
            Check(
                "quarantined replay_documents rows",
                "select count(*) from "
                "data_quality.dq_quarantine where table_name = 'replay_documents'",
            ),
            Check("fct_document_utility rows", "select count(*) from marts.fct_document_utility"),
        ),
    ),
    Change(
        "Added in v2",
        "New numbers (no before value).",
        (
            Check(
                "intent coverage rate (labelled multi-intent prompts)",
                _period("agg_tier0_routing", "round(intent_coverage_rate, 6)"),
            ),
            Check(
                "  its denominator",
                _period("agg_tier0_routing", "intent_coverage_rate_denominator"),
            ),
            Check(
                "agent consumption confirmed rate (over ACR retrievals)",
                _overall("agg_tier2_usage", "round(agent_consumption_confirmed_rate, 6)"),
            ),
            Check(
                "  its denominator",
                _overall("agg_tier2_usage", "agent_consumption_retrieval_count"),
            ),
            Check(
                "lineage faults (actions whose source id names no retrieval)",
                _overall("agg_lineage_faults", "lineage_fault_count"),
            ),
            Check(
                "re-retrieval rate (returned again to the user within 7 days, before any outcome)",
                _overall("agg_reretrieval", "round(reretrieval_rate, 6)"),
            ),
            Check(
                "  its denominator (in-scope retrievals with >= 1 returned asset)",
                _overall("agg_reretrieval", "reretrieval_rate_denominator"),
            ),
            Check(
                "missed retrievals per prompt, rough (chat trigger rate - assistant's)",
                _period(
                    "agg_tier0_missed_retrieval",
                    "round(rough_missed_retrieval_share_estimate, 6)",
                    "assistant",
                ),
            ),
            Check(
                "missed retrievals per prompt, labelled as drawn (assistant; over-drawn intent)",
                _period(
                    "agg_tier0_missed_retrieval",
                    "round(missed_retrieval_prompt_share, 6)",
                    "assistant",
                ),
            ),
            Check(
                "  labelled prompts with a logged design (the generator logs none)",
                _period("agg_tier0_missed_retrieval", "weighted_prompt_count", "assistant"),
            ),
        ),
    ),
)


def _value(con: duckdb.DuckDBPyConnection, sql: str) -> object:
    try:
        row = con.execute(sql).fetchone()
    except duckdb.Error:
        return None
    return None if row is None else row[0]


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6f}".rstrip("0").rstrip(".")
    return str(value)


def _delta(before: object, after: object) -> str:
    if before is None and after is not None:
        return "new"
    if isinstance(before, int | float) and isinstance(after, int | float):
        diff = after - before
        return "0" if diff == 0 else _fmt(round(diff, 6) if isinstance(diff, float) else diff)
    return ""


def report(before: Path, after: Path) -> str:
    lines = [
        "# Metric definition changes (metrics.md v2): before and after",
        "",
        "Written by `python -m lara.metrics_changes BEFORE AFTER`",
        "(python/src/lara/metrics_changes.py) from two builds of the bundled sample",
        "(`make run`: 20,000 sessions over 14 days, seed 7),",
        "one by the project before the v2 changes and one after. Upgrading an existing warehouse:",
        "run `dbt build --full-refresh` once (intermediate models and marts gained columns, and",
        "incremental models fail on a schema change rather than guess).",
        "",
    ]
    with (
        duckdb.connect(str(before), read_only=True) as old,
        duckdb.connect(str(after), read_only=True) as new,
    ):
        for change in CHANGES:
            lines += [f"## {change.title}", "", change.why, ""]
            lines += ["| number | before | after | change |", "|---|---:|---:|---:|"]
            for check in change.checks:
                was, now = _value(old, check.sql), _value(new, check.sql)
                lines.append(f"| {check.label} | {_fmt(was)} | {_fmt(now)} | {_delta(was, now)} |")
            lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--out", type=Path, default=project_dir() / "docs" / "metrics-changes.md")
    args = parser.parse_args(argv)
    args.out.write_text(report(args.before, args.after))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

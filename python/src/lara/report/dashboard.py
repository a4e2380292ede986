"""A static HTML dashboard of the marts (`lara report`).

One self-contained file: the stylesheet is inlined, every chart is inline
SVG drawn here, the optional bridge PNG is embedded as base64, and there is
no JavaScript and no URL to fetch, so it opens from a file share, an e-mail
attachment or an air-gapped machine. Key numbers carry
`data-metric="<mart>.<column>"`, `data-filter="<column>=<value>"` and
`data-value="<exact value>"`, so a test (or a curious reader) can trace each
to its mart row.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import os
from collections.abc import Iterable
from html import escape
from pathlib import Path
from typing import Any

from lara import __version__
from lara.report import svg
from lara.report.data import MAX_SCATTER_POINTS, DashboardData, load_dashboard_data
from lara.report.style import CSS

DEFAULT_DASHBOARD_PATH = Path("reports") / "dashboard.html"

ROLE_LABELS = {
    "all": "All roles",
    "find": "find",
    "browse": "browse",
    "operate": "operate",
    "generation_reference": "generation reference",
    "task_step": "task step",
    "context_dependent": "context dependent",
    "unknown": "unknown (legacy)",
}
SURFACE_LABELS = {
    "all": "All surfaces",
    "assistant": "Assistant (chat + editor)",
    "chat": "Chat",
    "editor_assistant": "Editor assistant",
    "template_search": "Template search",
    "unknown": "Unknown",
}


def _role(role: str) -> str:
    return ROLE_LABELS.get(role, role)


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _count(value: Any) -> str:
    return "n/a" if _is_missing(value) else f"{value:,.0f}"


def _format(value: Any, kind: str) -> str:
    if _is_missing(value):
        return "n/a"
    if kind == "pct":
        return svg.pct(float(value))
    if kind == "count":
        return f"{value:,.0f}"
    if kind == "ratio":
        return f"{float(value):.2f}"
    if kind == "score":
        return f"{float(value):.3f}"
    return _e(value)


def metric(
    value: Any,
    key: str,
    where: str,
    kind: str = "pct",
    numerator: Any = None,
    denominator: Any = None,
    css: str = "num",
) -> str:
    """A number with its provenance: data-metric, data-filter, data-value."""
    raw = "" if _is_missing(value) else repr(float(value) if kind != "text" else value)
    if kind == "text" and not _is_missing(value):
        raw = str(value)
    html = (
        f'<span class="{css}" data-metric="{_e(key)}" data-filter="{_e(where)}" '
        f'data-value="{_e(raw)}">{_format(value, kind)}</span>'
    )
    if numerator is not None or denominator is not None:
        html += f'<span class="nd">{_count(numerator)} / {_count(denominator)}</span>'
    return html


def _bar(row: dict, rate: str, numerator: str | None = None, denominator: str | None = None):
    return svg.Bar(
        value=row.get(rate),
        numerator=row.get(numerator) if numerator else None,
        denominator=row.get(denominator) if denominator else None,
        ci_low=row.get(f"{rate}_ci_low"),
        ci_high=row.get(f"{rate}_ci_high"),
    )


def _missing_note(data: DashboardData, tables: Iterable[str]) -> str:
    missing = [t for t in tables if t in data.missing]
    if not missing:
        return ""
    return (
        '<p class="warn-box">Not in this warehouse: '
        + ", ".join(f"<code>marts.{_e(t)}</code>" for t in missing)
        + " (run <code>dbt build</code>).</p>"
    )


# ------------------------------------------------------------------ sections


def _kpis(data: DashboardData) -> str:
    cards = []

    def card(label: str, body: str, sub: str, colour: str) -> None:
        cards.append(
            f'<div class="kpi" style="--kpi: var({colour})"><div class="k-label">{label}</div>'
            f'<div class="k-value">{body}</div><div class="k-sub">{sub}</div></div>'
        )

    tier0 = next((r for r in data.tier0 if r["surface"] == "all"), None)
    if tier0:
        card(
            "Tier 0 · trigger rate",
            metric(tier0["trigger_rate"], "agg_tier0_routing.trigger_rate", "surface=all"),
            f"prompts with a retrieval: {_count(tier0['trigger_rate_numerator'])} / "
            f"{_count(tier0['trigger_rate_denominator'])}",
            "--accent",
        )
    overall = next((r for r in data.tiers_by_role if r["grouping_level"] == "overall"), None)
    if overall:
        card(
            f"Tier 1 · NDCG@{overall['k']}",
            metric(
                overall["ndcg_at_k_mean"],
                "agg_tier1_quality.ndcg_at_k_mean",
                "retrieval_role=all",
                kind="score",
            ),
            f"mean over {_count(overall['labelled_retrieval_count'])} labelled retrievals",
            "--accent",
        )
        for label, rate, count, colour in (
            (
                "Tier 2 · genuine positive",
                "genuine_positive_rate",
                "genuine_positive_retrieval_count",
                "--gpr",
            ),
            (
                "Tier 2 · agent consumption",
                "agent_consumption_rate",
                "agent_consumption_retrieval_count",
                "--acr",
            ),
            (
                "Tier 2 · observable failure",
                "observable_failure_rate",
                "observable_failure_retrieval_count",
                "--orf",
            ),
        ):
            card(
                label,
                metric(overall[rate], f"agg_tier2_usage.{rate}", "retrieval_role=all"),
                f"{_count(overall[count])} / {_count(overall['in_scope_retrieval_count'])} "
                "in-scope retrievals",
                colour,
            )
        card(
            "Tier 3 · completion",
            metric(
                overall["completion_rate"],
                "agg_tier3_completion.completion_rate",
                "retrieval_role=all",
            ),
            f"{_count(overall['completed_retrieval_count'])} retrievals led to an export, "
            "share or download",
            "--done",
        )
    if data.diagnosis_overall:
        d = data.diagnosis_overall
        card(
            "Masked retrieval failure",
            metric(
                d["masked_retrieval_failure_rate"],
                "agg_tier_diagnosis.masked_retrieval_failure_rate",
                "retrieval_role=all",
            ),
            f"{_count(d['masked_retrieval_failure_retrieval_count'])} / "
            f"{_count(d['labelled_retrieval_count'])} labelled: bad results the model covered",
            "--orf",
        )
    reader = next((r for r in data.bridge_statistics if r["sru_variant"] == "reader"), None)
    if reader:
        card(
            "Bridge documents",
            metric(reader["bridge_share"], "bridge_statistics.bridge_share", "sru_variant=reader"),
            "low static relevance, high trajectory utility",
            "--bridge",
        )
    return f'<div class="kpis">{"".join(cards)}</div>'


def _tier0_section(data: DashboardData) -> str:
    rows = []
    for r in data.tier0:
        where = f"surface={r['surface']}"
        css = ' class="total"' if r["surface"] == "all" else ""
        cells = [f"<td>{_e(SURFACE_LABELS.get(r['surface'], r['surface']))}</td>"]
        for name in ("trigger_rate", "misroute_rate", "missed_retrieval_rate", "multi_intent_rate"):
            cells.append(
                "<td>"
                + metric(
                    r[name],
                    f"agg_tier0_routing.{name}",
                    where,
                    numerator=r[f"{name}_numerator"],
                    denominator=r[f"{name}_denominator"],
                )
                + "</td>"
            )
        cells.append(f"<td>{_count(r['labelled_prompt_count'])}</td>")
        rows.append(f"<tr{css}>{''.join(cells)}</tr>")
    table = (
        '<div class="table-wrap"><table><thead><tr><th>Surface</th><th>Trigger rate</th>'
        "<th>Misroute rate</th><th>Missed-retrieval rate</th><th>Multi-intent rate</th>"
        f"<th>Labelled prompts</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
    return f"""
<section class="card" id="tier0">
  <h2>Tier 0 · Did the planner call retrieval when it should?</h2>
  <p class="lede">Routing, per surface, over non-synthetic prompts. The trigger rate is
  measured on every prompt; the other three on the prompts with a routing label.</p>
  <div class="def"><b>Trigger rate</b> = prompts with &ge; 1 retrieval / prompts.
  <b>Misroute rate</b> = labelled prompts with a retrieval but no retrieval intent / labelled
  prompts with a retrieval. <b>Missed-retrieval rate</b> = labelled prompts with retrieval
  intent and no retrieval / labelled prompts with retrieval intent. <b>Multi-intent rate</b>
  = labelled prompts with &ge; 2 retrieval intents / labelled prompts. Small print under each
  number: numerator / denominator. Source: <code>marts.agg_tier0_routing</code>.</div>
  {_missing_note(data, ["agg_tier0_routing"])}{table}
</section>"""


def _tiers_section(data: DashboardData) -> str:
    rows = data.tiers_by_role
    if not rows:
        return f"""
<section class="card" id="tiers"><h2>Tiers 1-3 per retrieval role</h2>
{_missing_note(data, ["agg_tier1_quality", "agg_tier2_usage", "agg_tier3_completion"])}
</section>"""
    k = rows[0]["k"]
    body = []
    for r in rows:
        where = f"retrieval_role={r['retrieval_role']}"
        css = ' class="total"' if r["grouping_level"] == "overall" else ""
        c = [
            f"<td class='label'>{_e(_role(r['retrieval_role']))}</td>",
            f"<td>{metric(r['in_scope_retrieval_count'], 'agg_tier1_quality.in_scope_retrieval_count', where, kind='count')}</td>",  # noqa: E501
            "<td>"
            + metric(
                r["empty_result_rate"],
                "agg_tier1_quality.empty_result_rate",
                where,
                numerator=r["empty_retrieval_count"],
                denominator=r["in_scope_retrieval_count"],
            )
            + "</td>",
            "<td>"
            + metric(
                r["precision_at_1_mean"],
                "agg_tier1_quality.precision_at_1_mean",
                where,
                numerator=r["relevant_at_1_retrieval_count"],
                denominator=r["labelled_retrieval_count"],
            )
            + "</td>",
            "<td>"
            + metric(r["ndcg_at_k_mean"], "agg_tier1_quality.ndcg_at_k_mean", where, kind="score")
            + f'<span class="nd">Σ{float(r["ndcg_at_k_sum"]):,.1f}'
            f" / {_count(r['labelled_retrieval_count'])}</span></td>",
        ]
        for rate, count in (
            ("genuine_positive_rate", "genuine_positive_retrieval_count"),
            ("agent_consumption_rate", "agent_consumption_retrieval_count"),
            ("observable_failure_rate", "observable_failure_retrieval_count"),
            ("unobserved_rate", "unobserved_retrieval_count"),
        ):
            c.append(
                "<td>"
                + metric(
                    r[rate],
                    f"agg_tier2_usage.{rate}",
                    where,
                    numerator=r[count],
                    denominator=r["in_scope_retrieval_count"],
                )
                + "</td>"
            )
        c.append(
            "<td>"
            + metric(
                r["one_minus_observable_failure_rate"],
                "agg_tier2_usage.one_minus_observable_failure_rate",
                where,
            )
            + "</td>"
        )
        c.append(
            "<td>"
            + metric(
                r["completion_rate"],
                "agg_tier3_completion.completion_rate",
                where,
                numerator=r["completed_retrieval_count"],
                denominator=r["in_scope_retrieval_count"],
            )
            + "</td>"
        )
        c.append(
            "<td>"
            + metric(
                r["goal_rate"],
                "agg_tier3_completion.goal_rate",
                where,
                numerator=r["goal_achieved_prompt_count"],
                denominator=r["goal_labelled_prompt_count"],
            )
            + "</td>"
        )
        body.append(f"<tr{css}>{''.join(c)}</tr>")
    table = (
        '<div class="table-wrap"><table><thead>'
        '<tr><th></th><th></th><th class="group" colspan="3">Tier 1 · quality at trigger</th>'
        '<th class="group" colspan="5">Tier 2 · were the results used</th>'
        '<th class="group" colspan="2">Tier 3 · task completion</th></tr>'
        "<tr><th>Retrieval role</th><th>In-scope retrievals</th><th>Empty results</th>"
        f"<th>Precision@1</th><th>NDCG@{k}</th><th>GPR</th><th>ACR</th><th>ORF</th><th>UOR</th>"
        "<th>1 - ORF</th><th>Completion</th><th>Goal rate</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )
    roles = [r for r in rows if r["grouping_level"] == "role"]
    overall = [r for r in rows if r["grouping_level"] == "overall"]
    ordered = roles + overall
    labels = [ROLE_LABELS.get(r["retrieval_role"], r["retrieval_role"]) for r in ordered]
    tier2_values = {}
    tier13_values = {}
    for label, r in zip(labels, ordered, strict=True):
        for key, count in (
            ("genuine_positive_rate", "genuine_positive_retrieval_count"),
            ("agent_consumption_rate", "agent_consumption_retrieval_count"),
            ("observable_failure_rate", "observable_failure_retrieval_count"),
            ("unobserved_rate", "unobserved_retrieval_count"),
        ):
            tier2_values[(label, key)] = _bar(r, key)
            tier2_values[(label, key)] = svg.Bar(
                r[key],
                r[count],
                r["in_scope_retrieval_count"],
                r[f"{key}_ci_low"],
                r[f"{key}_ci_high"],
            )
        tier13_values[(label, "precision_at_1_mean")] = svg.Bar(
            r["precision_at_1_mean"],
            r["relevant_at_1_retrieval_count"],
            r["labelled_retrieval_count"],
            r["precision_at_1_mean_ci_low"],
            r["precision_at_1_mean_ci_high"],
        )
        tier13_values[(label, "ndcg_at_k_mean")] = svg.Bar(
            r["ndcg_at_k_mean"], None, None, r["ndcg_at_k_mean_ci_low"], r["ndcg_at_k_mean_ci_high"]
        )
        tier13_values[(label, "completion_rate")] = svg.Bar(
            r["completion_rate"],
            r["completed_retrieval_count"],
            r["in_scope_retrieval_count"],
            r["completion_rate_ci_low"],
            r["completion_rate_ci_high"],
        )
    tier2_chart = svg.grouped_bars(
        labels,
        [
            svg.Series("genuine_positive_rate", "GPR: user used it", "gpr"),
            svg.Series("agent_consumption_rate", "ACR: agent used it", "acr"),
            svg.Series("observable_failure_rate", "ORF: visibly failed", "orf"),
            svg.Series("unobserved_rate", "UOR: no signal", "uor"),
        ],
        tier2_values,
        "Tier 2 flags per retrieval role",
        "Share of in-scope retrievals with each Tier 2 flag, per role, with 95% Wilson intervals.",
    )
    tier13_chart = svg.grouped_bars(
        labels,
        [
            svg.Series("precision_at_1_mean", "Precision@1", "fixed"),
            svg.Series("ndcg_at_k_mean", f"NDCG@{k}", "acr"),
            svg.Series("completion_rate", "Completion rate (Tier 3)", "done"),
        ],
        tier13_values,
        "Tier 1 quality and Tier 3 completion per retrieval role",
        "Precision@1 and NDCG@K on labelled retrievals, completion rate on in-scope "
        "retrievals, per role, with 95% intervals.",
    )
    return f"""
<section class="card" id="tiers">
  <h2>Tiers 1-3 · Quality, use and completion per retrieval role</h2>
  <p class="lede">Retrieval turns only, synthetic traffic and misrouted retrievals excluded
  (scope rules). Outcomes are counted under the retrieval's day, surface and role. Roles
  differ in what "success" looks like, so read each row on its own.</p>
  <div class="def"><b>Tier 1</b> (labelled retrievals, K = {k}): empty-result rate = empty
  returned lists / in-scope retrievals; precision@1 = rank 1 relevant / labelled retrievals;
  NDCG@K = sum of NDCG@K / labelled retrievals (trec_eval <code>ndcg_cut</code>).
  <b>Tier 2</b> (denominator: in-scope retrievals): GPR = user select / place / edit /
  follow-up / export / share / download attributed to it; ACR = an agent action in the same
  prompt on a returned asset; ORF = reject, re-search or substitution; UOR = none of these.
  GPR, ACR and ORF may overlap. 1 - ORF is not a satisfaction rate.
  <b>Tier 3</b>: completion = retrievals with &ge; 1 retrieval-driven export / share /
  download / in-scope retrievals; goal rate = goal-achieved / goal-labelled prompts.
  Sources: <code>marts.agg_tier1_quality</code>, <code>agg_tier2_usage</code>,
  <code>agg_tier3_completion</code> (rows <code>grouping_level in ('role', 'overall')</code>).
  </div>
  {table}
  <div class="grid2">
    <figure>{tier2_chart}<figcaption>Tier 2: share of in-scope retrievals with each flag
    (whiskers: 95% Wilson interval). Hover a bar for numerator / denominator.</figcaption>
    </figure>
    <figure>{tier13_chart}<figcaption>Tier 1 quality (labelled retrievals) beside Tier 3
    completion (in-scope retrievals). A role can rank well and still not complete tasks.
    </figcaption></figure>
  </div>
</section>"""


_MATRIX_NAMES = {
    ("good", "failure"): ("downstream_or_routing_issue", "Downstream or routing issue"),
    ("good", "used"): ("healthy", "Healthy"),
    ("good", "neither"): ("unobserved", "Unobserved"),
    ("bad", "failure"): ("retrieval_failure_visible", "Retrieval failure, visible"),
    ("bad", "used"): ("masked_retrieval_failure", "Masked retrieval failure"),
    ("bad", "neither"): ("unobserved", "Unobserved"),
}
_MATRIX_TINT = {
    "healthy": "31,157,106",
    "masked_retrieval_failure": "224,88,58",
    "retrieval_failure_visible": "217,154,30",
    "downstream_or_routing_issue": "122,92,199",
    "unobserved": "139,151,164",
}


def _diagnosis_section(data: DashboardData) -> str:
    counts: dict[tuple[str, str], int] = {}
    for r in data.diagnosis_matrix:
        quality = "good" if r["is_tier1_good"] else "bad"
        counts[(quality, r["usage"])] = counts.get((quality, r["usage"]), 0) + r["retrieval_count"]
    total = sum(counts.values())
    rows = []
    for quality, label in (("good", "Tier 1 good"), ("bad", "Tier 1 bad")):
        cells = [
            f"<th>{label}<span class='nd'>NDCG@K {'&ge;' if quality == 'good' else '&lt;'}"
            " threshold</span></th>"
        ]
        for usage in ("failure", "used", "neither"):
            name, title = _MATRIX_NAMES[(quality, usage)]
            n = counts.get((quality, usage), 0)
            share = n / total if total else None
            peak = max(counts.values(), default=0)
            alpha = 0.08 + 0.32 * n / peak if peak else 0.08
            css = "cell masked" if name == "masked_retrieval_failure" else "cell"
            cells.append(
                f'<td class="{css}" style="background: rgba({_MATRIX_TINT[name]},{alpha:.2f})">'
                f'<span class="name">{title}</span>'
                + metric(
                    share,
                    "fct_retrievals.tier_diagnosis_share",
                    f"is_tier1_good={str(quality == 'good').lower()};usage={usage}",
                )
                + f'<span class="nd">{n:,} retrievals</span></td>'
            )
        rows.append(f"<tr>{''.join(cells)}</tr>")
    matrix = (
        '<div class="table-wrap"><table class="matrix"><thead><tr><th></th>'
        "<th>Observable failure (ORF)</th><th>Used (GPR or ACR), no failure</th>"
        f"<th>Neither used nor failed</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        "</div>"
    )
    check = ""
    if data.diagnosis_overall is not None:
        d = data.diagnosis_overall
        check = (
            '<p class="note">Labelled in-scope retrievals: '
            + metric(
                d["labelled_retrieval_count"],
                "agg_tier_diagnosis.labelled_retrieval_count",
                "retrieval_role=all",
                kind="count",
            )
            + f" (matrix total {total:,}). Threshold: NDCG@K &ge; {d['tier1_good_ndcg']}.</p>"
        )
    role_rows = []
    names = [
        ("healthy_rate", "Healthy"),
        ("masked_retrieval_failure_rate", "Masked failure"),
        ("retrieval_failure_visible_rate", "Visible failure"),
        ("downstream_or_routing_issue_rate", "Downstream / routing"),
        ("unobserved_rate", "Unobserved"),
    ]
    for r in [
        *data.diagnosis_by_role,
        *([data.diagnosis_overall] if data.diagnosis_overall else []),
    ]:
        where = f"retrieval_role={r['retrieval_role']}"
        css = ' class="total"' if r["grouping_level"] == "overall" else ""
        cells = [
            f"<td>{_e(ROLE_LABELS.get(r['retrieval_role'], r['retrieval_role']))}</td>",
            f"<td>{_count(r['labelled_retrieval_count'])}</td>",
        ]
        for rate, _ in names:
            count = rate.removesuffix("_rate") + "_retrieval_count"
            cells.append(
                "<td>"
                + metric(
                    r[rate],
                    f"agg_tier_diagnosis.{rate}",
                    where,
                    numerator=r[count],
                    denominator=r["labelled_retrieval_count"],
                )
                + "</td>"
            )
        role_rows.append(f"<tr{css}>{''.join(cells)}</tr>")
    by_role = (
        '<div class="table-wrap"><table><thead><tr><th>Retrieval role</th><th>Labelled</th>'
        + "".join(f"<th>{label}</th>" for _, label in names)
        + f"</tr></thead><tbody>{''.join(role_rows)}</tbody></table></div>"
    )
    return f"""
<section class="card" id="diagnosis">
  <h2>Reading Tier 1 and Tier 2 together</h2>
  <p class="lede">Each labelled in-scope retrieval lands in one cell: was the ranking good
  (Tier 1), and what happened next (Tier 2)? Failure is checked first. The outlined cell is
  the dangerous one: a bad ranking that the agent or the user still used, invisible without
  relevance labels.</p>
  <div class="def"><b>Share</b> = retrievals in the cell / labelled in-scope retrievals.
  Good = NDCG@K &ge; <code>tier1_good_ndcg</code>. Sources:
  <code>marts.fct_retrievals</code> (cells, split of "unobserved" by Tier 1) and
  <code>marts.agg_tier_diagnosis</code> (per role).</div>
  {_missing_note(data, ["fct_retrievals", "agg_tier_diagnosis"])}
  {matrix}{check}
  <h3>Per retrieval role</h3>
  {by_role}
</section>"""


def _naive_section(data: DashboardData) -> str:
    def label(surface: str) -> str:
        return SURFACE_LABELS.get(surface, surface)

    ctr_pairs = [
        svg.Pair(
            label(r["surface"]),
            svg.Bar(
                r["naive_session_ctr"],
                r["naive_session_ctr_numerator"],
                r["naive_session_ctr_denominator"],
            ),
            svg.Bar(
                r["retrieval_ctr"], r["retrieval_ctr_numerator"], r["retrieval_ctr_denominator"]
            ),
        )
        for r in data.ctr
    ]
    rewrite_pairs = [
        svg.Pair(
            label(r["surface"]),
            svg.Bar(
                r["naive_rewrite_rate"],
                r["naive_rewrite_rate_numerator"],
                r["naive_rewrite_rate_denominator"],
            ),
            svg.Bar(
                r["search_reformulation_rate"],
                r["search_reformulation_rate_numerator"],
                r["search_reformulation_rate_denominator"],
            ),
        )
        for r in data.rewrites
    ]
    abandonment_pairs = [
        svg.Pair(
            label(r["surface"]),
            svg.Bar(
                r["abandonment_rate_naive"],
                r["abandonment_rate_naive_numerator"],
                r["abandonment_rate_naive_denominator"],
            ),
            svg.Bar(
                r["abandonment_rate_lineage_corrected"],
                r["abandonment_rate_lineage_corrected_numerator"],
                r["abandonment_rate_lineage_corrected_denominator"],
            ),
        )
        for r in data.abandonment
    ]

    def side_by_side(
        rows: list[dict],
        mart: str,
        naive: str,
        fixed: str,
        extra: str | None,
        headers: tuple[str, ...],
    ) -> str:
        body = []
        for r in rows:
            where = f"surface={r['surface']}"
            cells = [f"<td>{_e(label(r['surface']))}</td>"]
            for name in (naive, fixed, *([extra] if extra else [])):
                cells.append(
                    "<td>"
                    + metric(
                        r[name],
                        f"{mart}.{name}",
                        where,
                        numerator=r[f"{name}_numerator"],
                        denominator=r[f"{name}_denominator"],
                    )
                    + "</td>"
                )
            body.append(f"<tr>{''.join(cells)}</tr>")
        head = "".join(f"<th>{h}</th>" for h in headers)
        return (
            f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>"
        )

    ctr_table = side_by_side(
        data.ctr,
        "agg_ctr",
        "naive_session_ctr",
        "retrieval_ctr",
        None,
        ("Surface", "Naive: per session", "Per displayed retrieval"),
    )
    rewrite_table = side_by_side(
        data.rewrites,
        "agg_rewrites",
        "naive_rewrite_rate",
        "search_reformulation_rate",
        "downstream_correction_rate",
        ("Surface", "Naive rewrite rate", "Search reformulation", "Downstream correction"),
    )
    abandonment_table = side_by_side(
        data.abandonment,
        "agg_abandonment",
        "abandonment_rate_naive",
        "abandonment_rate_lineage_corrected",
        "abandonment_overstatement",
        ("Surface", "Naive", "Lineage-corrected", "Difference (overstatement)"),
    )
    ctr_chart = (
        svg.dumbbell(
            ctr_pairs,
            "naive: sessions with a click / sessions",
            "clicked / displayed retrievals",
            "CTR, naive vs per displayed retrieval",
            "Naive conversation-level CTR beside the retrieval-level CTR per surface.",
        )
        if ctr_pairs
        else ""
    )
    rewrite_chart = (
        svg.dumbbell(
            rewrite_pairs,
            "naive rewrite rate",
            "search reformulation rate",
            "Rewrite rate, naive vs search reformulations",
            "Naive rewrite rate beside the search reformulation rate per surface.",
        )
        if rewrite_pairs
        else ""
    )
    abandonment_chart = (
        svg.dumbbell(
            abandonment_pairs,
            "naive",
            "lineage-corrected",
            "Abandonment, naive vs lineage-corrected",
            "Naive and lineage-corrected abandonment of assistant sessions per surface.",
        )
        if abandonment_pairs
        else ""
    )
    return f"""
<section class="card" id="naive">
  <h2>Naive numbers beside corrected ones</h2>
  <p class="lede">Three familiar product metrics, each computed the usual way and the way
  the logs support. The gap between the two dots is what the naive number gets wrong.</p>
  {_missing_note(data, ["agg_ctr", "agg_rewrites", "agg_abandonment"])}
  <div class="grid2">
    <div>
      <h3>Click-through rate</h3>
      <div class="def"><b>Naive</b> = assistant sessions with a user click / assistant
      sessions. <b>Per displayed retrieval</b> = displayed in-scope retrievals with &ge; 1
      attributed user click / displayed in-scope retrievals. Same clicks, different
      denominators: most assistant turns never show a grid. Direction only.
      Source: <code>marts.agg_ctr</code>.</div>
      <figure>{ctr_chart}</figure>{ctr_table}
    </div>
    <div>
      <h3>Rewrites</h3>
      <div class="def"><b>Naive rewrite rate</b> = rewritten prompts / prompts.
      <b>Search reformulation rate</b> = rewritten retrieval turns with no use of their
      results before the rewrite / retrieval-turn prompts (a retrieval failure signal).
      <b>Downstream correction rate</b> = all other rewrites / prompts (the user kept the
      results and changed the edit). Source: <code>marts.agg_rewrites</code>.</div>
      <figure>{rewrite_chart}</figure>{rewrite_table}
    </div>
  </div>
  <h3>Abandonment of assistant sessions</h3>
  <div class="def"><b>Naive</b> = sessions with no export / share / download in the same
  session / assistant sessions. <b>Lineage-corrected</b> additionally counts a session as not
  abandoned when an outcome in another session is attributed to one of its retrievals.
  Source: <code>marts.agg_abandonment</code>.</div>
  <div class="grid2"><figure>{abandonment_chart}</figure><div>{abandonment_table}</div></div>
</section>"""


def _effective_section(data: DashboardData) -> str:
    if not data.effective_actions:
        return f"""
<section class="card" id="effective"><h2>Effective action rate</h2>
{_missing_note(data, ["agg_effective_action_rate"])}</section>"""
    labels = [r["definition_name"].replace("_", " ") for r in data.effective_actions]
    values = {
        (label, "rate"): svg.Bar(
            r["effective_action_rate"],
            r["effective_action_rate_numerator"],
            r["effective_action_rate_denominator"],
            r["effective_action_rate_ci_low"],
            r["effective_action_rate_ci_high"],
        )
        for label, r in zip(labels, data.effective_actions, strict=True)
    }
    chart = svg.grouped_bars(
        labels,
        [svg.Series("rate", "effective action rate", "fixed")],
        values,
        "Effective action rate per definition",
        "Share of assistant prompts followed by a user action of the definition's types.",
        label_width=170,
    )
    rows = []
    for r in data.effective_actions:
        where = f"definition_name={r['definition_name']}"
        rows.append(
            f"<tr><td>{_e(r['definition_name'])}</td><td class='wrap'>"
            f"{_e(r['action_types'])}</td><td>"
            + metric(
                r["effective_action_rate"],
                "agg_effective_action_rate.effective_action_rate",
                where,
                numerator=r["effective_action_rate_numerator"],
                denominator=r["effective_action_rate_denominator"],
            )
            + "</td></tr>"
        )
    table = (
        '<div class="table-wrap"><table><thead><tr><th>Definition</th>'
        '<th style="text-align:left">User action types counted</th><th>Rate</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
    return f"""
<section class="card" id="effective">
  <h2>Effective action rate, one number per definition</h2>
  <p class="lede">"Effective action rate" means very different things depending on which
  actions count. Each definition is published with its action types, numerator and
  denominator, narrow to broad.</p>
  <div class="def"><b>Rate</b> = assistant prompts followed, before the session's next
  prompt, by a user action of a listed type / assistant prompts. Definitions: seed
  <code>effective_action_definitions</code>. Source:
  <code>marts.agg_effective_action_rate</code>.</div>
  <div class="grid2"><figure>{chart}</figure><div>{table}</div></div>
</section>"""


def _quality_section(data: DashboardData) -> str:
    gate = data.gate
    if gate:
        verdict = gate.get("verdict", "unknown")
        summary = gate.get("summary", {})
        partitions = ", ".join(gate.get("selection", {}).get("partitions", [])) or "none"
        verdict_html = (
            f'<div class="verdict"><span class="pill {_e(verdict)}" data-metric="gate.verdict" '
            f'data-filter="" data-value="{_e(verdict)}">{_e(verdict)}</span>'
            f'<span class="big">{_count(summary.get("failed", 0))} of '
            f"{_count(summary.get('checks', 0))} checks failed</span>"
            f'<span class="note">errors {_count(summary.get("failed_errors", 0))}, warnings '
            f"{_count(summary.get('failed_warnings', 0))}; partitions checked: "
            f"{_e(partitions)}; exit code {_e(gate.get('exit_code'))}</span></div>"
        )
        failures = gate.get("failures", [])[:12]
        failure_rows = "".join(
            f"<tr><td>{_e(f.get('partition'))}</td><td>{_e(f.get('table'))}</td>"
            f"<td style='text-align:left'>{_e(f.get('name') or f.get('check'))}</td>"
            f"<td>{_e(f.get('severity'))}</td><td>{_count(f.get('unexpected_count'))}</td></tr>"
            for f in failures
        )
        failure_table = (
            '<div class="table-wrap"><table><thead><tr><th>Partition</th><th>Table</th>'
            '<th style="text-align:left">Check</th><th>Severity</th><th>Failing rows</th>'
            f"</tr></thead><tbody>{failure_rows}</tbody></table></div>"
            if failures
            else '<p class="note">No failed check.</p>'
        )
        coverage_rows = "".join(
            f"<tr><td>{_e(c.get('partition'))}</td><td>{_count(c.get('actions'))}</td>"
            f"<td>{_count(c.get('asset_actions'))}</td><td>"
            + metric(
                c.get("lineage_coverage"),
                "gate.lineage_coverage",
                f"partition={c.get('partition')}",
            )
            + f"</td><td>{svg.pct(c.get('source_known_share'))}</td>"
            f"<td>{svg.pct(c.get('consumed_in_returned_share'))}</td></tr>"
            for c in gate.get("lineage_coverage", [])
        )
        coverage_table = (
            '<div class="table-wrap"><table><thead><tr><th>Partition</th><th>Actions</th>'
            "<th>With an asset</th><th>Lineage coverage</th><th>Source id known</th>"
            f"<th>Asset in returned list</th></tr></thead><tbody>{coverage_rows}</tbody></table>"
            "</div>"
        )
        gate_html = f"""
  <h3>Data-quality gate (Great Expectations)</h3>
  {verdict_html}
  <div class="def"><b>Verdict</b>: passed (exit 0), warnings (1) or failed (2), from
  <code>{_e(data.gate_path.name if data.gate_path else "gate_results.json")}</code>.
  <b>Lineage coverage</b> = actions with an asset whose lineage resolves (a known source
  retrieval, or a placement to inherit from) / actions with an asset, per partition.</div>
  {failure_table}{coverage_table}"""
    else:
        gate_html = """
  <h3>Data-quality gate</h3>
  <p class="warn-box"><span class="pill unknown" data-metric="gate.verdict" data-filter=""
  data-value="">not run</span> No gate results were given: run <code>lara check</code>
  and rebuild the dashboard.</p>"""

    outcome_html = ""
    o = data.outcome_attribution
    if o:
        outcome_html = f"""
  <h3>Where the outcomes come from</h3>
  <div class="def"><b>Share</b> = user export / share / download events in each attribution
  status / all such events (non-synthetic). Retrieval-driven: credited by lineage (direct,
  placement or document); temporal only: linked only by time-based inference, which Tier 3
  does not count; unattributed: product health outside retrieval.
  Source: <code>marts.agg_unattributed_outcomes</code>.</div>
  <figure>{
            svg.stacked_share(
                [
                    ("retrieval-driven", o["retrieval_driven_outcome_count"], "fixed"),
                    ("temporal only", o["temporal_only_outcome_count"], "acr"),
                    ("unattributed", o["unattributed_outcome_count"], "uor"),
                ],
                "Outcome events by attribution status",
                "Shares of outcome events per status.",
                "outcome events",
            )
        }</figure>
  <p class="note">Retrieval-driven share: {
            metric(
                o["retrieval_driven_outcome_rate"],
                "agg_unattributed_outcomes.retrieval_driven_outcome_rate",
                "grouping_level=overall",
                numerator=o["retrieval_driven_outcome_count"],
                denominator=o["outcome_count"],
            )
        }</p>"""
    methods_html = ""
    if data.attribution_methods:
        css = {"direct": "fixed", "placement": "acr", "document": "done", "temporal": "uor"}
        methods_html = f"""
  <h3>How user actions were attributed</h3>
  <div class="def">Distinct user actions credited to a retrieval, by the rule that resolved
  them (direct source id, placement, document, or the temporal fallback for actions without
  lineage). Source: <code>marts.fct_action_attributions</code>.</div>
  <figure>{
            svg.stacked_share(
                [
                    (
                        m["attribution_method"],
                        m["action_count"],
                        css.get(m["attribution_method"], "uor"),
                    )
                    for m in data.attribution_methods
                ],
                "Attributed user actions by method",
                "Shares of attributed user actions per method.",
                "attributed user actions",
            )
        }</figure>"""
    reconciliation_html = ""
    if data.reconciliation:
        rows = "".join(
            f"<tr><td>{_e(r['table_name'])}</td><td>{_count(r['raw_rows'])}</td>"
            f"<td>{_count(r['clean_rows'])}</td><td>{_count(r['quarantined_rows'])}</td>"
            f"<td>{_count(r['duplicate_rows'])}</td>"
            f"<td>{'yes' if r['is_reconciled'] else '<b>NO</b>'}</td></tr>"
            for r in data.reconciliation
        )
        reconciliation_html = f"""
  <h3>Reconciliation of the build</h3>
  <div class="def">Every raw row is clean, quarantined (with a reason) or an exact duplicate:
  raw = clean + quarantined + duplicates. Source: <code>data_quality.dq_reconciliation</code>.
  </div>
  <div class="table-wrap"><table><thead><tr><th>Table</th><th>Raw rows</th><th>Clean</th>
  <th>Quarantined</th><th>Duplicates</th><th>Reconciled</th></tr></thead>
  <tbody>{rows}</tbody></table></div>"""
    return f"""
<section class="card" id="quality">
  <h2>Data quality and lineage coverage</h2>
  <p class="lede">Whether the numbers above can be trusted: the gate's verdict on the raw
  logs, how much of the activity carries lineage, and the build's row accounting.</p>
  {gate_html}
  <div class="grid2"><div>{outcome_html}</div><div>{methods_html}</div></div>
  {reconciliation_html}
</section>"""


def _bridge_section(data: DashboardData) -> str:
    if not data.bridge_points:
        return f"""
<section class="card" id="bridge"><h2>Bridge evidence</h2>
{_missing_note(data, ["fct_document_utility"])}</section>"""
    tau_low = tau_high = 0.5
    shares: dict[str, dict[str, float | None]] = {"reader": {}, "proxy": {}}
    counts: dict[str, dict[str, int]] = {"reader": {}, "proxy": {}}
    for q in data.bridge_quadrants:
        tau_low, tau_high = q["bridge_tau_low"], q["bridge_tau_high"]
        shares.setdefault(q["sru_variant"], {})[q["quadrant"]] = q["share"]
        counts.setdefault(q["sru_variant"], {})[q["quadrant"]] = q["document_count"]
    panels = []
    for variant, x_label in (
        ("reader", "SRU percentile (reader)"),
        ("proxy", "SRU percentile (proxy score)"),
    ):
        points = data.bridge_points.get(variant, [])
        if not points:
            panels.append(f'<p class="note">No {variant} SRU values.</p>')
            continue
        drawn = [
            svg.Point(
                float(p["x"]),
                float(p["y"]),
                bool(p["is_bridge"]),
                f"SRU p={p['x']:.2f}, CTU p={p['y']:.2f}"
                + (", relevant" if p["is_relevant"] else "")
                + (", failed replay" if p["is_failed_replay"] else ""),
            )
            for p in points
            if p["x"] is not None and p["y"] is not None
        ]
        total = data.bridge_document_counts.get(variant, len(points))
        sampled = (
            f" (a deterministic sample of {len(drawn):,} of {total:,} documents)"
            if total > MAX_SCATTER_POINTS
            else f" ({total:,} documents)"
        )
        chart = svg.scatter(
            drawn,
            tau_low,
            tau_high,
            f"CTU percentile against SRU percentile, {variant} SRU",
            "Each point is a (trajectory, step, document); the shaded cell is the bridge cell.",
            x_label,
            "CTU percentile",
            "in the bridge cell",
            "other documents",
            shares.get(variant),
        )
        panels.append(
            f"<figure>{chart}<figcaption>{variant.capitalize()} SRU{sampled}. Corner numbers:"
            " share of documents per quadrant.</figcaption></figure>"
        )
    stat_rows = []
    for s in data.bridge_statistics:
        where = f"sru_variant={s['sru_variant']}"
        stat_rows.append(
            f"<tr><td>{_e(s['sru_variant'])}</td><td>{_count(s['document_count'])}</td>"
            f"<td>{_count(s['trajectory_count'])}</td><td>"
            + metric(s["spearman_rho"], "bridge_statistics.spearman_rho", where, kind="score")
            + f"</td><td>[{_format(s['rho_ci_low'], 'score')}, "
            f"{_format(s['rho_ci_high'], 'score')}]</td>"
            f"<td>{_format(s['spearman_p_value'], 'score')}</td><td>"
            + metric(s["bridge_share"], "bridge_statistics.bridge_share", where)
            + f"<span class='nd'>{_count(counts.get(s['sru_variant'], {}).get('low_sru_high_ctu'))}"
            f" / {_count(s['document_count'])}</span></td>"
            f"<td>{_count(s['failed_replay_count'])}</td></tr>"
        )
    stats = (
        '<div class="table-wrap"><table><thead><tr><th>SRU variant</th><th>Documents</th>'
        '<th>Trajectories</th><th>Spearman <span class="keep-case">&rho;</span></th>'
        "<th>95% CI (trajectory bootstrap)</th>"
        "<th>p-value</th><th>Bridge share</th><th>Failed replays</th></tr></thead>"
        f"<tbody>{''.join(stat_rows)}</tbody></table></div>"
        if stat_rows
        else '<p class="warn-box">No <code>marts.bridge_statistics</code>: run '
        "<code>lara bridge</code> (part of <code>lara run</code>).</p>"
    )
    oer = ""
    if data.entity_observability and data.entity_observability.get("oer_ratio") is not None:
        e = data.entity_observability
        oer = (
            '<p class="note">Observable entity relevance: discriminative entities appear in the '
            "next query "
            + metric(e["oer_ratio"], "entity_observability.oer_ratio", "", kind="ratio")
            + f" times as often as non-discriminative ones (95% CI "
            f"{_format(e['oer_ci_low'], 'ratio')} to {_format(e['oer_ci_high'], 'ratio')}).</p>"
        )
    png = ""
    if data.bridge_plot is not None:
        encoded = base64.b64encode(data.bridge_plot.read_bytes()).decode("ascii")
        png = (
            "<details><summary>The same plot as drawn by <code>lara bridge</code> (PNG)"
            f'</summary><img class="plot" alt="CTU vs SRU plot from lara bridge" '
            f'src="data:image/png;base64,{encoded}"></details>'
        )
    return f"""
<section class="card" id="bridge">
  <h2>Bridge evidence · static relevance vs trajectory utility</h2>
  <p class="lede">In replay experiments, does a document's static relevance (SRU) predict
  how much the multi-step trajectory needs it (CTU)? Bridge documents, low on SRU and high on
  CTU, are what a relevance-only evaluation misses.</p>
  <div class="def"><b>SRU</b> = reader score with - without the document (proxy: a
  reader-free proxy score). <b>CTU</b> = &alpha;&middot;&Delta;answer F1 +
  &beta;&middot;&Delta;retrieval recall - &gamma;&middot;&Delta;turns between the original and
  the counterfactual replay. Axes are mid-rank percentiles. <b>Bridge share</b> = documents
  with SRU percentile &lt; {tau_low} and CTU percentile &gt; {tau_high} / documents.
  Sources: <code>marts.fct_document_utility</code>, <code>agg_bridge_quadrants</code>,
  <code>bridge_statistics</code>.</div>
  <div class="grid2">{"".join(panels)}</div>
  {stats}{oer}{png}
</section>"""


def render_dashboard(data: DashboardData, generated_at: dt.datetime | None = None) -> str:
    """The complete HTML page for `data`."""
    generated_at = generated_at or dt.datetime.now(dt.UTC)
    period = data.period
    if period:
        span = (
            f"{_e(period['first_day'])} to {_e(period['last_day'])} · "
            f"{_count(period['prompt_count'])} prompts · "
            f"{_count(period['retrieval_count'])} retrievals · "
            f"{_count(period['session_count'])} sessions (non-synthetic)"
        )
    else:
        span = "no fact tables found"
    missing = ""
    if data.missing:
        missing = (
            '<p class="warn-box">Some marts are missing from this warehouse: '
            + ", ".join(f"<code>{_e(m)}</code>" for m in data.missing)
            + ". Their sections are empty.</p>"
        )
    sections = [
        _tier0_section(data),
        _tiers_section(data),
        _diagnosis_section(data),
        _naive_section(data),
        _effective_section(data),
        _quality_section(data),
        _bridge_section(data),
    ]
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="lara {_e(__version__)}">
<title>lara · retrieval in the assistant</title>
<style>{CSS}</style>
</head>
<body>
<header class="top"><div class="wrap">
  <h1>Retrieval in the assistant</h1>
  <p>Whether retrieval was triggered when it should have been, returned the right assets,
  was used, and led to finished tasks, per retrieval role. Every rate shows its numerator
  and denominator; definitions follow each chart.</p>
  <div class="meta">{span} · generated {_e(generated_at.strftime("%Y-%m-%d %H:%M UTC"))}</div>
  <nav class="toc">
    <a href="#tier0">Tier 0 routing</a><a href="#tiers">Tiers 1-3 by role</a>
    <a href="#diagnosis">Diagnosis matrix</a><a href="#naive">Naive vs corrected</a>
    <a href="#effective">Effective actions</a><a href="#quality">Data quality</a>
    <a href="#bridge">Bridge evidence</a>
  </nav>
</div></header>
<main class="wrap">
{_kpis(data)}
{missing}
{"".join(sections)}
<footer>
  Built by <code>lara report</code> from <code>{_e(data.warehouse.name)}</code> (public marts
  only: no free text, no user ids). Definitions: <code>shared/spec/metrics.md</code> and each
  mart's description (<code>dbt docs</code>). The same numbers are in the Parquet exports
  (<code>lara export</code>) and the MetricFlow semantic layer (<code>mf query</code>).
  Synthetic traffic and misrouted retrievals are excluded as the scope rules say; every
  interval is a 95% interval.
</footer>
</main>
</body>
</html>
"""


def build_dashboard(
    warehouse: Path,
    out_path: Path = DEFAULT_DASHBOARD_PATH,
    gate_results: Path | None = None,
    bridge_plot: Path | None = None,
) -> Path:
    """Write the static dashboard of `warehouse` to `out_path` and return its path.

    `gate_results`: the gate's gate_results.json (verdict, lineage coverage);
    `bridge_plot`: the PNG of `lara bridge`, embedded as base64. Both optional:
    a missing file leaves a note on the page.
    """
    warehouse = Path(warehouse)
    if not warehouse.exists():
        raise FileNotFoundError(f"lara report: warehouse {warehouse} does not exist")
    data = load_dashboard_data(warehouse, gate_results, bridge_plot)
    html = render_dashboard(data)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    partial = out_path.with_name(f".{out_path.name}.partial")
    partial.write_text(html, encoding="utf-8")
    os.replace(partial, out_path)
    return out_path

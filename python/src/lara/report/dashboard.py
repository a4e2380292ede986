"""A static HTML dashboard of the marts (`lara report`).

One self-contained file, nothing fetched: the stylesheet and one script are
inlined, charts are inline SVG, the optional bridge PNG is embedded as
base64, and a Content-Security-Policy forbids every network request, so it
opens from a file share, an e-mail attachment or an air-gapped machine.

The mart rows the filters need (day x surface x role with the marts' own
roll-ups, see data.py) travel as a JSON block; the script (dashboard.js)
picks the rows of the selected surface and retrieval role and recomputes
every rate and 95% interval from their numerators and denominators, with
the formulas of macros/metrics (Wilson; mean +/- z s / sqrt(n)). Sections
without a filterable dimension (bridge evidence, reconciliation, the gate)
are drawn here. Key numbers carry `data-metric="<mart>.<column>"`,
`data-filter="surface=...;retrieval_role=..."` and `data-value="<exact
value>"`, so a test (or a curious reader) can trace each to its mart row.
Values from the logs are escaped everywhere: HTML-escaped here, escaped by
the script before they reach the page, and the JSON block cannot close its
<script> element (`<`, `>` and `&` are written as \\u escapes).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import math
import os
from collections.abc import Iterable
from html import escape
from importlib import resources
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


def _chips(dim: str, values: list[str], labels: dict[str, str]) -> str:
    return "".join(
        f'<button type="button" class="chip" data-dim="{_e(dim)}" data-value="{_e(v)}" '
        f'aria-pressed="{"true" if v == "all" else "false"}">{_e(labels.get(v, v))}</button>'
        for v in ["all", *values]
    )


def _ordered(values: Iterable[str], order: Iterable[str]) -> list[str]:
    order = list(order)
    present = {v for v in values if v is not None and v not in ("all", "assistant")}
    return [v for v in order if v in present] + sorted(present - set(order))


def _days(table: dict[str, list] | None) -> list[str]:
    return sorted({d for d in (table or {}).get("day", []) if d is not None})


def page_data(data: DashboardData) -> dict[str, Any]:
    """What the page's script reads: mart rows, filter values, labels, logged inputs."""
    tables = data.tables
    retrieval = tables.get("retrieval", {})
    routing = tables.get("routing", {})
    surface_order = [s for s in SURFACE_LABELS if s not in ("all", "assistant")]
    retrieval_surfaces = _ordered(retrieval.get("surface", []), surface_order)
    routing_surfaces = _ordered(routing.get("surface", []), surface_order)
    ks = [k for k in retrieval.get("k", []) if k is not None]
    lineage_days = sorted(set(_days(tables.get("outcomes"))) | set(_days(tables.get("methods"))))
    return {
        "tables": tables,
        "logged": data.logged,
        "k": ks[0] if ks else "K",
        "roles": _ordered(retrieval.get("role", []), ROLE_LABELS),
        "surfaces": {
            "retrieval": retrieval_surfaces,
            "routing": routing_surfaces,
            "assistant": [s for s in routing_surfaces if s in ("chat", "editor_assistant")],
            "filter": _ordered(retrieval_surfaces + routing_surfaces, surface_order),
        },
        "days": {
            "retrieval": _days(retrieval),
            "activity": _days(routing),
            "lineage": lineage_days,
        },
        "labels": {"roles": ROLE_LABELS, "surfaces": SURFACE_LABELS},
    }


def _json_for_script(payload: dict[str, Any]) -> str:
    """JSON that cannot end its <script> element or open an HTML comment."""
    text = json.dumps(payload, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _script() -> str:
    return resources.files("lara.report").joinpath("dashboard.js").read_text(encoding="utf-8")


def _absent_note(data: DashboardData) -> str:
    """Which inputs were never logged, and what that means for the page."""
    messages = {
        "actions": "no actions logged: Tier 2 use, CTR and effective actions cannot be measured",
        "outcomes": "no outcome events logged: completion, abandonment and outcome attribution "
        "cannot be measured",
        "relevance_labels": "no relevance labels logged: Tier 1 (precision, NDCG) and the "
        "diagnosis cannot be measured",
        "replay": "no replay experiments logged: no bridge evidence",
        "stage_spans": "no stage spans logged: no stage latency or tokens",
    }
    absent = [text for flag, text in messages.items() if data.logged.get(flag) is False]
    if not absent:
        return ""
    return (
        '<p class="warn-box" id="absent-inputs">Inputs missing from these logs: '
        + "; ".join(_e(a) for a in absent)
        + ". Those numbers say so instead of showing 0% or 100%.</p>"
    )


_SECTIONS = (
    (
        "trends",
        "Daily trends",
        "The headline rates day by day for the selected surface and retrieval role. Bands: 95% "
        "intervals (Wilson for proportions, mean &plusmn; 1.96 s / &radic;n for NDCG@K).",
        "Trend points are the day rows of the marts (<code>agg_tier0_routing</code>, "
        "<code>agg_tier1_quality</code>, <code>agg_tier2_usage</code>, "
        "<code>agg_tier3_completion</code>, <code>agg_ctr</code>, <code>agg_rewrites</code>, "
        "<code>agg_abandonment</code>); a retrieval's outcomes count under the retrieval's day. "
        "Hover a point for its numerator, denominator and interval.",
    ),
    (
        "tier0",
        "Tier 0 · Did the planner call retrieval when it should?",
        "Routing, per surface, over non-synthetic prompts. The trigger rate is measured on every "
        "prompt; the other three on the prompts with a routing label.",
        "<b>Trigger rate</b> = prompts with &ge; 1 retrieval / prompts. <b>Misroute rate</b> = "
        "labelled prompts with a retrieval but no retrieval intent / labelled prompts with a "
        "retrieval. <b>Missed-retrieval rate</b> = labelled prompts with retrieval intent and no "
        "retrieval / labelled prompts with retrieval intent. <b>Multi-intent rate</b> = labelled "
        "prompts with &ge; 2 retrieval intents / labelled prompts. Small print under each number: "
        "numerator / denominator. Source: <code>marts.agg_tier0_routing</code>.",
    ),
    (
        "tiers",
        "Tiers 1-3 · Quality, use and completion",
        "Retrieval turns only, synthetic traffic and misrouted retrievals excluded (scope rules), "
        "by retrieval role and by surface. Outcomes are counted under the retrieval's day, "
        "surface and role. Roles differ in what success looks like: read each row on its own.",
        "<b>Tier 1</b> (labelled retrievals): empty-result rate = empty returned lists / in-scope "
        "retrievals; precision@1 = rank 1 relevant / labelled retrievals; NDCG@K = sum of NDCG@K "
        "/ labelled retrievals (trec_eval <code>ndcg_cut</code>). <b>Tier 2</b> (denominator: "
        "in-scope retrievals): GPR = user select / place / edit / follow-up / export / share / "
        "download attributed to it; ACR = an agent action in the same prompt on a returned asset; "
        "ORF = reject, re-search or substitution; UOR = none of these. GPR, ACR and ORF may "
        "overlap. <b>Tier 3</b>: completion = retrievals with &ge; 1 retrieval-driven export / "
        "share / download / in-scope retrievals; goal rate = goal-achieved / goal-labelled "
        "prompts. Sources: <code>marts.agg_tier1_quality</code>, <code>agg_tier2_usage</code>, "
        "<code>agg_tier3_completion</code>.",
    ),
    (
        "weighted",
        "Tier 1 weighted by the labelling design",
        "Labelled retrievals are a sample; where the sample design is logged, Tier 1 means are "
        "also estimated for all in-scope retrievals, weighting each label by the inverse of its "
        "inclusion probability. Weighted beside unweighted, per role.",
        "<b>Unweighted</b> = mean over labelled retrievals (95% CI: Wilson for precision@1, mean "
        "&plusmn; 1.96 s / &radic;n for NDCG@K). <b>Weighted</b> = Hajek ratio estimator with "
        "weights 1 / inclusion probability and a stratified linearisation interval (null with its "
        "reason where no design row is logged). <b>Effective n</b> = Kish effective sample size. "
        "Source: <code>marts.agg_tier1_weighted</code>; see docs/labelling.md.",
    ),
    (
        "diagnosis",
        "Reading Tier 1 and Tier 2 together",
        "Each labelled in-scope retrieval lands in one cell: was the ranking good (Tier 1), and "
        "what happened next (Tier 2)? Failure is checked first. The outlined cell is the "
        "dangerous one: a bad ranking that the agent or the user still used.",
        "<b>Share</b> = retrievals in the cell / labelled in-scope retrievals. Good = NDCG@K "
        "&ge; <code>tier1_good_ndcg</code>. Sources: <code>marts.fct_retrievals</code> (cells) and "
        "<code>marts.agg_tier_diagnosis</code> (per role).",
    ),
    (
        "naive",
        "Naive numbers beside corrected ones",
        "Three familiar product metrics, each computed the usual way and the way the logs "
        "support. The gap between the two dots is what the naive number gets wrong.",
        "Per reporting surface (<i>Assistant</i> = chat and editor assistant together). Each "
        "chart's definition is under its title.",
    ),
    (
        "effective",
        "Effective action rate, one number per definition",
        "Which actions count changes the number a lot; each definition is published with its "
        "action types, numerator and denominator, narrow to broad.",
        "<b>Rate</b> = assistant prompts followed, before the session's next prompt, by a user "
        "action of a listed type / assistant prompts. Definitions: seed "
        "<code>effective_action_definitions</code>. Source: "
        "<code>marts.agg_effective_action_rate</code>.",
    ),
    (
        "costs",
        "Stage latency and tokens",
        "What each pipeline stage costs per prompt, and what a successful task costs.",
        "Per stage, over prompts with spans of that stage (<i>all stages</i> sums every stage of "
        "a prompt): <b>mean latency</b> and <b>mean tokens</b> with 95% intervals (mean &plusmn; "
        "1.96 s / &radic;n), p50 and p95. <b>Per successful task</b> = the stage's latency or "
        "tokens summed over all prompts / prompts with a retrieval-driven outcome. Source: "
        "<code>marts.agg_stage_costs</code>.",
    ),
)


def _filtered_section(key: str, title: str, lede: str, definition: str) -> str:
    return f"""
<section class="card" id="{key}">
  <h2>{title}</h2>
  <p class="lede">{lede}</p>
  <div class="def">{definition}</div>
  <div data-render="{key}"></div>
</section>"""


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
        days = data.gate_days
        newest = days[-1]["partition"] if days else None
        coverage_rows = "".join(
            f"<tr><td>{_e(c.get('partition'))}"
            + (
                '<span class="nd">newest day: may still be filling</span>'
                if c.get("partition") == newest
                else ""
            )
            + f"</td><td>{'yes' if c.get('checked') else 'no'}</td>"
            f"<td>{_count(c.get('actions'))}</td>"
            f"<td>{_count(c.get('asset_actions'))}</td><td>"
            + metric(
                c.get("lineage_coverage"),
                "gate.lineage_coverage",
                f"partition={c.get('partition')}",
            )
            + f"</td><td>{svg.pct(c.get('source_known_share'))}</td>"
            f"<td>{svg.pct(c.get('consumed_in_returned_share'))}</td></tr>"
            for c in days
        )
        note = (
            f'<p class="note">Lineage coverage: {_e(data.gate_days_note)}.</p>'
            if data.gate_days_note
            else ""
        )
        coverage_table = (
            '<h3>Lineage coverage, every day</h3><p class="filter-note" data-scope="raw">'
            "Not split by surface or role: raw actions per <code>dt=</code> partition.</p>"
            + note
            + '<div class="table-wrap"><table><thead><tr><th>Partition</th>'
            "<th>Validated by the gate</th><th>Actions</th>"
            "<th>With an asset</th><th>Lineage coverage</th><th>Source id known</th>"
            f"<th>Asset in returned list</th></tr></thead><tbody>{coverage_rows}</tbody></table>"
            "</div>"
        )
        gate_html = f"""
  <h3>Data-quality gate (Great Expectations)</h3>
  {verdict_html}
  <div class="def"><b>Verdict</b>: passed (exit 0), warnings (1) or failed (2), from
  <code>{_e(data.gate_path.name if data.gate_path else "gate_results.json")}</code>.
  The gate validates the partitions it was asked for (<code>lara run</code>: the newest;
  <code>lara check --all</code>: every day). <b>Lineage coverage</b> = actions with an asset
  whose lineage resolves (a known source retrieval, or a placement to inherit from) / actions
  with an asset, per partition, computed by the gate's reader for every day of the raw
  logs.</div>
  {failure_table}{coverage_table}"""
    else:
        gate_html = """
  <h3>Data-quality gate</h3>
  <p class="warn-box"><span class="pill unknown" data-metric="gate.verdict" data-filter=""
  data-value="">not run</span> No gate results were given: run <code>lara check</code>
  and rebuild the dashboard.</p>"""

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
  <div data-render="lineage"></div>
  <h3>Reconciliation of the build</h3>
  <p class="filter-note" data-scope="build">Not split by surface or role: one row per raw table.</p>
  {reconciliation_html}
</section>"""


def _bridge_section(data: DashboardData) -> str:
    if data.logged.get("replay") is False:
        message = "no replay experiments logged"
        return f"""
<section class="card" id="bridge"><h2>Bridge evidence</h2>
<p class="lede">Bridge evidence comes from offline replay experiments (tables
<code>replay_documents</code>, <code>replay_queries</code>), not from production logs.</p>
<p><span class="absent" data-metric="bridge_statistics.bridge_share" data-filter=""
data-value="" data-absent="{message}">{message}</span></p></section>"""
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
  <p class="filter-note" data-scope="replay">Not split by surface or role: replay
  experiments have neither.</p>
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
    payload = page_data(data)
    script = _script()
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    sections = [_filtered_section(*spec) for spec in _SECTIONS]
    sections += [_quality_section(data), _bridge_section(data)]
    nav = "".join(
        f'<a href="#{key}">{label}</a>'
        for key, label in (
            ("trends", "Trends"),
            ("tier0", "Tier 0"),
            ("tiers", "Tiers 1-3"),
            ("weighted", "Weighted Tier 1"),
            ("diagnosis", "Diagnosis"),
            ("naive", "Naive vs corrected"),
            ("effective", "Effective actions"),
            ("costs", "Stage costs"),
            ("quality", "Data quality"),
            ("bridge", "Bridge evidence"),
        )
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_e(policy)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="lara {_e(__version__)}">
<title>lara · retrieval in the assistant</title>
<style>{CSS}</style>
</head>
<body>
<header class="top"><div class="wrap">
  <h1>Retrieval in the assistant</h1>
  <p>Whether retrieval was triggered when it should have been, returned the right assets,
  was used, and led to finished tasks, per surface and retrieval role. Every rate shows its
  numerator and denominator; definitions follow each chart.</p>
  <div class="meta">{span} · generated {_e(generated_at.strftime("%Y-%m-%d %H:%M UTC"))}</div>
  <nav class="toc">{nav}</nav>
</div></header>
<div class="filters" role="toolbar" aria-label="Filters"><div class="wrap">
  <div class="filter-group"><span class="filter-label">Surface</span>
  {_chips("surface", payload["surfaces"]["filter"], SURFACE_LABELS)}</div>
  <div class="filter-group"><span class="filter-label">Retrieval role</span>
  {_chips("role", payload["roles"], ROLE_LABELS)}</div>
  <noscript><p class="warn-box">The numbers of this page are drawn by its inline script:
  allow JavaScript for this file.</p></noscript>
</div></div>
<main class="wrap">
<div class="kpis" data-render="kpis"></div>
{missing}{_absent_note(data)}
{"".join(sections)}
<footer>
  Built by <code>lara report</code> from <code>{_e(data.warehouse.name)}</code> (public marts
  only: no free text, no user ids). Definitions: <code>shared/spec/metrics.md</code> and each
  mart's description (<code>dbt docs</code>). The same numbers are in the Parquet exports
  (<code>lara export</code>) and the MetricFlow semantic layer (<code>mf query</code>).
  Synthetic traffic and misrouted retrievals are excluded as the scope rules say; every
  interval is a 95% interval. Filters pick the marts' own roll-up rows; rates and intervals
  are recomputed from their numerators and denominators in this page.
</footer>
</main>
<script type="application/json" id="lara-data">{_json_for_script(payload)}</script>
<script>{script}</script>
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

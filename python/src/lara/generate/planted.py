"""The planted truth: what the marts must find in the generated sample.

:func:`compute_planted` counts, on the latent arrays and in the terms of
metrics.md, the rates the marts compute (``exact``: the rows staging keeps,
conflict victims removed) and population values of the latent variables
(``expected``); :func:`compute_replay_realised` the bridge statistics of the
clean replay rows. Both go into the manifest (``planted``).
"""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lara.generate.arrays import explode, midrank_percentiles, spearman
from lara.generate.config import GeneratorConfig
from lara.generate.sample import Sample
from lara.generate.schema import (
    A_DOWNLOAD,
    A_EXPORT,
    A_PLACE,
    A_SHARE,
    AGENT,
    CHAT,
    REWRITE,
    ROLES,
    STRING,
    SURFACES,
    TEMPLATE,
)
from lara.generate.sessions import Turns


def _resolve_latest(key: np.ndarray, judge: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Index of the winning label per key: human over llm, latest within a kind."""
    order = np.lexsort((at, judge, key))
    if order.size == 0:  # no labels left (a tiny sample, every label a conflict victim)
        return order
    k = key[order]
    last = np.r_[k[1:] != k[:-1], True]
    return order[last]


def _legacy_resolution(sample: Sample) -> tuple[np.ndarray, np.ndarray]:
    """Attribute legacy-session actions (no source id) as the marts would.

    Rule 2 (placement: inherit from the latest earlier ``place`` of the same
    asset in the same document) then rule 4 (temporal: the latest retrieval
    of the session at or before the action whose list contains the asset).
    Returns (action index, resolved retrieval index or -1).
    """
    A, R = sample.actions.A, sample.turns.R
    la = np.flatnonzero(A["legacy"] & (A["asset"] >= 0))
    if la.size == 0:
        return la, la
    lr = np.flatnonzero(R["legacy"] & (R["n_list"] > 0))
    ri, rank = explode(R["n_list"][lr])
    rr = lr[ri]
    ex = pd.DataFrame(
        {
            "sess": R["sess"][rr],
            "asset": sample.turns.asset_at(rr, rank),
            "ts": R["ts"][rr],
            "ret": rr,
        }
    ).sort_values("ts", kind="stable")
    act = pd.DataFrame(
        {
            "a": la,
            "sess": A["sess"][la],
            "asset": A["asset"][la],
            "ts": A["ts"][la],
            "doc": A["doc"][la],
            "place": A["atype"][la] == A_PLACE,
        }
    ).sort_values("ts", kind="stable")
    tm = pd.merge_asof(
        act, ex, on="ts", by=["sess", "asset"], direction="backward", allow_exact_matches=True
    )
    tm["ret"] = tm["ret"].fillna(-1).astype(np.int64)
    tm = tm.sort_values(["ts", "a"], kind="stable").reset_index(drop=True)
    # places: every legacy place inherits from the first place of (doc, asset)
    pl = tm[tm["place"] & (tm["doc"] >= 0)].copy()
    pl["res"] = pl.groupby(["doc", "asset"])["ret"].transform("first")
    res = pd.Series(tm["ret"].to_numpy(), index=tm["a"].to_numpy())
    res.loc[pl["a"].to_numpy()] = pl["res"].to_numpy()
    other = tm[~tm["place"] & (tm["doc"] >= 0)]
    if len(other) and len(pl):
        m = pd.merge_asof(
            other[["a", "ts", "doc", "asset"]],
            pl[["ts", "doc", "asset", "res"]],
            on="ts",
            by=["doc", "asset"],
            direction="backward",
            allow_exact_matches=False,
        )
        hit = m["res"].notna().to_numpy()
        res.loc[m["a"].to_numpy()[hit]] = m["res"].to_numpy()[hit].astype(np.int64)
    return res.index.to_numpy(), res.to_numpy().astype(np.int64)


def compute_planted(sample: Sample, victims: dict[str, np.ndarray]) -> dict[str, Any]:
    """Planted truth in the terms of metrics.md (non-synthetic traffic only).

    Everything under ``exact`` is computed on the rows the staging layer keeps
    (conflict victims removed) and the marts must reproduce it exactly:
    prompt / session counts per surface, prompts per assistant / chat session,
    trigger rate per surface, the labelled Tier 0 rates (labels resolved with
    human-over-llm and latest-within-kind), misrouted and in-scope retrieval
    counts, empty-result rate, retrievals per role, agent consumption (ACR)
    per role, goal rate, cross-session retrieval-driven outcomes, synthetic
    counts.  ``expected`` holds population values of the latent variables
    (tests should use tolerances).
    """
    turns, pop = sample.turns, sample.population
    P, R, A = turns.P, turns.R, sample.actions.A
    vp = np.zeros(turns.nP, bool)
    vp[sample.tables["prompts"].order[victims.get("prompts", np.zeros(0, np.int64))]] = True
    vr = np.zeros(turns.nR, bool)
    vr[sample.tables["retrievals"].order[victims.get("retrievals", np.zeros(0, np.int64))]] = True
    keep_p = ~P["syn"] & ~vp
    keep_r = ~R["syn"] & ~vr
    n_ret_clean = np.bincount(R["prompt"][keep_r], minlength=turns.nP)
    has_ret = n_ret_clean > 0

    def rate(num: int, den: int) -> dict[str, Any]:
        return {
            "numerator": int(num),
            "denominator": int(den),
            "rate": (num / den) if den else None,
        }

    surf_p = P["surface"]
    per_surface = {}
    trig = {}
    for si, s in enumerate(SURFACES):
        m = keep_p & (surf_p == si)
        per_surface[s] = int(m.sum())
        trig[s] = rate((m & has_ret).sum(), m.sum())
    am = keep_p & (surf_p != TEMPLATE)
    trig["assistant"] = rate((am & has_ret).sum(), am.sum())
    trig["overall"] = rate((keep_p & has_ret).sum(), keep_p.sum())
    # sessions
    sess_prompts = np.bincount(P["sess"][keep_p], minlength=pop.S)
    sess_surf = pop.surface
    assist_s = (sess_prompts > 0) & (sess_surf != TEMPLATE)
    chat_s = (sess_prompts > 0) & (sess_surf == CHAT)

    # prompt labels (after removal of conflict victims)
    pl = sample.prompt_labels.latent
    keep_l = np.ones(pl["p"].size, bool)
    keep_l[victims.get("prompt_labels", np.zeros(0, np.int64))] = False
    win = _resolve_latest(pl["p"][keep_l], pl["judge"][keep_l], pl["at"][keep_l])
    lp = pl["p"][keep_l][win]
    l_int = pl["has_int"][keep_l][win]
    l_cnt = pl["count"][keep_l][win]
    ok = keep_p[lp]
    lp, l_int, l_cnt = lp[ok], l_int[ok], l_cnt[ok]
    l_ret = has_ret[lp]
    no_intent = np.zeros(turns.nP, bool)
    no_intent[lp[~l_int]] = True
    tier0 = {
        "labelled_prompts": int(lp.size),
        "misroute": rate((l_ret & ~l_int).sum(), l_ret.sum()),
        "missed_retrieval": rate((l_int & ~l_ret).sum(), l_int.sum()),
        "multi_intent": rate((l_cnt >= 2).sum(), lp.size),
    }
    # scope of Tiers 1-3
    misrouted = keep_r & no_intent[R["prompt"]]
    scope = keep_r & ~misrouted
    role = np.where(R["legacy"], -1, R["role"])
    role_names = {i: n for i, n in enumerate(ROLES)} | {-1: "unknown"}

    # ACR: non-legacy via source id; legacy as the marts resolve them
    acr = R["consumed"] & ~R["legacy"]
    a_idx, a_res = _legacy_resolution(sample)
    if a_idx.size:
        agent = (A["actor"][a_idx] == AGENT) & (a_res >= 0)
        same = agent & (A["prompt"][a_idx] == R["prompt"][np.maximum(a_res, 0)])
        acr = acr.copy()
        acr[a_res[same]] = True

    def per_role(flag: np.ndarray | None) -> dict[str, Any]:
        out = {}
        for code, name in role_names.items():
            m = scope & (role == code)
            if flag is None:
                out[name] = int(m.sum())
            else:
                out[name] = rate((m & flag).sum(), m.sum())
        return out

    acr_roles = per_role(acr)
    acr_roles["overall"] = rate((scope & acr).sum(), scope.sum())
    per_surface_empty = {
        s: rate(
            (scope & R["empty"] & (R["surface"] == si)).sum(), (scope & (R["surface"] == si)).sum()
        )
        for si, s in enumerate(SURFACES)
    }

    # cross-session retrieval-driven outcomes (document rule)
    placed_by = (A["atype"] == A_PLACE) & (A["source"] >= 0)
    pd_doc = A["doc"][placed_by]
    pd_ret = A["source"][placed_by]
    good_place = scope[pd_ret]
    pairs = np.unique(pd_doc[good_place] * np.int64(turns.nR + 1) + pd_ret[good_place])
    credit_docs, credits = np.unique(pairs // (turns.nR + 1), return_counts=True)
    n_credit = np.zeros(pop.S, np.int64)
    n_credit[credit_docs] = credits
    cross = (A["sess"] >= pop.S) & np.isin(A["atype"], [A_EXPORT, A_SHARE, A_DOWNLOAD])
    cross_doc = A["doc"][cross]
    cross_events = int((n_credit[cross_doc] > 0).sum())
    cross_attr = int(n_credit[cross_doc].sum())

    # goal labels
    gl = sample.goal_labels.latent
    keep_g = np.ones(gl["p"].size, bool)
    keep_g[victims.get("goal_labels", np.zeros(0, np.int64))] = False
    gw = _resolve_latest(gl["p"][keep_g], gl["judge"][keep_g], gl["at"][keep_g])
    gp = gl["p"][keep_g][gw]
    gv = gl["goal"][keep_g][gw]
    in_scope_turn = np.bincount(R["prompt"][scope], minlength=turns.nP) > 0
    gok = keep_p[gp] & in_scope_turn[gp]

    syn_p = P["syn"]
    exact = {
        "prompts_per_surface": per_surface,
        "sessions": {
            "assistant_sessions": int(assist_s.sum()),
            "chat_sessions": int(chat_s.sum()),
            "template_search_sessions": int(((sess_prompts > 0) & (sess_surf == TEMPLATE)).sum()),
            "prompts_per_assistant_session": rate(sess_prompts[assist_s].sum(), assist_s.sum()),
            "prompts_per_chat_session": rate(sess_prompts[chat_s].sum(), chat_s.sum()),
        },
        "trigger_rate": trig,
        "tier0_labelled": tier0,
        "retrievals": {
            "non_synthetic": int(keep_r.sum()),
            "misrouted_labelled": int(misrouted.sum()),
            "in_scope": int(scope.sum()),
        },
        "empty_result_rate": rate((scope & R["empty"]).sum(), scope.sum()),
        "empty_result_rate_per_surface": per_surface_empty,
        "retrievals_per_role": per_role(None),
        "agent_consumption_per_role": acr_roles,
        "goal_rate": rate((gv & gok).sum(), gok.sum()),
        "cross_session_outcomes": {
            "events": cross_events,
            "attributions": cross_attr,
            "later_sessions": int(sample.actions.n_cross_sessions),
        },
        "synthetic": {
            "prompts": int(syn_p.sum()),
            "retrievals": int(R["syn"].sum()),
            "actions": int(A["syn"].sum()),
            "sessions": int(pop.syn.sum()),
        },
    }
    pa_ = ~P["syn"] & (P["surface"] != TEMPLATE)
    pr_ = ~R["syn"]
    expected = {
        "note": "population values of latent variables (all non-synthetic prompts), not "
        "what the labelled sample shows: compare with tolerances",
        "intent_rate_assistant": float(P["has_int"][pa_].mean()) if pa_.any() else None,
        "missed_rate_population": float(P["missed"][pa_ & P["has_int"]].mean())
        if (pa_ & P["has_int"]).any()
        else None,
        "misroute_rate_population": float(P["misroute"][pa_ & (P["n_ret"] > 0)].mean())
        if (pa_ & (P["n_ret"] > 0)).any()
        else None,
        "multi_intent_rate_population": float((P["count"][pa_] >= 2).mean()) if pa_.any() else None,
        "legacy_share_retrievals": float(R["legacy"][pr_].mean()) if pr_.any() else None,
        "good_share_per_role": {
            ROLES[i]: float(R["good"][pr_ & (R["role"] == i)].mean())
            for i in range(len(ROLES))
            if (pr_ & (R["role"] == i)).any()
        },
        "naive_rewrite_rate_latent": _latent_rewritten(turns),
    }
    return {
        "scope": "non-synthetic traffic, rows staging keeps (conflict victims removed); "
        "misrouted = retrievals of prompts whose resolved prompt label says no intent",
        "exact": exact,
        "expected": expected,
        "assumptions": [
            "labels: human wins over llm, latest wins within a kind",
            "in-scope retrievals: non-synthetic and not misrouted (labelled no-intent "
            "prompt); empty-result rate, roles, ACR, goal rate and cross-session "
            "outcomes use them",
            "ACR: agent action attributed by any rule (legacy sessions: placement then "
            "temporal) in the retrieval's prompt_id on an asset of its returned list",
            "document rule credits every in-scope retrieval that a place action resolved "
            "to in that document before the event; cross-session = event session differs",
            "goal rate: resolved goal labels of prompts with >= 1 in-scope retrieval",
            "prompts per assistant session: non-synthetic prompts / sessions with >= 1 "
            "chat or editor_assistant prompt",
        ],
        "exactness": "'exact' values and replay.realised must be reproduced exactly by "
        "the marts; 'expected' and replay.parameters are targets (use tolerances)",
    }


def _latent_rewritten(turns: Turns) -> dict[str, float | None]:
    """Naive rewrite rate per surface from the latent prompt kinds (non-synthetic)."""
    P = turns.P
    nxt = np.full(turns.nP, -1, np.int64)
    order = np.lexsort((P["j"], P["sess"]))
    same = P["sess"][order][1:] == P["sess"][order][:-1]
    nxt[order[:-1][same]] = order[1:][same]
    rewritten = (nxt >= 0) & (P["kind"][np.maximum(nxt, 0)] == REWRITE)
    out: dict[str, float | None] = {}
    for si, s in enumerate(SURFACES):
        m = ~P["syn"] & (P["surface"] == si)
        out[s] = float(rewritten[m].mean()) if m.any() else None
    return out


def compute_replay_realised(
    tables: dict[str, pa.Table], cfg: GeneratorConfig, victims: dict[str, np.ndarray]
) -> dict[str, Any]:
    """Spearman(CTU, SRU / proxy), bridge shares and OER on the clean replay rows.

    Exact (the bridge-evidence marts must reproduce them, bootstrap intervals
    aside): computed with the metrics.md definitions (alpha = beta = gamma =
    1, failed replays F1 0, recall 0, turns = replay_turn_cap).
    """

    def clean(t: str) -> pa.Table:
        tbl = tables[t]
        v = victims.get(t)
        if v is None or v.size == 0:
            return tbl
        keep = np.ones(tbl.num_rows, bool)
        keep[v] = False
        return tbl.filter(pa.array(keep))

    docs = clean("replay_documents")
    queries = clean("replay_queries")
    ents = tables["document_entities"]
    d = {
        c: docs[c].to_numpy(zero_copy_only=False)
        for c in docs.column_names
        if docs.schema.field(c).type != STRING  # numbers only (strings: object arrays)
    }
    # enums are normalised by staging (trim + lower-case): " Ok " is ok
    status = pc.utf8_lower(pc.utf8_trim_whitespace(docs["counterfactual_status"]))
    failed = status.to_numpy(zero_copy_only=False) != "ok"
    cap = cfg.replay_turn_cap
    f1c = np.where(failed, 0.0, d["answer_f1_counterfactual"].astype(float))
    rc = np.where(failed, 0.0, d["next_recall_counterfactual"].astype(float))
    tc = np.where(failed, cap, d["turns_counterfactual"].astype(float))
    ctu = (
        (d["answer_f1_original"] - f1c)
        + (d["next_recall_original"] - rc)
        - (d["turns_original"] - tc)
    )
    sru = d["reader_score_with"] - d["reader_score_without"]
    rho, pval = spearman(ctu, sru)
    proxy = docs["proxy_score"].to_numpy(zero_copy_only=False).astype(float)
    hp = ~np.isnan(proxy)
    rho_p, pval_p = spearman(ctu[hp], proxy[hp])
    p_sru, p_ctu = midrank_percentiles(sru), midrank_percentiles(ctu)
    bridge = float(np.mean((p_sru < 0.5) & (p_ctu > 0.5))) if sru.size else None
    pp_sru, pp_ctu = midrank_percentiles(proxy[hp]), midrank_percentiles(ctu[hp])
    bridge_p = float(np.mean((pp_sru < 0.5) & (pp_ctu > 0.5))) if hp.any() else None
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.register("docs", docs)
    con.register("queries", queries)
    con.register("ents", ents)
    row = con.execute(
        """
        with e as (
            select distinct doc_id, lower(trim(entity)) as entity from ents
        ), units as (
            select d.trajectory_id, d.step_index, e.entity,
                   bool_and(d.is_relevant) as discriminative
            from docs d join e using (doc_id)
            group by 1, 2, 3
        ), scored as (
            select u.*, contains(lower(q.query_text), u.entity) as appears
            from units u join queries q
              on q.trajectory_id = u.trajectory_id and q.step_index = u.step_index + 1
        )
        select
            count(*) filter (where discriminative),
            count(*) filter (where discriminative and appears),
            count(*) filter (where not discriminative),
            count(*) filter (where not discriminative and appears)
        from scored
        """
    ).fetchone()
    con.close()
    nd, ad, nn, an = (int(x or 0) for x in row)
    rate_d = ad / nd if nd else None
    rate_n = an / nn if nn else None
    oer = rate_d / rate_n if rate_d is not None and rate_n else None
    return {
        "n_documents": int(sru.size),
        "n_trajectories": int(pc.count_distinct(docs["trajectory_id"], mode="all").as_py()),
        "failed_replays": int(failed.sum()),
        "spearman_ctu_sru": rho,
        "spearman_ctu_sru_pvalue": pval,
        "n_with_proxy": int(hp.sum()),
        "spearman_ctu_proxy": rho_p,
        "spearman_ctu_proxy_pvalue": pval_p,
        "bridge_cell_share_reader": bridge,
        "bridge_cell_share_proxy": bridge_p,
        "oer": {
            "discriminative_units": nd,
            "discriminative_appear": ad,
            "non_discriminative_units": nn,
            "non_discriminative_appear": an,
            "rate_discriminative": rate_d,
            "rate_non_discriminative": rate_n,
            "ratio": oer,
        },
    }

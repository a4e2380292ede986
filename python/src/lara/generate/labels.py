"""The label tables: relevance, prompt and goal labels, judged days after the events.

Labels are drawn on non-synthetic traffic: a share of the non-empty
retrievals is graded on its top ``relevance_k`` (by an llm batch, some by
humans, with double judgements and re-judgements), a stratified sample of the
assistant prompts gets intent labels, a share of the prompts with a retrieval
goal labels. Judge codes: 0 llm, 1 human (``schema.JUDGES``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from lara.generate.arrays import (
    DAY_US,
    MS,
    US,
    enum_array,
    explode,
    pick,
    round_ms,
    stream,
    ts_array,
)
from lara.generate.config import Clock, GeneratorConfig
from lara.generate.output import GeneratedTable, IdFormatter, tz_choice
from lara.generate.schema import BOOLEAN, JUDGES, MEMORY_SCHEMAS, TEMPLATE
from lara.generate.sessions import Turns
from lara.generate.vocabulary import asset_strings


@dataclass
class LabelBatch:
    """A label table with the latent values of its rows (row order) and, per subject
    (retrieval or prompt index), whether it has a label row."""

    table: GeneratedTable
    latent: dict[str, np.ndarray]
    labelled: np.ndarray


def _batch(
    name: str,
    columns: dict[str, pa.Array],
    latent: dict[str, np.ndarray],
    subject: str,
    subjects: int,
    clock: Clock,
    rng: np.random.Generator,
) -> LabelBatch:
    """Label table ``name``: ``columns`` plus judge and judged_at from ``latent``,
    partitioned by the day of judged_at; ``latent[subject]`` is the label's subject."""
    judged = {"judge": enum_array(JUDGES, latent["judge"]), "judged_at": ts_array(latent["at"])}
    table = pa.table(columns | judged, schema=MEMORY_SCHEMAS[name])
    labelled = np.zeros(subjects, bool)
    labelled[latent[subject]] = True
    rows = latent[subject].size
    return LabelBatch(
        GeneratedTable(table, clock.day_of(latent["at"]), tz_choice(rng, rows)), latent, labelled
    )


def relevance_labels(
    cfg: GeneratorConfig, clock: Clock, turns: Turns, ids: IdFormatter
) -> LabelBatch:
    """Graded (retrieval, asset) pairs; latent keys r, asset, grade, judge, at."""
    rng = stream(cfg.seed, "relevance_labels")
    R = turns.R
    elig = np.flatnonzero(~R["syn"] & (R["n_list"] > 0))
    lab = elig[rng.random(elig.size) < cfg.relevance_label_share]
    K = cfg.relevance_k
    depth = np.minimum(R["n_list"][lab], K)
    li, rank = explode(depth)
    r = lab[li]
    keep = (rng.random(r.size) < cfg.relevance_coverage) & (rank != R["dupk2"][r])
    r, rank, li = r[keep], rank[keep], li[keep]
    good = R["good"][r]
    p_rel = np.where(good, np.maximum(0.15, 0.85 - 0.04 * rank), 0.12)
    rel = rng.random(r.size) < p_rel
    gcum = np.where(good[:, None], [[0.3, 0.7]], [[0.6, 0.9]])
    grade_if_rel = 1 + (rng.random(r.size)[:, None] > gcum).sum(1)
    grade = np.where(rel, grade_if_rel, 0)
    asset = turns.asset_at(r, rank)
    # an unreturned relevant asset
    extra = lab[rng.random(lab.size) < cfg.unreturned_relevant_prob]
    e_rank = R["n_list"][extra] + rng.integers(0, 10, extra.size)
    r = np.concatenate([r, extra])
    asset = np.concatenate([asset, turns.asset_at(extra, e_rank)])
    grade = np.concatenate([grade, rng.integers(2, 4, extra.size)])
    # judges: one batch per retrieval (human for some), then extra judgements
    batch_human = rng.random(turns.nR) < cfg.human_judge_share
    batch_at = R["ts"] + round_ms(rng.uniform(1, 5, turns.nR) * DAY_US)
    judge = batch_human[r].astype(np.int8)
    at = batch_at[r]
    m = r.size
    dbl = rng.random(m) < cfg.double_judge_prob
    d_grade = np.clip(grade + np.where(rng.random(m) < 0.5, rng.choice([-1, 1], m), 0), 0, 3)
    rej = rng.random(m) < cfg.rejudge_prob
    rj_grade = np.clip(grade + np.where(rng.random(m) < 0.4, rng.choice([-1, 1], m), 0), 0, 3)
    rr = np.concatenate([r, r[dbl], r[rej]])
    aa = np.concatenate([asset, asset[dbl], asset[rej]])
    gg = np.concatenate([grade, d_grade[dbl], rj_grade[rej]])
    jj = np.concatenate([judge, 1 - judge[dbl], judge[rej]])
    tt = np.concatenate(
        [
            at,
            at[dbl] + round_ms(rng.uniform(-12, 48, int(dbl.sum())) * 3600 * US) + MS,
            at[rej] + round_ms(rng.uniform(1, 72, int(rej.sum())) * 3600 * US),
        ]
    )
    order = np.lexsort((aa, rr, tt))
    rr, aa, gg, jj, tt = rr[order], aa[order], gg[order], jj[order], tt[order]
    latent = dict(r=rr, asset=aa, grade=gg, judge=jj, at=tt)
    columns = {
        "retrieval_id": ids.retrievals(rr),
        "asset_id": asset_strings(aa),
        "grade": pa.array(gg.astype(np.int64)),
    }
    return _batch("relevance_labels", columns, latent, "r", turns.nR, clock, rng)


def prompt_labels(cfg: GeneratorConfig, clock: Clock, turns: Turns, ids: IdFormatter) -> LabelBatch:
    """Intent labels of sampled assistant prompts; latent keys p, has_int, count, judge, at."""
    rng = stream(cfg.seed, "prompt_labels")
    P = turns.P
    assist = (P["surface"] != TEMPLATE) & ~P["syn"]
    n_target = min(cfg.prompt_label_max, round(cfg.prompt_label_frac * int(assist.sum())))
    strat = assist & (P["has_int"] | (P["n_ret"] > 0))
    a = np.flatnonzero(strat)
    b = np.flatnonzero(assist & ~strat)
    na = min(a.size, round(n_target * cfg.prompt_label_intent_share))
    nb = min(b.size, n_target - na)
    lab = np.sort(np.concatenate([pick(rng, a, na), pick(rng, b, nb)]))
    n = lab.size
    true_int = P["has_int"][lab]
    true_cnt = P["count"][lab]
    at = P["ts"][lab] + round_ms(rng.uniform(2, 10, n) * DAY_US)
    # llm label (noisy)
    err = rng.random(n) < cfg.prompt_label_llm_error
    llm_int = np.where(err, ~true_int, true_int)
    cnt_err = rng.random(n) < 0.1
    llm_cnt = np.where(
        llm_int,
        np.where(true_int, np.maximum(1, true_cnt - cnt_err.astype(int)), 1),
        0,
    )
    hum = rng.random(n) < cfg.prompt_label_human_prob
    hum_at = at + round_ms(rng.uniform(1, 96, n) * 3600 * US)
    rej = rng.random(n) < 0.05
    rej_at = at + round_ms(rng.uniform(1, 48, n) * 3600 * US) + MS
    pp = np.concatenate([lab, lab[hum], lab[rej]])
    ii = np.concatenate([llm_int, true_int[hum], true_int[rej]])
    cc = np.concatenate([llm_cnt, true_cnt[hum], true_cnt[rej]])
    jj = np.concatenate([np.zeros(n, np.int8), np.ones(int(hum.sum()), np.int8),
                         np.zeros(int(rej.sum()), np.int8)])  # fmt: skip
    tt = np.concatenate([at, hum_at[hum], rej_at[rej]])
    order = np.lexsort((pp, tt))
    pp, ii, cc, jj, tt = pp[order], ii[order], cc[order], jj[order], tt[order]
    latent = dict(p=pp, has_int=ii, count=cc, judge=jj, at=tt)
    columns = {
        "prompt_id": ids.prompts(pp),
        "has_retrieval_intent": pa.array(ii, BOOLEAN),
        "retrieval_intent_count": pa.array(cc.astype(np.int64)),
    }
    return _batch("prompt_labels", columns, latent, "p", turns.nP, clock, rng)


def goal_labels(cfg: GeneratorConfig, clock: Clock, turns: Turns, ids: IdFormatter) -> LabelBatch:
    """Goal labels of prompts with a retrieval; latent keys p, goal, judge, at."""
    rng = stream(cfg.seed, "goal_labels")
    P, R = turns.P, turns.R
    elig = np.flatnonzero(~P["syn"] & (P["n_ret"] > 0))
    lab = elig[rng.random(elig.size) < cfg.goal_label_share]
    used = np.bincount(R["prompt"], weights=R["used"], minlength=turns.nP) > 0
    good = np.bincount(R["prompt"], weights=R["good"], minlength=turns.nP) > 0
    p_goal = np.where(used[lab], np.where(good[lab], 0.85, 0.5), 0.25)
    truth = rng.random(lab.size) < p_goal
    n = lab.size
    at = P["ts"][lab] + round_ms(rng.uniform(2, 10, n) * DAY_US)
    llm = np.where(rng.random(n) < 0.1, ~truth, truth)
    hum = rng.random(n) < 0.15
    pp = np.concatenate([lab, lab[hum]])
    gg = np.concatenate([llm, truth[hum]])
    jj = np.concatenate([np.zeros(n, np.int8), np.ones(int(hum.sum()), np.int8)])
    tt = np.concatenate([at, at[hum] + round_ms(rng.uniform(1, 96, int(hum.sum())) * 3600 * US)])
    order = np.lexsort((pp, tt))
    pp, gg, jj, tt = pp[order], gg[order], jj[order], tt[order]
    latent = dict(p=pp, goal=gg, judge=jj, at=tt)
    columns = {
        "prompt_id": ids.prompts(pp),
        "goal_achieved": pa.array(gg, BOOLEAN),
    }
    return _batch("goal_labels", columns, latent, "p", turns.nP, clock, rng)

"""Actions: what users and the agent do after each retrieval and prompt, and outcomes.

Every action is drawn per retrieval or prompt from the flags of
:func:`lara.generate.sessions.simulate_turns` (clicks, selections, agent
placements, substitutions, rejections, ...), then session-level outcomes
(export / share / download) and cross-session exports: a later editor
session (new session index >= S) exporting the same document.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lara.generate.arrays import DAY_US, US, compact, explode, round_ms, stream
from lara.generate.config import GeneratorConfig
from lara.generate.schema import (
    A_CLICK,
    A_DOWNLOAD,
    A_EDIT,
    A_EXPORT,
    A_FOLLOW,
    A_PLACE,
    A_REJECT,
    A_SELECT,
    A_SHARE,
    AGENT,
    USER,
)
from lara.generate.sessions import Population, Turns
from lara.generate.vocabulary import ASSET_GEN_BASE


@dataclass
class Actions:
    """Latent arrays of all actions (``A``), by action index (creation order)."""

    A: dict[str, np.ndarray]
    n_cross_sessions: int  # later editor sessions (session index S..S + n - 1)

    @property
    def nA(self) -> int:
        return self.A["sess"].size


def simulate_actions(cfg: GeneratorConfig, pop: Population, turns: Turns) -> Actions:
    """All actions of all sessions, plus the cross-session export sessions."""
    rng = stream(cfg.seed, "actions")
    R, P = turns.R, turns.P
    L_r = P["L"][R["prompt"]]
    blocks: list[dict[str, np.ndarray]] = []
    gen_counter = [0]

    def block(sel_r, actor, atype, t_lo, t_hi, asset, source, doc, ref=None, prompt=None):
        """One action per selected row; times L + U(t_lo, t_hi) seconds."""
        n = sel_r.size
        base = L_r[sel_r] if ref is None else ref
        ts = base + round_ms(rng.uniform(t_lo, t_hi, n) * US)
        blocks.append(
            dict(
                sess=R["sess"][sel_r] if prompt is None else P["sess"][prompt],
                prompt=R["prompt"][sel_r] if prompt is None else prompt,
                ts=ts,
                actor=np.full(n, actor, np.int8),
                atype=np.full(n, atype, np.int8),
                asset=asset,
                source=source,
                doc=doc,
                ret=sel_r if prompt is None else np.full(n, -1, np.int64),
            )
        )

    def gen_assets(n):
        out = ASSET_GEN_BASE + gen_counter[0] + np.arange(n, dtype=np.int64)
        gen_counter[0] += n
        return out

    none = lambda n: np.full(n, -1, np.int64)  # noqa: E731
    sess_doc = lambda r: R["sess"][r]  # noqa: E731  document = session index

    # template clicks
    cr, ci = explode(R["n_click"])
    n_l = R["n_list"][cr]
    rank = np.minimum(rng.geometric(cfg.click_rank_p, cr.size) - 1, n_l - 1)
    click_asset = turns.asset_at(cr, rank)
    block(cr, USER, A_CLICK, 12, 40, click_asset, cr, none(cr.size))
    first_click = np.full(turns.nR, -1, np.int64)
    first_click[cr[ci == 0]] = click_asset[ci == 0]
    r = np.flatnonzero(R["sel"])
    block(r, USER, A_SELECT, 45, 60, first_click[r], r, none(r.size))
    r = np.flatnonzero(R["uplace"])
    block(r, USER, A_PLACE, 62, 80, first_click[r], r, sess_doc(r))
    r = np.flatnonzero(R["uedit"])
    block(r, USER, A_EDIT, 85, 130, first_click[r], none(r.size), sess_doc(r))
    r = np.flatnonzero(R["adl"])
    block(r, USER, A_DOWNLOAD, 175, 200, first_click[r], r, none(r.size))

    # assistant: agent consumption
    cons_asset = np.full(turns.nR, -1, np.int64)
    r = np.flatnonzero(R["consumed"])
    crank = rng.integers(0, np.minimum(R["n_list"][r], 5))
    cons_asset[r] = turns.asset_at(r, crank)
    block(r, AGENT, A_PLACE, 1, 4, cons_asset[r], r, sess_doc(r))
    r = np.flatnonzero(R["agent_edit"])
    block(r, AGENT, A_EDIT, 5, 10, cons_asset[r], r, sess_doc(r))
    r = np.flatnonzero(R["subst"] | R["gen_place"])
    block(r, AGENT, A_PLACE, 1, 4, gen_assets(r.size), none(r.size), sess_doc(r))
    # displayed assets
    disp_first = np.full(turns.nR, -1, np.int64)
    disp_any = np.full(turns.nR, -1, np.int64)
    disp_any2 = np.full(turns.nR, -1, np.int64)
    di = turns.disp_idx
    if di.size:
        dn = R["disp_n"][di]
        disp_first[di] = turns.asset_at(di, turns.disp_ranks[:, 0])
        pick = rng.integers(0, dn)
        disp_any[di] = turns.asset_at(di, turns.disp_ranks[np.arange(di.size), pick])
        pick2 = rng.integers(0, dn)
        disp_any2[di] = turns.asset_at(di, turns.disp_ranks[np.arange(di.size), pick2])
    r = np.flatnonzero(R["aclick"])
    block(r, USER, A_CLICK, 12, 40, disp_any[r], r, none(r.size))
    r = np.flatnonzero(R["asel"])
    block(r, USER, A_SELECT, 45, 60, disp_any2[r], r, none(r.size))
    r = np.flatnonzero(R["aplace"])
    block(r, USER, A_PLACE, 62, 80, disp_any2[r], r, sess_doc(r))
    r = np.flatnonzero(R["uedit_ag"])
    block(r, USER, A_EDIT, 85, 130, cons_asset[r], none(r.size), sess_doc(r))
    r = np.flatnonzero(R["afollow"])
    fa = np.where(R["consumed"][r], cons_asset[r], disp_first[r])
    block(r, USER, A_FOLLOW, 135, 170, fa, r, none(r.size))
    r = np.flatnonzero(R["reject"] & R["reject_src"])
    top1 = np.where(R["n_list"][r] > 0, turns.asset_at(r, np.zeros(r.size, np.int64)), -1)
    ra = np.where(R["consumed"][r], cons_asset[r], top1)
    block(r, USER, A_REJECT, 135, 170, ra, r, none(r.size))
    r = np.flatnonzero(R["reject"] & ~R["reject_src"])
    block(r, USER, A_REJECT, 135, 170, none(r.size), none(r.size), none(r.size))

    # prompt-level (assistant prompts without retrieval)
    p = np.flatnonzero(P["gen_edit"])
    block(p, AGENT, A_EDIT, 2, 8, none(p.size), none(p.size), P["sess"][p], P["ts"][p], p)
    p = np.flatnonzero(P["doc_edit"])
    block(p, USER, A_EDIT, 85, 130, none(p.size), none(p.size), P["sess"][p], P["ts"][p], p)

    # session-level outcomes
    retr_place = R["consumed"] | R["uplace"] | R["aplace"]
    placed = np.bincount(R["sess"], weights=retr_place, minlength=pop.S) > 0
    lp = turns.last_prompt
    last_end = P["end"][lp]
    p_exp = np.where(placed, cfg.export_prob_with_placement, cfg.export_prob_without_placement)
    s = np.flatnonzero(rng.random(pop.S) < p_exp)
    otype = np.array([A_EXPORT, A_SHARE, A_DOWNLOAD])[
        np.searchsorted([0.7, 0.85], rng.random(s.size), side="right")
    ]
    ts = last_end[s] + round_ms(rng.uniform(5, 60, s.size) * US)
    blocks.append(
        dict(
            sess=s,
            prompt=lp[s],
            ts=ts,
            actor=np.full(s.size, USER, np.int8),
            atype=otype.astype(np.int8),
            asset=none(s.size),
            source=none(s.size),
            doc=s,
            ret=none(s.size),
        )
    )
    # cross-session exports (later editor session of the same user)
    cs = np.flatnonzero(
        placed & ~pop.syn & ~pop.legacy & (rng.random(pop.S) < cfg.cross_session_export_prob)
    )
    days_later = rng.integers(1, cfg.cross_session_max_days + 1, cs.size)
    ts = (
        last_end[cs]
        + days_later * DAY_US
        + round_ms(rng.uniform(-4 * 3600, 4 * 3600, cs.size) * US)
    )
    new_sess = pop.S + np.arange(cs.size, dtype=np.int64)
    otype = np.array([A_EXPORT, A_SHARE, A_DOWNLOAD])[
        np.searchsorted([0.75, 0.9], rng.random(cs.size), side="right")
    ]
    blocks.append(
        dict(
            sess=new_sess,
            prompt=none(cs.size),
            ts=ts,
            actor=np.full(cs.size, USER, np.int8),
            atype=otype.astype(np.int8),
            asset=none(cs.size),
            source=none(cs.size),
            doc=cs,
            ret=none(cs.size),
        )
    )
    pre = rng.random(cs.size) < 0.3
    blocks.append(
        dict(
            sess=new_sess[pre],
            prompt=none(int(pre.sum())),
            ts=ts[pre] - round_ms(rng.uniform(60, 600, int(pre.sum())) * US),
            actor=np.full(int(pre.sum()), USER, np.int8),
            atype=np.full(int(pre.sum()), A_EDIT, np.int8),
            asset=none(int(pre.sum())),
            source=none(int(pre.sum())),
            doc=cs[pre],
            ret=none(int(pre.sum())),
        )
    )

    A = {key: np.concatenate([b.pop(key) for b in blocks]) for key in list(blocks[0])}
    # session attributes (export sessions inherit from their origin session)
    origin = np.where(A["sess"] >= pop.S, A["doc"], A["sess"])
    A["origin"] = origin
    A["syn"] = pop.syn[origin]
    A["legacy"] = pop.legacy[origin] & (A["sess"] < pop.S)
    # legacy logs: no lineage id
    A["source"] = np.where(A["legacy"], -1, A["source"])
    return Actions(compact(A, keep64=("ts", "asset")), int(cs.size))

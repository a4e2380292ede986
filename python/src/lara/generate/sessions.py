"""Sessions, prompts and retrievals: the latent simulation every table is drawn from.

:func:`draw_population` draws the client sessions (surface, start, user,
legacy client, synthetic traffic); :func:`simulate_turns` then walks the
prompt positions of all sessions at once (vectorised over sessions): planner
routing, re-searches and corrections, the retrievals of each prompt with
their latent quality, list parameters and what users and the agent do with
them. Arrays are indexed by entity (session, prompt or retrieval index, in
creation order); the tables put rows in time order (:mod:`lara.generate.logs`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lara.generate.arrays import DAY_US, MS, US, compact, explode, round_ms, stream
from lara.generate.config import Clock, GeneratorConfig
from lara.generate.schema import (
    CHAT,
    EDITOR,
    FIND,
    FOLLOW,
    NEW,
    OPERATE,
    REWRITE,
    TEMPLATE,
)
from lara.generate.vocabulary import ASSETS_PER_TOPIC, MODIFIERS, N_TOPICS, STRIDES


@dataclass
class Population:
    """The client sessions (index 0..S-1) and their users."""

    S: int  # sessions (cross-session export sessions come on top, see actions)
    syn: np.ndarray  # synthetic session
    surface: np.ndarray  # CHAT, EDITOR or TEMPLATE
    n_prompts: np.ndarray
    day: np.ndarray  # start day index
    start_us: np.ndarray
    legacy: np.ndarray  # logged by the legacy client
    user: np.ndarray  # user index (bots: n_users + bot)
    n_users: int
    topic_cdf: np.ndarray  # topic popularity
    topic_perm: np.ndarray

    def draw_topic(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Topics by popularity."""
        r = np.minimum(np.searchsorted(self.topic_cdf, rng.random(n)), N_TOPICS - 1)
        return self.topic_perm[r]


@dataclass
class Turns:
    """Latent arrays of all prompts (``P``) and retrievals (``R``), by entity index."""

    P: dict[str, np.ndarray]
    R: dict[str, np.ndarray]
    last_prompt: np.ndarray  # prompt index of each session's last prompt
    disp_idx: np.ndarray  # assistant retrievals showing assets to the user
    disp_ranks: np.ndarray  # their shown ranks (first R["disp_n"] columns valid)

    @property
    def nP(self) -> int:
        return self.P["sess"].size

    @property
    def nR(self) -> int:
        return self.R["sess"].size

    def asset_at(self, r: np.ndarray, rank: np.ndarray) -> np.ndarray:
        """Catalogue code of the asset at ``rank`` of retrieval ``r``'s returned list
        (ranks past the list's end continue the same walk)."""
        R = self.R
        rank = np.where(rank == R["dupk2"][r], R["dupk1"][r], rank)
        pos = (R["start"][r] + rank * R["stride"][r]) % ASSETS_PER_TOPIC
        return R["topic"][r] * ASSETS_PER_TOPIC + pos


def draw_population(cfg: GeneratorConfig, clock: Clock) -> Population:
    """Sessions: surface, prompts per session, start time, legacy client, users."""
    rng = stream(cfg.seed, "sessions")
    n = cfg.sessions
    syn = rng.random(n) < cfg.synthetic_share
    p_tmpl = cfg.template_to_assistant_ratio / (cfg.template_to_assistant_ratio + 1.0)
    u = rng.random(n)
    chat = rng.random(n) < cfg.chat_share_of_assistant
    surface = np.where(u < p_tmpl, TEMPLATE, np.where(chat, CHAT, EDITOR)).astype(np.int8)
    means = np.array([cfg.prompts_mean_chat, cfg.prompts_mean_editor, cfg.prompts_mean_template])
    n_prompts = 1 + rng.poisson(np.maximum(means[surface] - 1.0, 0.0))
    day = rng.integers(0, cfg.days, n)
    # diurnal: 70% around 14:00 UTC, 30% uniform
    tod = np.where(
        rng.random(n) < 0.7,
        rng.normal(14 * 3600, 3.5 * 3600, n) % 86_400,
        rng.uniform(0, 86_400, n),
    )
    start_us = clock.base_us + day * DAY_US + round_ms(tod * US)
    w = np.exp(-np.arange(cfg.days) / max(cfg.legacy_decay_days, 1e-9))
    p_leg = np.minimum(1.0, cfg.legacy_share * cfg.days * w / w.sum())
    legacy = rng.random(n) < p_leg[day]
    n_users = max(1, round(n * cfg.users_per_session))
    wu = 1.0 / np.arange(1, n_users + 1) ** cfg.user_activity_skew
    cdf = np.cumsum(wu) / wu.sum()
    perm = rng.permutation(n_users)
    user = perm[np.minimum(np.searchsorted(cdf, rng.random(n)), n_users - 1)]
    bots = rng.integers(0, max(1, cfg.synthetic_users), n)
    user = np.where(syn, n_users + bots, user)
    # topic popularity
    wt = 1.0 / np.arange(1, N_TOPICS + 1) ** cfg.topic_skew
    topic_cdf = np.cumsum(wt) / wt.sum()
    topic_perm = rng.permutation(N_TOPICS)
    return Population(
        S=n,
        syn=syn,
        surface=surface,
        n_prompts=n_prompts,
        day=day,
        start_us=start_us,
        legacy=legacy,
        user=user,
        n_users=n_users,
        topic_cdf=topic_cdf,
        topic_perm=topic_perm,
    )


def simulate_turns(cfg: GeneratorConfig, pop: Population) -> Turns:
    """Simulate prompts position by position (vectorised over sessions)."""
    rng = stream(cfg.seed, "prompts")
    S = pop.S
    nm = len(MODIFIERS)
    research_p = np.array(cfg.research_prob)
    corr_p = np.array(cfg.correction_prob)
    follow_p = np.array(cfg.follow_up_prob)
    mixes = np.array([cfg.role_mix_chat, cfg.role_mix_editor, cfg.role_mix_template], float)
    role_cum = np.cumsum(mixes / mixes.sum(1, keepdims=True), axis=1)
    role_cum[:, -1] = 1.0 + 1e-9
    good_p = np.array(cfg.good_prob_by_role)
    lo_t, hi_t = cfg.list_len_template
    lo_a, hi_a = cfg.list_len_assistant

    cur_topic = np.zeros(S, np.int64)
    cur_m1 = np.zeros(S, np.int64)
    cur_m2 = np.zeros(S, np.int64)
    prev_has_ret = np.zeros(S, bool)
    prev_used = np.zeros(S, bool)
    prev_end = np.zeros(S, np.int64)
    last_role = np.zeros(S, np.int64)
    P_chunks: list[dict[str, np.ndarray]] = []
    R_chunks: list[dict[str, np.ndarray]] = []
    p_off = 0
    max_j = int(pop.n_prompts.max())
    for j in range(max_j):
        act = np.flatnonzero(pop.n_prompts > j)
        m = act.size
        surf = pop.surface[act]
        assist = surf != TEMPLATE
        rtype = np.zeros(m, np.int8)  # 0 none, 1 re-search, 2 correction
        if j == 0:
            kind = np.full(m, NEW, np.int8)
            ts = pop.start_us[act]
        else:
            research_ok = prev_has_ret[act] & ~prev_used[act]
            is_research = research_ok & (rng.random(m) < research_p[surf])
            is_corr = ~research_ok & (rng.random(m) < corr_p[surf])
            is_follow = ~is_research & ~is_corr & (rng.random(m) < follow_p[surf])
            kind = np.where(
                is_research | is_corr, REWRITE, np.where(is_follow, FOLLOW, NEW)
            ).astype(np.int8)
            rtype = np.where(is_research, 1, np.where(is_corr, 2, 0)).astype(np.int8)
            gap = np.where(
                is_research,
                rng.uniform(5, 150, m),
                10 + np.minimum(rng.exponential(90.0, m), 3600.0),
            )
            ts = prev_end[act] + round_ms(gap * US)
        # topic and modifiers
        is_new = kind == NEW
        topic = np.where(is_new, pop.draw_topic(rng, m), cur_topic[act])
        new_m1 = rng.integers(0, nm, m)
        new_m2 = (new_m1 + 1 + rng.integers(0, nm - 1, m)) % nm
        m1 = np.where(is_new, new_m1, cur_m1[act])
        alt_m2 = (m1 + 1 + rng.integers(0, nm - 1, m)) % nm
        m2 = np.where(is_new, new_m2, np.where(rtype == 1, alt_m2, cur_m2[act]))
        m3 = rng.integers(0, nm, m)
        # routing
        p_int = np.where(surf == CHAT, cfg.intent_rate_chat, cfg.intent_rate_editor)
        draws = assist & (rtype == 0)
        has_int = (
            np.where(rtype == 1, True, draws & (rng.random(m) < p_int)) | ~assist
        )  # template searches always have intent
        multi = assist & has_int & (rtype == 0) & (rng.random(m) < cfg.multi_intent_rate)
        count = np.where(has_int, 1 + multi * (1 + (rng.random(m) < 0.2)), 0).astype(np.int64)
        missed = assist & has_int & (rtype == 0) & (rng.random(m) < cfg.missed_rate)
        misroute = assist & ~has_int & (rng.random(m) < cfg.misroute_rate)
        n_ret = np.where(
            assist, np.where(has_int, np.where(missed, 0, count), misroute.astype(int)), 1
        ).astype(np.int64)
        # retrievals of this position
        rp, k = explode(n_ret)
        nr = rp.size
        rsess = act[rp]
        rsurf = surf[rp]
        rassist = rsurf != TEMPLATE
        r_topic = np.where(k == 0, topic[rp], (topic[rp] + 97 * k) % N_TOPICS)
        r_m1 = np.where(k == 0, m1[rp], rng.integers(0, nm, nr))
        r_m2 = np.where(k == 0, m2[rp], rng.integers(0, nm, nr))
        r_ts = ts[rp] + 800 * MS + k * 3000 * MS + round_ms(rng.uniform(0, 1500, nr) * MS)
        u_role = rng.random(nr)
        drawn_role = (u_role[:, None] > role_cum[rsurf]).sum(1)
        role = np.where(rtype[rp] == 1, last_role[rsess], drawn_role).astype(np.int64)
        empty = rng.random(nr) < cfg.empty_rate
        n_list = np.where(
            empty,
            0,
            np.where(rassist, rng.integers(lo_a, hi_a + 1, nr), rng.integers(lo_t, hi_t + 1, nr)),
        ).astype(np.int64)
        good = ~empty & (rng.random(nr) < good_p[role])
        start = np.minimum(rng.geometric(cfg.asset_start_p, nr) - 1, ASSETS_PER_TOPIC - 1)
        stride = STRIDES[rng.integers(0, STRIDES.size, nr)]
        has_dup = (n_list >= 3) & (rng.random(nr) < cfg.repeated_id_rate)
        k1 = rng.integers(0, np.maximum(n_list - 1, 1))
        k2 = k1 + 1 + rng.integers(0, np.maximum(n_list - k1 - 1, 1))
        dupk1 = np.where(has_dup, k1, -1)
        dupk2 = np.where(has_dup, np.minimum(k2, n_list - 1), -1)
        r_misroute = misroute[rp]
        nonempty = n_list > 0
        tmpl = ~rassist
        # template behaviour
        n_click = np.where(
            tmpl & nonempty,
            rng.poisson(np.where(good, cfg.click_mean_good, cfg.click_mean_bad)),
            0,
        )
        sel = (n_click > 0) & (
            rng.random(nr) < np.where(good, cfg.select_prob_good, cfg.select_prob_bad)
        )
        uplace = sel & (rng.random(nr) < cfg.place_prob)
        uedit = uplace & (rng.random(nr) < cfg.user_edit_prob)
        adl = sel & (rng.random(nr) < cfg.asset_download_prob)
        # assistant behaviour
        p_acr = np.where(
            r_misroute,
            cfg.acr_prob_misroute,
            np.where(good, cfg.acr_prob_good, cfg.acr_prob_bad),
        )
        consumed = rassist & nonempty & (rng.random(nr) < p_acr)
        agent_edit = consumed & (rng.random(nr) < cfg.agent_edit_prob)
        sub_role = (role == FIND) | (role == OPERATE)
        subst = rassist & ~consumed & sub_role & ~good & (rng.random(nr) < cfg.substitution_prob)
        gen_place = rassist & ~consumed & ~sub_role & (rng.random(nr) < cfg.generative_place_prob)
        p_disp = np.where(consumed, cfg.display_prob_consumed, cfg.display_prob_unconsumed)
        disp_n = np.where(
            rassist & nonempty & (rng.random(nr) < p_disp),
            np.minimum(rng.integers(2, 6, nr), np.minimum(n_list, 10)),
            0,
        )
        aclick = (disp_n > 0) & (rng.random(nr) < cfg.assistant_click_prob)
        asel = (disp_n > 0) & (
            rng.random(nr)
            < np.where(good, cfg.assistant_select_prob_good, cfg.assistant_select_prob_bad)
        )
        aplace = asel & (rng.random(nr) < cfg.user_place_after_select)
        afollow = rassist & (consumed | (disp_n > 0)) & (rng.random(nr) < cfg.follow_up_action_prob)
        uedit_ag = consumed & (rng.random(nr) < cfg.user_edit_agent_placed)
        reject = rassist & (
            rng.random(nr) < np.where(good, cfg.reject_prob_good, cfg.reject_prob_bad)
        )
        reject_src = reject & (rng.random(nr) < cfg.reject_with_source_share)
        used = consumed | sel | asel | afollow
        R_chunks.append(
            compact(
                dict(
                    sess=rsess,
                    prompt=p_off + rp,
                    k=k,
                    ts=r_ts,
                    surface=rsurf,
                    role=role,
                    topic=r_topic,
                    m1=r_m1,
                    m2=r_m2,
                    n_list=n_list,
                    empty=empty,
                    good=good,
                    start=start,
                    stride=stride,
                    dupk1=dupk1,
                    dupk2=dupk2,
                    misroute=r_misroute,
                    n_click=n_click,
                    sel=sel,
                    uplace=uplace,
                    uedit=uedit,
                    adl=adl,
                    consumed=consumed,
                    agent_edit=agent_edit,
                    subst=subst,
                    gen_place=gen_place,
                    disp_n=disp_n,
                    aclick=aclick,
                    asel=asel,
                    aplace=aplace,
                    afollow=afollow,
                    uedit_ag=uedit_ag,
                    reject=reject,
                    reject_src=reject_src,
                    used=used,
                )
            )
        )
        used_p = np.bincount(rp, weights=used, minlength=m) > 0
        L = np.where(n_ret > 0, ts + 800 * MS + (n_ret - 1) * 3000 * MS + 1500 * MS, ts)
        no_ret = n_ret == 0
        gen_edit = assist & no_ret & (rng.random(m) < cfg.agent_generative_edit_prob)
        doc_edit = assist & no_ret & (rng.random(m) < cfg.user_doc_edit_prob)
        end = np.where(
            no_ret,
            ts + round_ms(rng.uniform(140, 230, m) * US),
            L + round_ms(rng.uniform(230, 240, m) * US),
        )
        P_chunks.append(
            compact(
                dict(
                    sess=act,
                    j=np.full(m, j, np.int64),
                    ts=ts,
                    kind=kind,
                    rtype=rtype,
                    topic=topic,
                    m1=m1,
                    m2=m2,
                    m3=m3,
                    has_int=has_int & assist,
                    count=np.where(assist, count, 0),
                    missed=missed,
                    misroute=misroute,
                    n_ret=n_ret,
                    L=L,
                    end=end,
                    gen_edit=gen_edit,
                    doc_edit=doc_edit,
                    tmpl_choice=rng.integers(0, 1000, m),
                )
            )
        )
        # update session state
        cur_topic[act] = topic
        cur_m1[act] = m1
        cur_m2[act] = m2
        prev_has_ret[act] = n_ret > 0
        prev_used[act] = used_p
        prev_end[act] = end
        if nr:
            last_idx = np.cumsum(n_ret)[n_ret > 0] - 1
            last_role[act[n_ret > 0]] = role[last_idx]
        p_off += m

    # chunks are compacted one by one (same arrays, half the peak memory)
    P = {k: np.concatenate([c.pop(k) for c in P_chunks]) for k in list(P_chunks[0])}
    del P_chunks
    R = {k: np.concatenate([c.pop(k) for c in R_chunks]) for k in list(R_chunks[0])}
    del R_chunks
    P["surface"] = pop.surface[P["sess"]]
    P["syn"] = pop.syn[P["sess"]]
    P["legacy"] = pop.legacy[P["sess"]]
    R["syn"] = pop.syn[R["sess"]]
    R["legacy"] = pop.legacy[R["sess"]]
    # last prompt of each session (prompt index)
    last = np.full(pop.S, -1, np.int64)
    order = np.lexsort((P["j"], P["sess"]))
    last[P["sess"][order]] = order  # later j overwrite earlier ones (sorted)
    del order
    return Turns(P, R, last, *_displayed_ranks(cfg, R))


def _displayed_ranks(
    cfg: GeneratorConfig, R: dict[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Ranks shown to the user for assistant retrievals (few, agent-chosen order)."""
    rng = stream(cfg.seed, "displayed")
    idx = np.flatnonzero(R["disp_n"] > 0)
    keys = rng.random((idx.size, 10))
    keys[np.arange(10)[None, :] >= R["n_list"][idx][:, None]] = np.inf
    ranks = np.argsort(keys, axis=1, kind="stable")[:, :5]
    return idx, ranks  # first disp_n columns of ranks are valid

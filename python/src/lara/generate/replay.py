"""The replay tables: counterfactual replays of agent trajectories, their next queries
and the entities of the documents read (metrics.md, "Bridge evidence").

Documents get a Gaussian-copula draw of (CTU, SRU, proxy) with the target
Spearman correlations of the config; some replays fail; entities appear in
the next query with the config's probabilities for discriminative and
non-discriminative units ("bridge documents"). No timestamps: every row goes
to the partition of ``start_date`` (day 0). Independent of the other tables
(own random stream), so it runs beside them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lara.generate.arrays import (
    explode,
    format_ids,
    normal_cdf,
    render,
    stream,
    take_vocab,
    with_nulls,
)
from lara.generate.config import GeneratorConfig
from lara.generate.output import GeneratedTable
from lara.generate.schema import (
    BOOLEAN,
    CF_STATUSES,
    FLOAT64,
    REPLAY_TABLES,
    SCHEMAS,
    STRING,
)
from lara.generate.vocabulary import N_ENTITY_CODES, QWORDS, REPLAY_POOL, entity_names


def replay(cfg: GeneratorConfig) -> tuple[dict[str, GeneratedTable], dict[str, Any]]:
    """The three replay tables and the latent counts (manifest ``planted.replay.latent``)."""
    rng = stream(cfg.seed, "replay")
    T = cfg.replay_trajectories or max(50, cfg.sessions // 20)
    nq = max(1, int(np.ceil(T * 0.85)))
    q_of = np.concatenate([np.arange(nq), rng.integers(0, nq, T - nq)])
    q_of = q_of[rng.permutation(T)]
    M = REPLAY_POOL
    rel_pool = rng.random((nq, M)) < cfg.replay_relevant_share
    slo, shi = cfg.replay_steps
    dlo, dhi = cfg.replay_docs_per_step
    n_steps = rng.integers(slo, shi + 1, T)
    ti, step = explode(n_steps)  # (traj, step) rows
    n_docs = rng.integers(dlo, dhi + 1, ti.size)
    si, within = explode(n_docs)  # doc reads
    traj = ti[si]
    stp = step[si]
    read_no = (
        np.arange(si.size)
        - (np.cumsum(np.bincount(traj, minlength=T)) - np.bincount(traj, minlength=T))[traj]
    )
    start = rng.integers(0, M, T)
    stride = rng.integers(1, M, T)
    pos = (start[traj] + read_no * stride[traj]) % M
    q = q_of[traj]
    dockey = q * M + pos
    is_rel = rel_pool[q, pos]
    n = traj.size
    # Gaussian copula: (CTU, SRU, proxy)
    r_cs = 2 * np.sin(np.pi * cfg.replay_rho / 6)
    r_cp = 2 * np.sin(np.pi * cfg.proxy_rho / 6)
    r_sp = 2 * np.sin(np.pi * cfg.proxy_sru_rho / 6)
    C = np.array([[1, r_cs, r_cp], [r_cs, 1, r_sp], [r_cp, r_sp, 1]])
    try:
        Lc = np.linalg.cholesky(C)
    except np.linalg.LinAlgError as exc:
        raise ValueError("replay_rho, proxy_rho, proxy_sru_rho not jointly feasible") from exc
    z = rng.standard_normal((n, 3)) @ Lc.T
    u = normal_cdf(z)
    u_ctu, u_sru, u_px = u[:, 0], u[:, 1], u[:, 2]
    without = rng.uniform(0.3, 0.45, n)
    with_ = without + (-0.3 + 0.85 * u_sru**1.3)
    # CTU = dA + dR - (To - Tc): integer turn change levels + continuous part
    th = np.array([0.0, 0.08, 0.78, 0.93, 1.0])
    lvl = np.clip(np.searchsorted(th, u_ctu, side="right") - 1, 0, 3)
    extra = lvl - 1  # -1, 0, 1, 2 extra turns without the document
    frac = (u_ctu - th[lvl]) / (th[lvl + 1] - th[lvl])
    s = -0.5 + frac
    w = rng.uniform(0.3, 0.7, n)
    f1o_t = rng.uniform(0.35, 0.65, T)
    ro_s = rng.uniform(0.35, 0.65, ti.size)
    f1o = f1o_t[traj]
    ro = ro_s[si]
    f1c = f1o - s * w
    rc = ro - s * (1 - w)
    to = n_steps[traj]
    tc = to + extra
    fail = rng.random(n) < cfg.replay_failure_share
    status = np.where(fail, np.where(rng.random(n) < 0.7, 1, 2), 0)
    garbage = fail & (rng.random(n) < 0.5)
    nulled = fail & ~garbage
    f1c = np.where(garbage, rng.uniform(0, 1, n), f1c)
    rc = np.where(garbage, rng.uniform(0, 1, n), rc)
    tc = np.where(garbage, rng.integers(1, 50, n), tc)
    proxy = np.round(u_px, 6)
    proxy_null = rng.random(n) < cfg.proxy_null_share

    def f(x, mask=None):
        a = pa.array(np.round(x, 6), FLOAT64)
        return a if mask is None else with_nulls(a, mask)

    traj_ids = format_ids("t_", np.arange(T), 0x7A1)
    q_ids = format_ids("q_", np.arange(nq), 0x0B5)
    doc_ids_all = pc.binary_join_element_wise(
        "d", pc.cast(pa.array(q), STRING), pc.cast(pa.array(pos), STRING), "_"
    )
    tables: dict[str, pa.Table] = {}
    tables["replay_documents"] = pa.table(
        {
            "trajectory_id": traj_ids.take(pa.array(traj)),
            "question_id": q_ids.take(pa.array(q)),
            "step_index": pa.array(stp.astype(np.int64)),
            "doc_id": doc_ids_all,
            "is_relevant": pa.array(is_rel, BOOLEAN),
            "reader_score_with": f(with_),
            "reader_score_without": f(without),
            "proxy_score": f(proxy, proxy_null),
            "answer_f1_original": f(f1o),
            "answer_f1_counterfactual": f(f1c, nulled),
            "next_recall_original": f(ro),
            "next_recall_counterfactual": f(rc, nulled),
            "turns_original": pa.array(to.astype(np.int64)),
            "turns_counterfactual": with_nulls(pa.array(tc.astype(np.int64)), nulled),
            "counterfactual_status": take_vocab(CF_STATUSES, status),
        },
        schema=SCHEMAS["replay_documents"],
    )
    # entities: per question shared entities, per document unique ones
    udoc, inv = np.unique(dockey, return_inverse=True)
    nd = udoc.size
    dq = udoc // M
    s_lo, s_hi = cfg.replay_shared_entities
    u_lo, u_hi = cfg.replay_unique_entities
    n_shared = rng.integers(s_lo, s_hi + 1, nq)
    half = N_ENTITY_CODES // 2
    q_base = rng.integers(0, half, nq)
    q_stride = 1 + 2 * rng.integers(0, 1000, nq)
    member = (rng.random((nd, s_hi)) < cfg.replay_shared_entity_doc_prob) & (
        np.arange(s_hi)[None, :] < n_shared[dq][:, None]
    )
    md, mk = np.nonzero(member)
    sh_code = (q_base[dq[md]] + mk * q_stride[dq[md]]) % half
    n_uni = rng.integers(u_lo, u_hi + 1, nd)
    ud, uk = explode(n_uni)
    d_base = rng.integers(0, half - 10, nd)
    un_code = half + d_base[ud] + uk
    e_doc = np.concatenate([md, ud])
    e_code = np.concatenate([sh_code, un_code])
    eo = np.lexsort((e_code, e_doc))
    e_doc, e_code = e_doc[eo], e_code[eo]
    names = entity_names(e_code)
    variant = np.searchsorted([0.8, 0.88, 0.94], rng.random(e_code.size), side="right")
    disp = render(
        ("{n}", "{lo}", "{up}", "  {n} "),
        variant,
        {"n": names, "lo": pc.utf8_lower(names), "up": pc.utf8_upper(names)},
    )
    ud_q = udoc // M
    ud_pos = udoc % M
    udoc_ids = pc.binary_join_element_wise(
        "d", pc.cast(pa.array(ud_q), STRING), pc.cast(pa.array(ud_pos), STRING), "_"
    )
    tables["document_entities"] = pa.table(
        {"doc_id": udoc_ids.take(pa.array(e_doc)), "entity": disp},
        schema=SCHEMAS["document_entities"],
    )
    # OER units: distinct (traj, step, entity) for steps with a next query
    e_cnt = np.bincount(e_doc, minlength=nd)
    e_off = np.cumsum(e_cnt) - e_cnt
    has_next = stp < n_steps[traj] - 1
    rd = np.flatnonzero(has_next)
    xi, xk = explode(e_cnt[inv[rd]])
    read = rd[xi]
    code = e_code[e_off[inv[read]] + xk]
    ts_key = (traj[read] * 16 + stp[read]).astype(np.int64)
    ukey = ts_key * N_ENTITY_CODES + code
    uk_unique, u_inv = np.unique(ukey, return_inverse=True)
    nonrel = np.bincount(u_inv, weights=~is_rel[read], minlength=uk_unique.size)
    disc = nonrel == 0
    appear = rng.random(uk_unique.size) < np.where(
        disc, cfg.oer_p_discriminative, cfg.oer_p_non_discriminative
    )
    u_ts = uk_unique // N_ENTITY_CODES
    u_code = uk_unique % N_ENTITY_CODES
    # queries: step 0 = question; step t+1 = two question words + entities from t
    qw = rng.integers(0, len(QWORDS), (nq, 6))
    n_rows = ti.size
    key_rows = (ti * 16 + step).astype(np.int64)
    qwords = {f"w{i}": take_vocab(QWORDS, qw[q_of[ti], i]) for i in range(6)}
    base_q = render(
        ("{w0} {w1} {w2} {w3} {w4} {w5}", "{w0} {w4} {w5}"),
        (step > 0).astype(np.int64),
        qwords,
    )
    app_key = u_ts[appear] + 1  # the (traj, step+1) query row they go into
    app_code = u_code[appear]
    app_lower = rng.random(app_code.size) < 0.5
    app_names = entity_names(app_code)
    app_names = pc.if_else(pa.array(app_lower), pc.utf8_lower(app_names), app_names)
    row_of_key = np.searchsorted(key_rows, app_key)
    cnt = np.bincount(row_of_key, minlength=n_rows)
    ordr = np.argsort(row_of_key, kind="stable")
    lists = pa.ListArray.from_arrays(
        pa.array(np.concatenate([[0], np.cumsum(cnt)]).astype(np.int32)),
        app_names.take(pa.array(ordr)),
    )
    ents = pc.binary_join(lists, ", ")
    qtext = pc.if_else(pa.array(cnt > 0), pc.binary_join_element_wise(base_q, ents, ", "), base_q)
    tables["replay_queries"] = pa.table(
        {
            "trajectory_id": traj_ids.take(pa.array(ti)),
            "step_index": pa.array(step.astype(np.int64)),
            "query_text": qtext,
        },
        schema=SCHEMAS["replay_queries"],
    )
    latent = dict(
        T=T,
        n_docs=n,
        failed=int(fail.sum()),
        discriminative_units=int(disc.sum()),
        non_discriminative_units=int((~disc).sum()),
        generated_appear_disc=int((appear & disc).sum()),
        generated_appear_non=int((appear & ~disc).sum()),
    )
    built = {
        t: GeneratedTable(
            tables[t], np.zeros(tables[t].num_rows, np.int64), np.zeros(tables[t].num_rows, np.int8)
        )
        for t in REPLAY_TABLES
    }
    return built, latent

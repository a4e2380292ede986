"""The log tables: prompts, retrievals and actions (rows in time order).

Each row comes from one latent entity of :mod:`lara.generate.sessions` or
:mod:`lara.generate.actions` (``GeneratedTable.order``): prompt texts and
queries are rendered from the topic and modifier words, asset lists from the
list parameters of the retrieval, ids from the entity index.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lara.generate.actions import Actions
from lara.generate.arrays import (
    Gathered,
    enum_array,
    explode,
    format_ids,
    render,
    stream,
    take_vocab,
    ts_array,
    with_nulls,
)
from lara.generate.config import Clock, GeneratorConfig
from lara.generate.output import GeneratedTable, IdFormatter, tz_choice
from lara.generate.schema import (
    ACTION_TYPES,
    ACTORS,
    BOOLEAN,
    FOLLOW,
    KINDS,
    MEMORY_SCHEMAS,
    ROLES,
    STRING,
    SURFACES,
    TEMPLATE,
)
from lara.generate.sessions import Population, Turns
from lara.generate.vocabulary import (
    ASSETS_PER_TOPIC,
    FORMATS,
    MODIFIERS,
    N_TOPICS,
    OCCASIONS,
    asset_dict,
    asset_strings,
)

_TEMPLATE_PROMPTS = ("{m1} {occ} {fmt} {m2}",)
_TEMPLATE_REFINE = ("{m1} {occ} {fmt} {m2} {m3}",)
_INTENT_PROMPTS = (
    "find a {m1} {occ} {fmt}",
    "show me some {m1} {occ} {fmt} templates",
    "i need a {occ} {fmt} with a {m1} look",
)
_MULTI_SUFFIX = " and also a {occ2} {fmt2}"
_RESEARCH_PROMPTS = (
    "no, try something more {m2}",
    "search again for {m2} {occ} {fmt}",
)
_CORRECTION_PROMPTS = (
    "make it more {m3}",
    "change the colour to {m3}",
    "make the title {m3} and bigger",
    "use a {m3} font instead",
)
_GENERATIVE_PROMPTS = (
    "add a {m1} background",
    "write a headline for my {occ} {fmt}",
    "resize this {fmt} for instagram",
    "remove the background",
    "make the text {m1}",
)
_FOLLOW_PROMPTS = (
    "what else would fit this {fmt}",
    "can you also add {m1} shapes",
)


def _list_codes(
    n_list: np.ndarray,
    topic: np.ndarray,
    start: np.ndarray,
    stride: np.ndarray,
    dupk1: np.ndarray,
    dupk2: np.ndarray,
    offsets: np.ndarray,
) -> np.ndarray:
    """Asset codes of all returned lists, concatenated in row order (see Turns.asset_at)."""
    total = int(offsets[-1])
    rank = np.arange(total, dtype=np.int32)
    rank -= np.repeat(offsets[:-1].astype(np.int32), n_list)
    dup = np.flatnonzero(dupk2 >= 0)
    rank[offsets[dup] + dupk2[dup]] = dupk1[dup]
    rank *= np.repeat(stride.astype(np.int32), n_list)
    rank += np.repeat(start.astype(np.int32), n_list)
    rank %= ASSETS_PER_TOPIC
    rank += np.repeat((topic * ASSETS_PER_TOPIC).astype(np.int32), n_list)
    return rank


def _in_time_order(latent: dict[str, np.ndarray]) -> tuple[np.ndarray, Gathered]:
    """Rows in time order: the entity index of each row, and the arrays gathered so."""
    order = np.argsort(latent["ts"], kind="stable")
    return order, Gathered(latent, order)


def _in_partitions(
    name: str,
    columns: dict[str, pa.Array],
    g: Gathered,
    order: np.ndarray,
    clock: Clock,
    rng: np.random.Generator,
) -> GeneratedTable:
    """Table ``name`` from its columns, partitioned by the day of its rows' ``ts``."""
    table = pa.table(columns, schema=MEMORY_SCHEMAS[name])
    return GeneratedTable(table, clock.day_of(g["ts"]), tz_choice(rng, order.size), order)


def build_prompts(
    cfg: GeneratorConfig, clock: Clock, pop: Population, turns: Turns, ids: IdFormatter
) -> GeneratedTable:
    """The prompts table: texts from the prompt kind and topic, nulls as configured."""
    rng = stream(cfg.seed, "prompts_table")
    P = turns.P
    n = turns.nP
    order, g = _in_time_order(P)
    occ = take_vocab(OCCASIONS, g["topic"] // len(FORMATS))
    fmt = take_vocab(FORMATS, g["topic"] % len(FORMATS))
    occ2 = take_vocab(OCCASIONS, ((g["topic"] + 97) % N_TOPICS) // len(FORMATS))
    fmt2 = take_vocab(FORMATS, ((g["topic"] + 97) % N_TOPICS) % len(FORMATS))
    fields = {
        "occ": occ,
        "fmt": fmt,
        "occ2": occ2,
        "fmt2": fmt2,
        "m1": take_vocab(MODIFIERS, g["m1"]),
        "m2": take_vocab(MODIFIERS, g["m2"]),
        "m3": take_vocab(MODIFIERS, g["m3"]),
    }
    # template family per prompt
    tmpl = g["surface"] == TEMPLATE
    tc = g["tmpl_choice"]
    families = [
        (_TEMPLATE_PROMPTS, tmpl & (g["rtype"] != 2)),
        (_TEMPLATE_REFINE, tmpl & (g["rtype"] == 2)),
        (_RESEARCH_PROMPTS, ~tmpl & (g["rtype"] == 1)),
        (_CORRECTION_PROMPTS, ~tmpl & (g["rtype"] == 2)),
        (
            tuple(t + _MULTI_SUFFIX for t in _INTENT_PROMPTS),
            ~tmpl & (g["rtype"] == 0) & (g["count"] >= 2),
        ),
        (_INTENT_PROMPTS, ~tmpl & (g["rtype"] == 0) & g["has_int"] & (g["count"] < 2)),
        (_FOLLOW_PROMPTS, ~tmpl & (g["rtype"] == 0) & ~g["has_int"] & (g["kind"] == FOLLOW)),
        (
            _GENERATIVE_PROMPTS,
            ~tmpl & (g["rtype"] == 0) & ~g["has_int"] & (g["kind"] != FOLLOW),
        ),
    ]
    all_t: list[str] = []
    choice = np.full(n, -1, np.int64)
    for tpls, mask in families:
        choice = np.where(mask, len(all_t) + tc % len(tpls), choice)
        all_t.extend(tpls)
    assert (choice >= 0).all()
    text = render(tuple(all_t), choice, fields)
    text = with_nulls(text, rng.random(n) < cfg.prompt_text_null_share)
    kind_null = g["legacy"] | (rng.random(n) < cfg.prompt_kind_null_share)
    kind = enum_array(KINDS, g["kind"], kind_null)
    syn_null = ~g["syn"] & (rng.random(n) < cfg.is_synthetic_null_share)
    is_syn = pa.array(g["syn"], BOOLEAN)
    is_syn = with_nulls(is_syn, syn_null)
    users = pc.binary_join_element_wise(
        take_vocab(("u_", "u_bot_"), g["syn"].astype(np.int64)),
        pc.cast(pa.array(pop.user[g["sess"]]), STRING),
        "",
    )
    columns = {
        "prompt_id": ids.prompts(order),
        "session_guid": ids.sessions(g["sess"]),
        "user_id": users,
        "surface": enum_array(SURFACES, g["surface"]),
        "ts": ts_array(g["ts"]),
        "prompt_text": text,
        "prompt_kind": kind,
        "is_synthetic": is_syn,
    }
    return _in_partitions("prompts", columns, g, order, clock, rng)


def build_retrievals(
    cfg: GeneratorConfig, clock: Clock, turns: Turns, ids: IdFormatter
) -> GeneratedTable:
    """The retrievals table: queries, roles, returned and displayed asset lists."""
    rng = stream(cfg.seed, "retrievals_table")
    R = turns.R
    n = turns.nR
    order, g = _in_time_order(R)
    # query text
    occ = take_vocab(OCCASIONS, g["topic"] // len(FORMATS))
    fmt = take_vocab(FORMATS, g["topic"] % len(FORMATS))
    ptype = turns.P["rtype"][g["prompt"]]
    fields = {
        "occ": occ,
        "fmt": fmt,
        "m1": take_vocab(MODIFIERS, g["m1"]),
        "m2": take_vocab(MODIFIERS, g["m2"]),
        "m3": take_vocab(MODIFIERS, turns.P["m3"][g["prompt"]]),
    }
    tmpl = g["surface"] == TEMPLATE
    choice = np.where(
        tmpl,
        np.where(ptype == 2, 1, 0),
        np.where((ptype == 1) & (g["k"] == 0), 3, 2),
    )
    q = render(
        (
            "{m1} {occ} {fmt} {m2}",
            "{m1} {occ} {fmt} {m2} {m3}",
            "{m1} {occ} {fmt}",
            "{m1} {occ} {fmt} {m2}",
        ),
        choice,
        fields,
    )
    q = with_nulls(q, rng.random(n) < cfg.query_text_null_share)
    role = enum_array(ROLES, g["role"], g["legacy"])
    # returned lists (sequential per-row parameters, int32 temporaries)
    n_list = g["n_list"]
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(n_list, out=offsets[1:])
    codes = _list_codes(
        n_list, g["topic"], g["start"], g["stride"], g["dupk1"], g["dupk2"], offsets
    )
    values = asset_dict(codes)  # cast to list<string> per partition when written
    del codes
    returned = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), values)
    # displayed: full list on template search, a few agent-chosen assets or null
    # (values taken from the returned lists: position = offset + rank)
    if tmpl.all():
        displayed = returned
    else:
        d_rows = np.zeros(turns.nR, np.int64)  # row of each retrieval index
        d_rows[order] = np.arange(n)
        disp_n = np.where(tmpl, n_list, g["disp_n"])
        d_off = np.zeros(n + 1, np.int64)
        np.cumsum(disp_n, out=d_off[1:])
        # source position in the returned values of each displayed item
        # (int32: list offsets are int32 anyway)
        src = np.arange(d_off[-1], dtype=np.int32)  # template rows: same positions
        src += np.repeat((offsets[:-1] - d_off[:-1]).astype(np.int32), disp_n)
        di = turns.disp_idx
        if di.size:
            ai, ak = explode(R["disp_n"][di])
            rows = d_rows[di]
            src[d_off[rows][ai] + ak] = offsets[rows][ai] + turns.disp_ranks[ai, ak]
        displayed = pa.ListArray.from_arrays(
            pa.array(d_off.astype(np.int32)),
            values.take(pa.array(src)),
            mask=pa.array(~tmpl & (disp_n == 0)),
        )
    columns = {
        "retrieval_id": ids.retrievals(order),
        "prompt_id": ids.prompts(g["prompt"]),
        "session_guid": ids.sessions(g["sess"]),
        "ts": ts_array(g["ts"]),
        "query_text": q,
        "retrieval_role": role,
        "returned_asset_ids": returned,
        "displayed_asset_ids": displayed,
    }
    return _in_partitions("retrievals", columns, g, order, clock, rng)


def build_actions(
    cfg: GeneratorConfig, clock: Clock, acts: Actions, ids: IdFormatter
) -> GeneratedTable:
    """The actions table."""
    rng = stream(cfg.seed, "actions_table")
    order, g = _in_time_order(acts.A)
    columns = {
        "action_id": format_ids("x_", order, 0xAC7),
        "session_guid": ids.sessions(g["sess"]),
        "prompt_id": with_nulls(ids.prompts(np.maximum(g["prompt"], 0)), g["prompt"] < 0),
        "ts": ts_array(g["ts"]),
        "actor": enum_array(ACTORS, g["actor"]),
        "action_type": enum_array(ACTION_TYPES, g["atype"]),
        "consumed_asset_id": asset_strings(g["asset"]),
        "source_retrieval_id": with_nulls(
            ids.retrievals(np.maximum(g["source"], 0)), g["source"] < 0
        ),
        "document_id": with_nulls(ids.documents(np.maximum(g["doc"], 0)), g["doc"] < 0),
    }
    return _in_partitions("actions", columns, g, order, clock, rng)

"""The stage_spans table: per-stage latency and tokens of assistant prompts."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from lara.generate.arrays import enum_array, explode, stream
from lara.generate.config import Clock, GeneratorConfig
from lara.generate.output import GeneratedTable, IdFormatter
from lara.generate.schema import MEMORY_SCHEMAS, STAGES, TEMPLATE
from lara.generate.sessions import Turns


def stage_spans(
    cfg: GeneratorConfig, clock: Clock, turns: Turns, ids: IdFormatter
) -> tuple[GeneratedTable, np.ndarray]:
    """Spans of a share of the assistant prompts (planner, [retrieval], generation,
    other), partitioned by the prompt's day; and per prompt index whether it has spans."""
    rng = stream(cfg.seed, "stage_spans")
    P = turns.P
    cov = np.flatnonzero(
        (P["surface"] != TEMPLATE) & (rng.random(turns.nP) < cfg.stage_span_coverage)
    )
    cov = cov[np.argsort(P["ts"][cov], kind="stable")]
    has_r = P["n_ret"][cov] > 0
    # stages per prompt: planner, [retrieval], generation, other
    n_st = 3 + has_r
    pi, si = explode(n_st)
    stage = np.where(has_r[pi], si, np.where(si == 0, 0, si + 1))
    p = cov[pi]
    m = p.size
    lat = np.select(
        [stage == 0, stage == 1, stage == 2],
        [
            rng.lognormal(np.log(250), 0.5, m),
            150 * P["n_ret"][p] + rng.lognormal(np.log(200), 0.6, m),
            rng.lognormal(np.log(3000), 0.5, m),
        ],
        rng.uniform(20, 300, m),
    )
    tok = np.select(
        [stage == 0, stage == 1, stage == 2],
        [
            rng.integers(200, 801, m),
            P["n_ret"][p] * rng.integers(20, 120, m),
            rng.integers(500, 3001, m),
        ],
        rng.integers(0, 101, m),
    )
    table = pa.table(
        {
            "prompt_id": ids.prompts(p),
            "stage": enum_array(STAGES, stage),
            "latency_ms": pa.array(np.round(lat).astype(np.int64)),
            "tokens": pa.array(tok.astype(np.int64)),
        },
        schema=MEMORY_SCHEMAS["stage_spans"],
    )
    dt = clock.day_of(P["ts"][p])
    spanned = np.zeros(turns.nP, bool)
    spanned[cov] = True
    return GeneratedTable(table, dt, np.zeros(m, np.int8)), spanned

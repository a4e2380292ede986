"""The generator's run: simulate, inject bad rows, compute the planted truth, write.

See the package docstring (:mod:`lara.generate`) for the layout and the manifest.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import json
import shutil
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from lara.generate.actions import simulate_actions
from lara.generate.arrays import trim_heap
from lara.generate.bad_rows import inject
from lara.generate.config import Clock, GeneratorConfig, thread_count
from lara.generate.labels import LabelBatch, goal_labels, prompt_labels, relevance_labels
from lara.generate.logs import build_actions, build_prompts, build_retrievals
from lara.generate.output import TZ_SUFFIX, GeneratedTable, IdFormatter
from lara.generate.planted import compute_planted, compute_replay_realised
from lara.generate.replay import replay
from lara.generate.sample import Sample
from lara.generate.schema import REPLAY_TABLES, TABLES
from lara.generate.sessions import draw_population, simulate_turns
from lara.generate.spans import stage_spans
from lara.generate.vocabulary import catalogue
from lara.generate.writer import Writer, write_table

GENERATOR_VERSION = "1.0.0"

#: the manifest's ``layout``
LAYOUT: dict[str, Any] = {
    "path": "<table>/dt=YYYY-MM-DD/<file>",
    "partition_by": {
        "prompts": "ts (UTC day)",
        "retrievals": "ts (UTC day)",
        "actions": "ts (UTC day)",
        "relevance_labels": "judged_at (UTC day)",
        "prompt_labels": "judged_at (UTC day)",
        "goal_labels": "judged_at (UTC day)",
        "stage_spans": "the prompt's ts (UTC day)",
        "replay_documents": "start_date",
        "replay_queries": "start_date",
        "document_entities": "start_date",
    },
    "files": "part-0.<ext> (mixed single-partition tables: part-0.parquet + "
    "part-1.jsonl[.gz]); bad-rows.jsonl = defects Parquet cannot express; "
    "late-0.<ext> = late re-deliveries (duplicates / conflicting versions)",
    "json_timestamps": "ISO-8601 with offsets " + ", ".join(TZ_SUFFIX),
}


def simulate(
    cfg: GeneratorConfig,
    clock: Clock,
    tables: dict[str, GeneratedTable],
    step: Callable[[str], None],
    bar: tqdm,
    on_table: Callable[[str], None] | None = None,
) -> Sample:
    """All tables and labels, stage by stage; ``tables`` is filled as they are built.

    Every stage draws from its own random stream (``arrays.stream(seed, stage)``)
    and reads only arrays of earlier stages, so the stages that do not depend on
    each other run in a thread pool without changing the data: the replay
    tables from the start, the tables and labels once the actions are drawn.
    ``on_table(name)`` is called (in the stage's thread) as soon as a table is built.
    """
    found: dict[str, Any] = {}  # what the stages return besides their tables

    def run(stage: Callable[[], None], names: tuple[str, ...]) -> None:
        stage()
        trim_heap()
        if on_table is not None:
            for t in names:
                on_table(t)

    catalogue()  # shared, built once before the threads start
    threads = thread_count()
    with ThreadPoolExecutor(max_workers=max(1, threads - 1)) as pool:
        running: list[Future[None]] = []

        def start(stage: Callable[[], None], names: tuple[str, ...]) -> None:
            if threads > 1:
                running.append(pool.submit(run, stage, names))
            else:  # one thread: stage by stage
                run(stage, names)

        def replay_stage() -> None:
            replayed, found["replay_latent"] = replay(cfg)
            tables.update(replayed)

        if cfg.replay:
            start(replay_stage, REPLAY_TABLES)
        step("sessions")
        pop = draw_population(cfg, clock)
        bar.update()
        step("prompts")
        turns = simulate_turns(cfg, pop)
        trim_heap()
        bar.update()
        step("actions")
        acts = simulate_actions(cfg, pop, turns)
        trim_heap()
        bar.update()
        step("tables")
        ids = IdFormatter(pop.S + acts.n_cross_sessions, turns.nP, turns.nR)

        def log_table(name: str, build: Callable[[], GeneratedTable]) -> Callable[[], None]:
            def stage() -> None:
                tables[name] = build()

            return stage

        def label_table(name: str, draw: Callable[..., LabelBatch]) -> Callable[[], None]:
            def stage() -> None:
                found[name] = batch = draw(cfg, clock, turns, ids)
                tables[name] = batch.table

            return stage

        def spans_stage() -> None:
            tables["stage_spans"], found["spanned"] = stage_spans(cfg, clock, turns, ids)

        stages: dict[str, Callable[[], None]] = {  # table -> the stage building it
            "retrievals": log_table("retrievals", lambda: build_retrievals(cfg, clock, turns, ids)),
            "prompts": log_table("prompts", lambda: build_prompts(cfg, clock, pop, turns, ids)),
            "actions": log_table("actions", lambda: build_actions(cfg, clock, acts, ids)),
            "relevance_labels": label_table("relevance_labels", relevance_labels),
            "prompt_labels": label_table("prompt_labels", prompt_labels),
            "goal_labels": label_table("goal_labels", goal_labels),
            "stage_spans": spans_stage,
        }
        for name, stage in stages.items():
            start(stage, (name,))
        for done in running:
            done.result()
    ids.drop()
    bar.update(3)
    return Sample(
        cfg=cfg,
        clock=clock,
        population=pop,
        turns=turns,
        actions=acts,
        tables={t: tables[t] for t in TABLES if t in tables},  # whichever stage finished first
        relevance_labels=found["relevance_labels"],
        prompt_labels=found["prompt_labels"],
        goal_labels=found["goal_labels"],
        spanned=found["spanned"],
        replay_latent=found.get("replay_latent"),
    )


def _preload_scipy() -> None:
    """Import scipy.stats (a second or more) in the background: the replay and
    planted-truth steps use it (normal CDF, Spearman) and find it loaded."""
    with contextlib.suppress(ImportError):
        import scipy.special
        import scipy.stats  # noqa: F401


def generate(
    config: GeneratorConfig,
    out_dir: Path,
    progress: bool = True,
    timings: dict[str, float] | None = None,
) -> dict:
    """Generate the sample logs into ``out_dir`` and return the manifest.

    Existing ``<out_dir>/<table>`` folders of the contract's tables and
    ``_manifest.json`` are replaced; nothing else in ``out_dir`` is touched.
    ``timings``, when given, receives ``cpu_seconds`` (the process's CPU time,
    every thread, from start to the manifest written) and ``write_cpu_seconds``
    (the part of it the writing threads spent writing files, ``Writer.cpu_seconds``):
    measurements for ``lara bench``, kept out of the manifest, which stays the
    same from run to run.
    """
    cpu_started = time.process_time()
    cfg = config
    cfg.validate()
    thread_count()  # a bad LARA_GENERATE_THREADS stops the run before any output
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stages = [
        "sessions",
        "prompts",
        "actions",
        "tables",
        "labels",
        "replay",
        "bad rows",
        "planted",
        "write",
    ]
    bar = tqdm(total=len(stages), file=sys.stderr, disable=not progress, desc="lara generate")

    def step(name: str) -> None:
        bar.set_postfix_str(name)

    clock = Clock.of(cfg)
    built: dict[str, GeneratedTable] = {}  # filled by simulate(), in any order
    preload = threading.Thread(target=_preload_scipy, name="lara-preload")
    if cfg.replay:
        preload.start()
    for t in TABLES:
        if (out / t).is_dir():
            shutil.rmtree(out / t)
    # Files are written in background threads. Without bad rows a table is final
    # as soon as it is built: it is written then, and the event tables are
    # released once written (they are the bulk of the memory). With bad rows the
    # tables are written after the injection, while the planted truth is computed.
    write_early = not cfg.bad_rows
    written: dict[str, tuple[list[str], int]] = {}
    w = Writer(cfg, out, clock.start)

    def write(t: str, extras: list[dict[str, Any]]) -> None:
        # TABLES.index(t) = position among the tables written (only the replay
        # tables, the last ones, can be absent): mixed-format alternation
        b = built[t]
        written[t] = write_table(w, t, TABLES.index(t), b.table, b.dt, b.tz, extras)
        if write_early and t not in REPLAY_TABLES:
            b.release()

    try:
        sample = simulate(
            cfg, clock, built, step, bar, (lambda t: write(t, [])) if write_early else None
        )
        step("bad rows")
        injection = inject(sample)
        bar.update()
        tables_out = list(sample.tables)
        if not write_early:
            for t in tables_out:
                write(t, injection.extras.get(t, []))
        step("planted")
        planted = compute_planted(sample, injection.victims)
        replay_info = _replay_info(sample, injection.victims) if cfg.replay else None
        bar.update()
        step("write")
        w.finish()
    finally:
        w.close()
    if preload.is_alive():
        preload.join()
    table_info = {t: {"rows_written": written[t][1], "files": written[t][0]} for t in tables_out}
    expected = {}
    for t in tables_out:
        exp = injection.expected[t]
        raw = exp["clean"] + exp["exact_duplicates"] + sum(exp["quarantined"].values())
        if raw != table_info[t]["rows_written"]:  # pragma: no cover - internal check
            raise RuntimeError(f"{t}: {raw} expected rows != {table_info[t]['rows_written']}")
        expected[t] = exp
    bar.update()
    bar.close()
    manifest = {
        "generator": "lara.generate",
        "generator_version": GENERATOR_VERSION,
        "parameters": _parameters(sample),
        "layout": LAYOUT,
        "tables": table_info,
        "expected_staging": expected,
        "bad_rows": injection.log,
        "planted": planted | {"replay": replay_info},
    }
    manifest = json.loads(json.dumps(manifest, default=_json_default))
    (out / "_manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n")
    if timings is not None:
        timings["cpu_seconds"] = time.process_time() - cpu_started
        timings["write_cpu_seconds"] = w.cpu_seconds
    return manifest


def _parameters(sample: Sample) -> dict[str, Any]:
    """The manifest's ``parameters``: every config field, and the replay size used."""
    params = dataclasses.asdict(sample.cfg)
    latent = sample.replay_latent
    params["replay_trajectories_effective"] = latent["T"] if latent is not None else None
    return params


def _replay_info(sample: Sample, victims: dict[str, np.ndarray]) -> dict[str, Any]:
    """The manifest's ``planted.replay``: targets, latent counts and realised statistics."""
    cfg = sample.cfg
    assert sample.replay_latent is not None
    return {
        "parameters": {
            k: getattr(cfg, k)
            for k in (
                "replay_rho",
                "proxy_rho",
                "proxy_sru_rho",
                "replay_failure_share",
                "replay_turn_cap",
                "oer_p_discriminative",
                "oer_p_non_discriminative",
            )
        }
        | {
            "trajectories": sample.replay_latent["T"],
            "target_oer_ratio": cfg.oer_p_discriminative / max(cfg.oer_p_non_discriminative, 1e-12),
        },
        "latent": sample.replay_latent,
        "realised": compute_replay_realised(
            {t: sample.tables[t].table for t in REPLAY_TABLES}, cfg, victims
        ),
    }


def _json_default(o: Any) -> Any:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (_dt.datetime, _dt.date)):
        return o.isoformat()
    if isinstance(o, tuple):
        return list(o)
    raise TypeError(f"not JSON serialisable: {type(o)}")

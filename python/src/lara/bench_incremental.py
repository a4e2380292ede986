"""Benchmark of a scheduled daily run: one incremental day over an N-day warehouse.

Generates N days of logs, builds the first N-1 days (the warehouse as it
stood yesterday), delivers the last day (and every late event after it),
then times the incremental run (`dbt run`, then `dbt test`), and finally
a full `dbt build` over the same files into a fresh warehouse, in the same
run, so the ratio compares like with like. Files are delivered as symbolic
links into a landing folder, as a scheduler's sync would drop them.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lara.dbt import dbt_env, dbt_executable
from lara.paths import project_dir


@dataclass
class IncrementalResult:
    sessions: int
    days: int
    events: int
    last_day_events: int
    generator_s: float
    history_build_s: float
    day_run_s: float
    day_test_s: float
    full_build_s: float
    full_models_s: float | None
    day_models_s: float | None
    full_peak_rss_mib: float
    day_peak_rss_mib: float
    ok: bool
    notes: list[str]
    recomputed: dict[str, float]

    @property
    def day_build_s(self) -> float:
        return self.day_run_s + self.day_test_s

    @property
    def ratio_build(self) -> float:
        return self.day_build_s / self.full_build_s if self.full_build_s else float("nan")

    @property
    def ratio_run(self) -> float | None:
        if self.full_models_s and self.day_models_s is not None:
            return self.day_models_s / self.full_models_s
        return None


def _partition(path: Path) -> str:
    return path.parent.name.removeprefix("dt=")


def _deliver(raw: Path, landing: Path, files: list[Path]) -> int:
    import pyarrow.parquet as pq

    rows = 0
    for source in files:
        target = landing / source.relative_to(raw)
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            target.symlink_to(source.resolve())
        if source.suffix == ".parquet":
            rows += pq.ParquetFile(source).metadata.num_rows
    return rows


def bench_incremental(
    work: Path,
    sessions: int,
    days: int,
    seed: int,
    memory_limit: str,
    threads: int,
    log=print,
    *,
    generate_logs: Callable[[Path, int, int, int], float],
    count_events: Callable[[Path], int],
    measure: Callable,
    dbt_breakdown: Callable[[Path], dict],
) -> IncrementalResult:
    root = work / "incremental"
    shutil.rmtree(root, ignore_errors=True)
    raw, landing = root / "raw", root / "landing"
    landing.mkdir(parents=True)
    log(f"[bench] incremental: generating {sessions:,} sessions over {days} days")
    gen_s = generate_logs(raw, sessions, days, seed)
    events = count_events(raw)
    files = sorted(p for p in raw.rglob("*") if p.is_file() and "dt=" in str(p))
    dated = sorted({_partition(p) for p in files if _partition(p)[:4].isdigit()})
    last_day = dated[min(days, len(dated)) - 1]
    history = [p for p in files if _partition(p)[:4].isdigit() and _partition(p) < last_day]
    rest = [p for p in files if p not in set(history)]
    notes: list[str] = []

    def dbt(args: list[str], warehouse: Path, tag: str):
        env = dbt_env(
            landing,
            warehouse,
            {
                "DBT_TARGET_PATH": str(root / f"target-{tag}"),
                "DBT_LOG_PATH": str(root / "logs"),
                "LARA_DUCKDB_MEMORY_LIMIT": memory_limit,
                "LARA_THREADS": str(threads),
            },
        )
        measured = measure(
            [dbt_executable(), *args, "--project-dir", str(project_dir())],
            env=env,
            cwd=project_dir(),
        )
        if measured.returncode != 0:
            notes.append(f"dbt {' '.join(args)} ({tag}) failed: {measured.output[-800:]}")
            log(measured.output[-3000:])
        return measured

    incremental = root / "incremental.duckdb"
    _deliver(raw, landing, history)
    log(f"[bench] incremental: building days 1..{len(dated[:days]) - 1} ({len(history)} files)")
    start = time.perf_counter()
    hist = dbt(["build"], incremental, "history")
    history_s = time.perf_counter() - start
    last_events = _deliver(raw, landing, rest)
    log(f"[bench] incremental: delivered {last_day} and later ({last_events:,} parquet rows)")
    day_run = dbt(["run"], incremental, "day-run")
    recomputed = _recomputed_share(incremental)
    day_test = dbt(["test"], incremental, "day-test")
    log(f"[bench] incremental: one day run {day_run.seconds:.1f} s + test {day_test.seconds:.1f} s")
    full = root / "full.duckdb"
    full_build = dbt(["build"], full, "full")
    full_models = dbt_breakdown(root / "target-full").get("by_type_s", {}).get("model")
    day_models = dbt_breakdown(root / "target-day-run").get("by_type_s", {}).get("model")
    log(f"[bench] incremental: full build {full_build.seconds:.1f} s")
    ok = all(m.returncode == 0 for m in (hist, day_run, day_test, full_build))
    result = IncrementalResult(
        sessions=sessions,
        days=days,
        events=events,
        last_day_events=last_events,
        generator_s=gen_s,
        history_build_s=history_s,
        day_run_s=day_run.seconds,
        day_test_s=day_test.seconds,
        full_build_s=full_build.seconds,
        full_models_s=full_models,
        day_models_s=day_models,
        full_peak_rss_mib=full_build.max_rss_kib / 1024,
        day_peak_rss_mib=max(day_run.max_rss_kib, day_test.max_rss_kib) / 1024,
        ok=ok,
        notes=notes,
        recomputed=recomputed,
    )
    shutil.rmtree(root, ignore_errors=True)
    return result


SESSION_MARTS = ("fct_retrievals", "fct_action_attributions", "fct_prompts", "fct_sessions")


def _recomputed_share(warehouse: Path) -> dict[str, float]:
    """Share of each session-grained mart's rows that the last run recomputed."""
    import duckdb

    shares = {}
    try:
        with duckdb.connect(str(warehouse), read_only=True) as con:
            for table in SESSION_MARTS:
                shares[table] = con.execute(
                    f"select avg(case when _lara_loaded_at = (select max(_lara_loaded_at)"
                    f" from marts.{table}) then 1.0 else 0.0 end) from marts.{table}"
                ).fetchone()[0]
    except duckdb.Error:
        return {}
    return shares


def render_incremental(result: IncrementalResult | None) -> str:
    if result is None:
        return ""
    r = result
    lines = [
        "",
        "## One-day incremental run",
        "",
        f"{r.events:,} events ({r.sessions:,} sessions) over {r.days} days; the warehouse is"
        f" built on days 1..{r.days - 1}, then the last day and every late event after it"
        f" ({r.last_day_events:,} rows in all tables) are delivered and the scheduled run is"
        " timed; then a full `dbt build` of the same files into a fresh warehouse, in the same"
        " benchmark run.",
        "",
        "| step | wall s | peak RSS MiB |",
        "|---|---:|---:|",
        f"| full build, {r.days} days (`dbt build`) | {r.full_build_s:.1f}"
        f" | {r.full_peak_rss_mib:,.0f} |",
        f"| one-day incremental `dbt run` | {r.day_run_s:.1f} | {r.day_peak_rss_mib:,.0f} |",
        f"| one-day `dbt test` (every test, whole tables) | {r.day_test_s:.1f} | |",
        f"| history build, days 1..{r.days - 1} | {r.history_build_s:.1f} | |",
        "",
        f"- **incremental run + tests / full build: {r.ratio_build:.2f}** (target < 0.15)",
    ]
    if r.recomputed:
        lines.append(
            "- rows the one-day run recomputed (affected sessions): "
            + ", ".join(f"{t} {share:.0%}" for t, share in r.recomputed.items())
        )
    if r.ratio_run is not None:
        lines.append(
            f"- models only (sum of model seconds, run_results.json): one day"
            f" {_f(r.day_models_s)} s / full {_f(r.full_models_s)} s = {r.ratio_run:.2f}"
        )
    if not r.ok:
        lines.append("- FAILED: " + " / ".join(r.notes)[:1500])
    return "\n".join(lines) + "\n"


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"

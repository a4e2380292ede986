"""Benchmark of a scheduled daily run: one incremental day over an N-day warehouse.

For each history length (30 and 60 days by default, the same events per
day): generates N days of logs, builds the first N-1 days (the warehouse as
it stood yesterday: every partition dated before the last day, replay and
reference tables included), delivers the last day (every table's
partition of that date: its events, and the labels and spans dated that day,
which reach back to earlier sessions), then times the scheduled run, one
`dbt build` with the production selector (models, then the data tests sized
to the run), and a second scheduled run with nothing new delivered: what a
run costs before any data (dbt's start, the raw listing, one query per model
and test), so the day's cost can be split into that fixed part and the part
that follows the day's data. For the shortest history it then times a full
`dbt build` of the same files into a fresh warehouse, in the same benchmark
run, so the ratio compares like with like. Files are delivered as hard
links (copies across file systems) into a landing folder, as a scheduler's sync
would drop them.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lara.dbt import dbt_env, dbt_executable
from lara.paths import project_dir

#: the share of each session-grained mart's rows the day's run rewrote
SESSION_MARTS = ("fct_retrievals", "fct_action_attributions", "fct_prompts", "fct_sessions")
#: the slowest models listed per build in the report
TOP_MODELS = 15
#: the slowest data tests listed per build in the report
TOP_TESTS = 5


@dataclass
class IncrementalResult:
    sessions: int
    days: int
    events: int
    last_day_events: int
    generator_s: float
    history_build_s: float
    day_build_s: float
    full_build_s: float | None
    day_peak_rss_mib: float
    full_peak_rss_mib: float | None
    ok: bool
    #: a scheduled run with nothing new delivered (None in results written before it was measured)
    idle_build_s: float | None = None
    notes: list[str] = field(default_factory=list)
    recomputed: dict[str, float] = field(default_factory=dict)
    day_breakdown: dict = field(default_factory=dict)
    full_breakdown: dict = field(default_factory=dict)
    #: node seconds of the run with nothing new (empty in results written before it was kept)
    idle_breakdown: dict = field(default_factory=dict)

    @property
    def events_per_day(self) -> float:
        return self.events / self.days if self.days else float("nan")

    @property
    def ratio_build(self) -> float | None:
        if self.full_build_s:
            return self.day_build_s / self.full_build_s
        return None

    @property
    def ratio_data(self) -> float | None:
        """The day's cost above a run with nothing new, over the full build."""
        if self.full_build_s and self.idle_build_s is not None:
            return max(self.day_build_s - self.idle_build_s, 0.0) / self.full_build_s
        return None


def _partition(path: Path) -> str:
    return path.parent.name.removeprefix("dt=")


def split_delivery(files: list[Path], days: int) -> tuple[str, list[Path], list[Path], list[Path]]:
    """The last day of an N-day log, and its files as yesterday's warehouse, the day, later.

    Yesterday's warehouse: every partition dated before the last day, and the
    undated ones. The day: every table's partition of the last day (its events,
    and the labels and spans dated that day, which reach back to earlier
    sessions). Later: the partitions the generator dates past its horizon
    (actions days after a session, labels judged up to two weeks later), which
    belong to later days and are not delivered; delivering them with the day
    loaded two weeks of labels in one run (how this benchmark worked before
    2026-12-02).
    """
    dated = sorted({_partition(p) for p in files if _partition(p)[:4].isdigit()})
    last_day = dated[min(days, len(dated)) - 1]
    history = [p for p in files if not _partition(p)[:4].isdigit() or _partition(p) < last_day]
    day = [p for p in files if _partition(p) == last_day]
    later = [p for p in files if _partition(p)[:4].isdigit() and _partition(p) > last_day]
    return last_day, history, day, later


def _deliver(raw: Path, landing: Path, files: list[Path]) -> int:
    import pyarrow.parquet as pq

    rows = 0
    for source in files:
        target = landing / source.relative_to(raw)
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            # A hard link (a copy across file systems), not a symlink: the raw
            # listing skips symlinks (they could point outside the raw root).
            try:
                os.link(source, target)
            except OSError:
                shutil.copy2(source, target)
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
    full_build: bool = True,
    generate_logs: Callable[[Path, int, int, int], float],
    count_events: Callable[[Path], int],
    measure: Callable,
    dbt_breakdown: Callable[[Path], dict],
) -> IncrementalResult:
    root = work / f"incremental_{days}d"
    shutil.rmtree(root, ignore_errors=True)
    raw, landing = root / "raw", root / "landing"
    landing.mkdir(parents=True)
    log(f"[bench] incremental {days} days: generating {sessions:,} sessions")
    gen_s = generate_logs(raw, sessions, days, seed)
    files = sorted(p for p in raw.rglob("*") if p.is_file() and "dt=" in str(p))
    last_day, history, rest, later = split_delivery(files, days)
    notes: list[str] = []

    def dbt(args: list[str], warehouse: Path, tag: str):
        # The scheduled runs share one target folder, as on a scheduler's
        # machine (dbt's partial parsing applies); the full build has its own.
        env = dbt_env(
            landing,
            warehouse,
            {
                "DBT_TARGET_PATH": str(root / ("target-full" if tag == "full" else "target")),
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
    log(f"[bench] incremental {days} days: building days 1..{days - 1} ({len(history)} files)")
    start = time.perf_counter()
    hist = dbt(["build"], incremental, "history")
    history_s = time.perf_counter() - start
    last_events = _deliver(raw, landing, rest)
    events = count_events(landing)
    log(
        f"[bench] incremental {days} days: delivered {last_day} ({last_events:,} rows;"
        f" {len(later)} file(s) dated after it not delivered)"
    )
    day = dbt(["build"], incremental, "day")
    day_breakdown = dbt_breakdown(root / "target")
    recomputed = _recomputed_share(incremental)
    log(f"[bench] incremental {days} days: the day's dbt build {day.seconds:.1f} s")
    idle = dbt(["build"], incremental, "idle")
    idle_breakdown = dbt_breakdown(root / "target")
    log(f"[bench] incremental {days} days: a run with nothing new {idle.seconds:.1f} s")
    full = None
    if full_build:
        full = dbt(["build"], root / "full.duckdb", "full")
        log(f"[bench] incremental {days} days: full build {full.seconds:.1f} s")
    ok = all(m.returncode == 0 for m in (hist, day, idle, *([full] if full else [])))
    result = IncrementalResult(
        sessions=sessions,
        days=days,
        events=events,
        last_day_events=last_events,
        generator_s=gen_s,
        history_build_s=history_s,
        day_build_s=day.seconds,
        idle_build_s=idle.seconds,
        full_build_s=full.seconds if full else None,
        day_peak_rss_mib=day.max_rss_kib / 1024,
        full_peak_rss_mib=full.max_rss_kib / 1024 if full else None,
        ok=ok,
        notes=notes,
        recomputed=recomputed,
        day_breakdown=day_breakdown,
        idle_breakdown=idle_breakdown,
        full_breakdown=dbt_breakdown(root / "target-full") if full else {},
    )
    shutil.rmtree(root, ignore_errors=True)
    return result


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


def top_seconds(seconds_by_name: dict[str, float], count: int) -> str:
    """'name s, name s, ...' for the `count` largest values, largest first ('' for none)."""
    top = sorted(seconds_by_name.items(), key=lambda kv: -kv[1])[:count]
    return ", ".join(f"{name} {seconds:.1f}" for name, seconds in top)


def _models(breakdown: dict) -> str:
    models = breakdown.get("models_s") or breakdown.get("slowest_models_s") or {}
    return top_seconds(models, TOP_MODELS) or "n/a"


def slowest_tests(breakdown: dict) -> str:
    """'; slowest data tests: name s, ...' for a build's breakdown, or '' when it has
    none (a build without tests, or results saved before tests were recorded)."""
    listed = top_seconds(breakdown.get("slowest_tests_s") or {}, TOP_TESTS)
    return f"; slowest data tests: {listed}" if listed else ""


def _types(breakdown: dict) -> str:
    return ", ".join(f"{k} {v:.1f}" for k, v in breakdown.get("by_type_s", {}).items()) or "n/a"


def per_node(breakdown: dict) -> str:
    """'model 0.20 s (102), data test 36 ms (344)': a run's fixed cost per node (its node
    seconds over its nodes), for results that counted their nodes; '' otherwise."""
    counts = breakdown.get("nodes_by_type") or {}
    seconds = breakdown.get("by_type_s", {})
    parts = [
        f"{label} {seconds[kind] / counts[kind] * scale:.{digits}f} {unit} ({counts[kind]})"
        for kind, label, scale, digits, unit in (
            ("model", "model", 1, 2, "s"),
            ("test", "data test", 1000, 0, "ms"),
        )
        if counts.get(kind) and kind in seconds
    ]
    return ", ".join(parts)


def render_incremental(results: list[IncrementalResult]) -> str:
    if not results:
        return ""
    lines = [
        "",
        "## One-day incremental run",
        "",
        "For each history length, the same events per day: the warehouse is built on days "
        "1..N-1 (the replay and reference tables included), then every table's partition "
        "of the last day is delivered (its events, and the labels and spans dated that day, "
        "which reach back to earlier sessions; partitions dated later are not delivered) and "
        "the scheduled run is timed: one `dbt build` (the default `production` selector: "
        "models, then data tests on the rows the run wrote). A second scheduled run with "
        "nothing new delivered gives the fixed cost of a run (dbt's start, the raw listing, "
        "one query per model and test); the day's cost above it is the part that follows the "
        "day's data. For the shortest history, a full `dbt build` of the same files into a "
        "fresh warehouse follows in the same benchmark run.",
        "",
        "| history | events | events/day | delivered rows | the day's `dbt build` s"
        " | its peak RSS MiB | a run with nothing new s | full build s | full peak RSS MiB"
        " | day / full | (day - nothing new) / full | history build s |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        ratio, data_ratio = r.ratio_build, r.ratio_data
        lines.append(
            f"| {r.days} days | {r.events:,} | {r.events_per_day:,.0f} | {r.last_day_events:,}"
            f" | {r.day_build_s:.1f} | {r.day_peak_rss_mib:,.0f}"
            f" | {'' if r.idle_build_s is None else f'{r.idle_build_s:.1f}'}"
            f" | {'not run' if r.full_build_s is None else f'{r.full_build_s:.1f}'}"
            f" | {'' if r.full_peak_rss_mib is None else f'{r.full_peak_rss_mib:,.0f}'}"
            f" | {'' if ratio is None else f'{ratio:.1%}'}"
            f" | {'' if data_ratio is None else f'{data_ratio:.1%}'}"
            f" | {r.history_build_s:.1f} |"
        )
    lines.append("")
    for r in results:
        if r.recomputed:
            lines.append(
                f"- {r.days} days, rows the day's run rewrote: "
                + ", ".join(f"{t} {share:.1%}" for t, share in r.recomputed.items())
            )
        # the cost per node is the run's fixed cost only in the run with nothing new
        for label, breakdown, fixed in (
            ("the day's node seconds (summed over threads)", r.day_breakdown, False),
            ("the run with nothing new, node seconds", r.idle_breakdown, True),
            ("the full build's node seconds", r.full_breakdown, False),
        ):
            if breakdown:
                cost = per_node(breakdown) if fixed else ""
                cost = f"; per node: {cost}" if cost else ""
                lines.append(
                    f"- {r.days} days, {label}: {_types(breakdown)}{cost};"
                    f" slowest models: {_models(breakdown)}{slowest_tests(breakdown)}"
                )
        if not r.ok:
            lines.append(f"- {r.days} days FAILED: " + " / ".join(r.notes)[:1500])
    return "\n".join(lines) + "\n"

"""Writing the tables: partitions, formats, injected rows, a thread pool of writers.

Layout ``<out>/<table>/dt=YYYY-MM-DD/part-0.<ext>`` (see the package docstring
for the rules); Parquet options in :func:`_parquet_options`; JSON Lines
timestamps rendered with the row's offset (``output.TZ_SUFFIX``).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import gzip as _gzip
import shutil
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lara.generate.arrays import US, with_nulls
from lara.generate.config import GeneratorConfig, thread_count
from lara.generate.output import TZ_OFFSET_MIN, TZ_SUFFIX
from lara.generate.schema import INT64, SCHEMAS, STRING, TIMESTAMP


def _json_ts(ts: pa.ChunkedArray | pa.Array, tz: np.ndarray) -> pa.Array:
    if isinstance(ts, pa.ChunkedArray):
        ts = ts.combine_chunks()
    nulls = np.asarray(ts.is_null().to_numpy(zero_copy_only=False), bool)
    us = ts.cast(INT64).fill_null(0).to_numpy()
    local = us + TZ_OFFSET_MIN[tz.astype(np.int64)] * 60 * US
    s = np.datetime_as_string(local.astype("datetime64[us]"), unit="ms")
    suffix = pa.array(list(TZ_SUFFIX), STRING).take(pa.array(tz.astype(np.int64)))
    out = pc.binary_join_element_wise(pa.array(s, STRING), suffix, "")
    return with_nulls(out, nulls)


def _parquet_options(schema: pa.Schema) -> dict[str, Any]:
    """Options of every Parquet file: no Arrow schema metadata; min / max statistics
    only on the timestamp and number columns (string statistics of random ids, enums
    and texts prune nothing and cost about a third of a string column's write time);
    Snappy compression except on the asset lists (``list<string>``): their
    dictionary-encoded pages hardly compress, so they are stored uncompressed."""
    lists = {f.name for f in schema if pa.types.is_list(f.type)}
    return {
        "store_schema": False,
        "write_statistics": [
            f.name for f in schema if not (f.name in lists or pa.types.is_string(f.type))
        ],
        "compression": {
            (f.name if f.name not in lists else f"{f.name}.list.element"): (
                "none" if f.name in lists else "snappy"
            )
            for f in schema
        },
    }


class Writer:
    """Writes the output files, several at a time in a thread pool.

    ``write_file`` plans a file (its path is returned at once) and queues the
    writing; every file depends only on its own rows, so the output does not
    depend on the order in which the threads run. ``finish`` waits for all
    files and raises the first error. ``cpu_seconds`` sums the CPU time of
    writing the files, each timed in the thread that writes it (DuckDB's own
    threads rendering JSON Lines are not counted): ``lara bench`` reports it
    as the generator's share spent writing.
    """

    def __init__(self, cfg: GeneratorConfig, out: Path, start: _dt.date):
        self.cfg = cfg
        self.out = out
        self.start = start
        threads = thread_count()
        self.pool = ThreadPoolExecutor(max_workers=threads) if threads > 1 else None
        self.futures: list[Future[None]] = []
        self.n_tmp = 0
        self.lock = threading.Lock()
        self.cpu_seconds = 0.0

    def finish(self) -> None:
        futures, self.futures = self.futures, []
        for f in futures:
            f.result()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None

    def dt_name(self, day: int) -> str:
        return "dt=" + (self.start + _dt.timedelta(days=int(day))).isoformat()

    def _json_table(self, tbl: pa.Table, tz: np.ndarray, schema: pa.Schema) -> pa.Table:
        cols = {}
        for f in schema:
            col = tbl[f.name]
            cols[f.name] = _json_ts(col, tz) if f.type == TIMESTAMP else col
        return pa.table(cols)

    @staticmethod
    def _copy_json(t: pa.Table, path: Path) -> None:
        # one connection per file: files are written from several threads
        with duckdb.connect() as con:
            con.execute("SET enable_progress_bar = false")
            con.register("t_render", t)
            target = str(path).replace("'", "''")
            con.execute(f"COPY t_render TO '{target}' (FORMAT JSON)")

    @staticmethod
    @contextlib.contextmanager
    def _gzip_open(path: Path) -> Iterator[_gzip.GzipFile]:
        # fixed header (no name, mtime 0) for byte-identical reruns; level 1 for speed
        with (
            open(path, "wb") as fh,
            _gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0, compresslevel=1) as zf,
        ):
            yield zf

    def write_file(
        self,
        path: Path,
        fmt: str,
        tbl: pa.Table,
        tz: np.ndarray,
        schema: pa.Schema,
        raw: list[str] | None = None,
    ) -> str:
        """Queue one file; returns its path relative to the output root."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with self.lock:  # files are planned from several threads
            tmp = self.out / f"_tmp_render_{self.n_tmp}.jsonl"
            self.n_tmp += 1
        args = (path, fmt, tbl, tz, schema, raw or [], tmp)
        if self.pool is None:
            self._write(*args)
        else:
            self.futures.append(self.pool.submit(self._write, *args))
        return path.relative_to(self.out).as_posix()

    def _write(self, *args: Any) -> None:
        """`_write_file(*args)`, its CPU time (this thread's) added to `cpu_seconds`."""
        started = time.thread_time()
        try:
            self._write_file(*args)
        finally:
            spent = time.thread_time() - started
            with self.lock:
                self.cpu_seconds += spent

    def _write_file(
        self,
        path: Path,
        fmt: str,
        tbl: pa.Table,
        tz: np.ndarray,
        schema: pa.Schema,
        raw: list[str],
        tmp: Path,
    ) -> None:
        if fmt == "parquet":
            # dictionary-encoded asset lists read back as list<string>, timestamps as
            # timestamp[us, tz=UTC] (Parquet logical types)
            pq.write_table(tbl.select(schema.names), path, **_parquet_options(schema))
            return
        try:
            self._write_json(path, tbl, tz, schema, raw, tmp)
        finally:
            tmp.unlink(missing_ok=True)

    def _write_json(
        self,
        path: Path,
        tbl: pa.Table,
        tz: np.ndarray,
        schema: pa.Schema,
        raw: list[str],
        tmp: Path,
    ) -> None:
        gz = path.suffix == ".gz"
        tbl = tbl.select(schema.names).cast(schema)
        jt = self._json_table(tbl, tz, schema) if tbl.num_rows else None
        if not raw and jt is not None:
            if not gz:
                self._copy_json(jt, path)
            else:
                self._copy_json(jt, tmp)
                with self._gzip_open(path) as zf, open(tmp, "rb") as src:
                    shutil.copyfileobj(src, zf, 16 << 20)
            return
        body = b""
        if jt is not None:
            self._copy_json(jt, tmp)
            body = tmp.read_bytes()
            if not body.endswith(b"\n"):
                body += b"\n"
        # interleave raw lines at evenly spread line boundaries
        chunks, pos = [], 0
        for i, line in enumerate(raw):
            cut = len(body) * (i + 1) // (len(raw) + 1)
            nl = body.find(b"\n", max(cut, pos))
            cut = len(body) if nl < 0 else nl + 1
            chunks.append(body[pos:cut])
            chunks.append(line.encode("utf-8") + b"\n")
            pos = cut
        chunks.append(body[pos:])
        body = b"".join(chunks)
        if gz:
            with self._gzip_open(path) as zf:
                zf.write(body)
        else:
            path.write_bytes(body)

    def ext(self, fmt: str) -> str:
        if fmt == "parquet":
            return ".parquet"
        return ".jsonl.gz" if self.cfg.gzip else ".jsonl"


def write_table(
    w: Writer,
    name: str,
    ti: int,
    tbl: pa.Table,
    dts: np.ndarray,
    tz: np.ndarray,
    extras: list[dict[str, Any]],
) -> tuple[list[str], int]:
    """Write a table's partitions plus injected rows. Returns (files, raw rows)."""
    schema = SCHEMAS[name]
    cfg = w.cfg
    root = w.out / name
    files: list[str] = []
    rows = 0
    order = np.argsort(dts, kind="stable")
    if not np.array_equal(order, np.arange(order.size)):
        tbl = tbl.take(pa.array(order))
        dts = dts[order]
        tz = tz[order]
    days_sorted = sorted(set(np.unique(dts).tolist()) | {e["dt"] for e in extras})
    single = len(days_sorted) == 1

    def typed_table(group: list[dict[str, Any]]) -> tuple[pa.Table, np.ndarray]:
        t = pa.Table.from_pylist([e["row"] for e in group], schema=schema)
        return t, np.array([e.get("tz", 0) for e in group], np.int8)

    def note(group: list[dict[str, Any]], rel: str) -> None:
        for e in group:
            e["log"]["file"] = rel

    for di, day in enumerate(days_sorted):
        lo, hi = np.searchsorted(dts, [day, day + 1])
        part = tbl.slice(lo, hi - lo).select(schema.names)
        ptz = tz[lo:hi]
        here = [e for e in extras if e["dt"] == day]
        inline = [e for e in here if e["place"] == "inline" and not e["json_only"]]
        late = [e for e in here if e["place"] == "late" and not e["json_only"]]
        raw = [e for e in here if e["json_only"]]
        if inline:
            et, etz = typed_table(inline)
            # injected rows take the in-memory types (dictionary-encoded asset lists)
            part = pa.concat_tables([part, et.cast(part.schema)])
            ptz = np.concatenate([ptz, etz])
        fmt = ("parquet" if (ti + di) % 2 == 0 else "jsonl") if cfg.fmt == "mixed" else cfg.fmt
        folder = root / w.dt_name(day)
        if cfg.fmt == "mixed" and single and part.num_rows >= 2:
            half = part.num_rows // 2
            rel0 = w.write_file(
                folder / "part-0.parquet", "parquet", part.slice(0, half), ptz[:half], schema
            )
            rel1 = w.write_file(
                folder / f"part-1{w.ext('jsonl')}",
                "jsonl",
                part.slice(half),
                ptz[half:],
                schema,
                [e["raw"] for e in raw],
            )
            files += [rel0, rel1]
            n_inline_first = max(0, half - (part.num_rows - len(inline)))
            note(inline[:n_inline_first], rel0)
            note(inline[n_inline_first:], rel1)
            note(raw, rel1)
            rows += part.num_rows + len(raw)
            raw = []
        elif fmt != "parquet" and (part.num_rows or raw):
            rel = w.write_file(
                folder / f"part-0{w.ext(fmt)}", fmt, part, ptz, schema, [e["raw"] for e in raw]
            )
            files.append(rel)
            note(inline + raw, rel)
            rows += part.num_rows + len(raw)
            raw = []
        elif part.num_rows:
            rel = w.write_file(folder / "part-0.parquet", fmt, part, ptz, schema)
            files.append(rel)
            note(inline, rel)
            rows += part.num_rows
        if raw:  # defects Parquet cannot express
            p = folder / "bad-rows.jsonl"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("".join(e["raw"] + "\n" for e in raw), encoding="utf-8")
            rel = p.relative_to(w.out).as_posix()
            files.append(rel)
            note(raw, rel)
            rows += len(raw)
        if late:
            et, etz = typed_table(late)
            rel = w.write_file(folder / f"late-0{w.ext(fmt)}", fmt, et, etz, schema)
            files.append(rel)
            note(late, rel)
            rows += et.num_rows
    return files, rows

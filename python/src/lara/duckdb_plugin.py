"""dbt-duckdb plugin: the file checks of the raw layer as a SQL function.

`profiles.yml` loads it (`plugins: - module: lara.duckdb_plugin`), and it
registers `lara_file_problem(path, file_format) -> varchar` on every
connection and cursor dbt opens. The raw-view registration
(macros/raw/listing.sql) calls it on each data file a run has not loaded
yet, and skips, with the returned reason, files that cannot be read whole:
a zero-byte or truncated gzip, a Parquet file without a valid footer, a
line that is not UTF-8. DuckDB would otherwise stop the whole build on the
first such file (or, for encodings, on the first bad line). Null means the
file reads.
"""

from __future__ import annotations

import codecs
import gzip
import zlib
from pathlib import Path

import duckdb
from dbt.adapters.duckdb.plugins import BasePlugin
from duckdb import DuckDBPyConnection

CHUNK = 1 << 20


def _decode_lines(stream) -> str | None:
    """Read a byte stream to the end as UTF-8; the first problem, or None."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            break
        try:
            decoder.decode(chunk)
        except UnicodeDecodeError as error:
            bad_line = line + chunk[: error.start].count(b"\n")
            return f"not UTF-8 at line {bad_line} (byte 0x{chunk[error.start]:02x})"
        line += chunk.count(b"\n")
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return f"not UTF-8: the file ends inside a character (line {line})"
    return None


def file_problem(path: str | None, file_format: str | None) -> str | None:
    """Why the file cannot be read whole, or None when it can."""
    if path is None:
        return None
    file = Path(path)
    try:
        size = file.stat().st_size
    except OSError as error:
        return f"cannot open: {error.strerror or error}"
    try:
        if file_format == "parquet":
            if size == 0:
                return "empty file (0 bytes), not a Parquet file"
            import pyarrow.parquet as pq

            pq.read_metadata(file)
            return None
        if path.endswith(".gz"):
            if size == 0:
                return "empty file (0 bytes), not a gzip stream"
            with gzip.open(file, "rb") as stream:
                return _decode_lines(stream)
        with open(file, "rb") as stream:
            return _decode_lines(stream)
    except (EOFError, OSError, zlib.error) as error:
        return f"unreadable: {type(error).__name__}: {str(error)[:200]}"
    except Exception as error:  # pyarrow raises its own errors for a broken footer
        return f"unreadable: {type(error).__name__}: {str(error)[:200]}"


def _register(conn: DuckDBPyConnection) -> None:
    try:
        conn.create_function(
            "lara_file_problem",
            file_problem,
            ["VARCHAR", "VARCHAR"],
            "VARCHAR",
            null_handling="special",
            side_effects=True,
        )
    except duckdb.CatalogException as error:
        # A cursor shares its connection's functions: registered already.
        if "already exists" not in str(error):
            raise


class Plugin(BasePlugin):
    """Registers lara_file_problem on every connection and cursor."""

    def configure_connection(self, conn: DuckDBPyConnection) -> None:
        _register(conn)

    def configure_cursor(self, cursor: DuckDBPyConnection) -> None:
        _register(cursor)  # a no-op where the cursor shares the connection's functions

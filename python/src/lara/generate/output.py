"""What a table family hands on: the built table, partition days, JSON offsets, ids."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pyarrow as pa

from lara.generate.arrays import format_ids

#: JSON timestamp renderings: suffix, offset in minutes and share of the rows
TZ_SUFFIX = ("Z", "+00:00", "+02:00", "-05:00", "+05:30")
TZ_OFFSET_MIN = np.array([0, 0, 120, -300, 330], dtype=np.int64)
TZ_PROBS = np.array([0.5, 0.2, 0.15, 0.1, 0.05])


def tz_choice(rng: np.random.Generator, n: int) -> np.ndarray:
    """Index into TZ_SUFFIX of each of ``n`` rows (drawn with TZ_PROBS)."""
    # = searchsorted(cum, u, side="right"): the number of bounds <= u
    u = rng.random(n)
    out = np.zeros(n, np.int8)
    for bound in np.cumsum(TZ_PROBS)[:-1]:
        out += u >= bound
    return out


@dataclass
class GeneratedTable:
    """One built table (in-memory types, see ``schema.MEMORY_SCHEMAS``) and per row its
    partition day index (``dt``) and JSON offset choice (``tz``).

    ``order`` is, for the tables of latent entities (prompts, retrievals, actions), the
    entity index of each row. ``release()`` frees the rows once written; ``num_rows``
    still answers.
    """

    table: pa.Table | None
    dt: np.ndarray
    tz: np.ndarray
    order: np.ndarray | None = None
    num_rows: int = field(init=False)

    def __post_init__(self) -> None:
        assert self.table is not None
        self.num_rows = self.table.num_rows

    @cached_property
    def row(self) -> np.ndarray:
        """Row of each entity index (the inverse of ``order``)."""
        assert self.order is not None
        row = np.empty(self.order.size, np.int64)
        row[self.order] = np.arange(self.order.size)
        return row

    def release(self) -> None:
        self.table = None


class IdFormatter:
    """Ids of sessions, prompts, retrievals and documents by entity index.

    Session, prompt and retrieval ids are formatted once per entity on first use and
    then taken (several tables and threads use them); ``drop()`` frees them.
    """

    KINDS = {"session": ("s_", 0x51D), "prompt": ("p_", 0x9E1), "retrieval": ("r_", 0x3C7)}

    def __init__(self, sessions: int, prompts: int, retrievals: int):
        self.sizes = {"session": sessions, "prompt": prompts, "retrieval": retrievals}
        self.cache: dict[str, pa.Array] = {}
        self.locks = {kind: threading.Lock() for kind in self.KINDS}

    def _cached(self, kind: str, idx: np.ndarray) -> pa.Array:
        with self.locks[kind]:
            every = self.cache.get(kind)
            if every is None:
                prefix, salt = self.KINDS[kind]
                every = format_ids(prefix, np.arange(self.sizes[kind], dtype=np.int64), salt)
                self.cache[kind] = every
        return every.take(pa.array(idx))

    def sessions(self, s: np.ndarray) -> pa.Array:
        return self._cached("session", s)

    def prompts(self, p: np.ndarray) -> pa.Array:
        return self._cached("prompt", p)

    def retrievals(self, r: np.ndarray) -> pa.Array:
        return self._cached("retrieval", r)

    @staticmethod
    def documents(d: np.ndarray) -> pa.Array:
        return format_ids("doc_", d, 0x77D)

    def drop(self) -> None:
        self.cache.clear()

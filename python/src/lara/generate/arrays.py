"""Small vectorised helpers of the generator (numpy / pyarrow, no per-row loops)."""

from __future__ import annotations

import string
import zlib
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lara.generate.schema import INT64, STRING, TIMESTAMP

US = 1_000_000
MS = 1_000
DAY_US = 86_400 * US


def stream(seed: int, stage: str) -> np.random.Generator:
    """The random stream of one stage: the same for a seed whatever runs before or beside it."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(stage.encode())]))


_MIX_MUL = np.uint64(0x9E3779B97F4A7C15 & ((1 << 40) - 1) | 1)
_MASK40 = np.uint64((1 << 40) - 1)


def format_ids(prefix: str, idx: np.ndarray, salt: int) -> pa.Array:
    """Unique pseudo-random decimal ids ``prefix + str(bijection(idx))``."""
    h = (idx.astype(np.uint64) * _MIX_MUL + np.uint64(salt)) & _MASK40
    return pc.binary_join_element_wise(prefix, pc.cast(pa.array(h), STRING), "")


def with_nulls(arr: pa.Array, null_mask: np.ndarray) -> pa.Array:
    """``arr`` with nulls where ``null_mask`` is true."""
    if not null_mask.any():
        return arr
    return pc.if_else(pa.array(null_mask), pa.scalar(None, arr.type), arr)


def take_vocab(vocab: tuple[str, ...] | list[str], idx: np.ndarray) -> pa.Array:
    """``vocab[idx[i]]`` as a string array."""
    return pa.array(list(vocab), STRING).take(pa.array(idx.astype(np.int64)))


def enum_array(
    vocab: tuple[str, ...], idx: np.ndarray, null_mask: np.ndarray | None = None
) -> pa.DictionaryArray:
    """Like ``with_nulls(take_vocab(vocab, idx), null_mask)``, dictionary-encoded
    (int8 codes; written to files as plain strings)."""
    mask = null_mask if null_mask is not None and null_mask.any() else None
    return pa.DictionaryArray.from_arrays(
        pa.array(idx.astype(np.int8), mask=mask), pa.array(list(vocab), STRING)
    )


def explode(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row index repeated ``counts`` times, and position within the row."""
    counts = counts.astype(np.int64)
    idx = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    starts = np.cumsum(counts) - counts
    return idx, np.arange(idx.size, dtype=np.int64) - starts[idx]


def compact(
    d: dict[str, np.ndarray], keep64: tuple[str, ...] = ("ts", "L", "end")
) -> dict[str, np.ndarray]:
    """Store latent integer arrays (indices, counts, codes < 2**31) as int32.

    Timestamps (microseconds) and asset codes stay int64.
    """
    out = {}
    for k, v in d.items():
        if k not in keep64 and v.dtype == np.int64:
            assert v.size == 0 or (v.min() >= -(2**31) and v.max() < 2**31), k
            v = v.astype(np.int32)
        out[k] = v
    return out


class Gathered:
    """``{k: arrays[k][order]}``, each array gathered on first use (less memory)."""

    def __init__(self, arrays: dict[str, np.ndarray], order: np.ndarray):
        self.arrays = arrays
        self.order = order
        self.done: dict[str, np.ndarray] = {}

    def __getitem__(self, key: str) -> np.ndarray:
        if key not in self.done:
            self.done[key] = self.arrays[key][self.order]
        return self.done[key]


def ts_array(ts_us: np.ndarray) -> pa.Array:
    """UTC timestamps from microseconds since the epoch."""
    return pa.array(ts_us.astype(np.int64), INT64).cast(TIMESTAMP)


def round_ms(x: np.ndarray) -> np.ndarray:
    """Microseconds rounded down to whole milliseconds (int64)."""
    return (np.asarray(x, dtype=np.float64) // MS).astype(np.int64) * MS


def render(templates: tuple[str, ...], choice: np.ndarray, fields: dict[str, pa.Array]) -> pa.Array:
    """Vectorised ``templates[choice[i]].format(**fields[i])`` (one pass per template)."""
    n = choice.size
    idx_parts: list[np.ndarray] = []
    arr_parts: list[pa.Array] = []
    for t, tpl in enumerate(templates):
        idx = np.flatnonzero(choice == t)
        if idx.size == 0:
            continue
        take = pa.array(idx)
        pieces: list[Any] = []
        for lit, name, _spec, _conv in string.Formatter().parse(tpl):
            if lit:
                pieces.append(lit)
            if name:
                pieces.append(fields[name].take(take))
        if not any(isinstance(p, pa.Array) for p in pieces):
            pieces.insert(0, pa.array([""] * idx.size, STRING))
        arr_parts.append(pc.binary_join_element_wise(*pieces, ""))
        idx_parts.append(idx)
    if not idx_parts:
        return pa.array([], STRING)
    order = np.concatenate(idx_parts)
    inv = np.empty(n, dtype=np.int64)
    inv[order] = np.arange(n)
    return pa.concat_arrays(arr_parts).take(pa.array(inv))


def normal_cdf(z: np.ndarray) -> np.ndarray:
    """The standard normal CDF."""
    try:
        from scipy.special import ndtr

        return ndtr(z)
    except ImportError:  # pragma: no cover - scipy is a declared dependency
        import math

        f = np.frompyfunc(lambda v: 0.5 * math.erfc(-v / math.sqrt(2.0)), 1, 1)
        return f(z).astype(np.float64)


def spearman(x: np.ndarray, y: np.ndarray) -> tuple[float | None, float | None]:
    """Spearman rho and its p-value (None for fewer than 3 points)."""
    if x.size < 3:
        return None, None
    try:
        from scipy.stats import spearmanr

        res = spearmanr(x, y)
        return float(res.statistic), float(res.pvalue)
    except ImportError:  # pragma: no cover
        rx = pd.Series(x).rank().to_numpy()
        ry = pd.Series(y).rank().to_numpy()
        return float(np.corrcoef(rx, ry)[0, 1]), None


def midrank_percentiles(x: np.ndarray) -> np.ndarray:
    """Mid-rank percentile: (strictly below + half of equal, itself included) / n."""
    r = pd.Series(x).rank(method="average").to_numpy()
    return (r - 0.5) / x.size


def pick(rng: np.random.Generator, cand: np.ndarray, k: int) -> np.ndarray:
    """Up to k distinct candidates (deterministic, sorted by position)."""
    if cand.size <= k:
        return np.sort(cand)
    return np.sort(rng.choice(cand, size=k, replace=False))


def trim_heap() -> None:
    """Give freed heap memory back to the OS (glibc only; elsewhere a no-op).

    numpy's many large temporaries are malloc'ed: once freed, glibc keeps most of
    them in its (per-thread) heaps, where pyarrow's allocator cannot reuse them.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass

"""The simulated world: words, topics, the asset catalogue, replay entities.

Vocabularies are small on purpose: the token Jaccard similarity of
re-searches is high, that of unrelated queries low.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lara.generate.arrays import with_nulls
from lara.generate.schema import STRING

OCCASIONS = (
    "birthday wedding graduation halloween christmas easter valentine anniversary "
    "babyshower retirement thanksgiving newyear picnic concert bakery cafe fitness yoga "
    "travel realestate fashion podcast webinar charity school sports music garden pet spa"
).split()
FORMATS = (
    "invitation flyer poster logo banner card menu resume presentation story thumbnail certificate"
).split()
MODIFIERS = (
    "blue red green gold pink purple black minimal vintage modern bold elegant playful retro "
    "floral rustic neon pastel watercolor geometric simple cute dark bright classic kids "
    "summer winter spring autumn handwritten photo illustrated abstract luxury corporate fun "
    "calm tropical boho"
).split()
N_TOPICS = len(OCCASIONS) * len(FORMATS)
ASSETS_PER_TOPIC = 401  # prime: any stride < 401 walks distinct assets
ASSET_GEN_BASE = 10**9  # generated (non-catalogue) assets: never in a returned list
STRIDES = np.array([1, 2, 3], dtype=np.int64)

SYLLABLES = ("za ze zo zu xa xe xo xu qa qe qo ky vy zy jo ju ja wu wy fy").split()
QWORDS = (
    "which year did the founder of band release album who directed film where was born "
    "author novel city river team won cup first largest company acquired museum located "
    "painter married"
).split()
N_ENTITY_CODES = len(SYLLABLES) ** 5
REPLAY_POOL = 41  # documents per question (prime)

_CATALOGUE: pa.Array | None = None


def catalogue() -> pa.Array:
    """Ids of the catalogue assets (code -> 'a' + code), built once per process."""
    global _CATALOGUE
    if _CATALOGUE is None:
        ncat = N_TOPICS * ASSETS_PER_TOPIC
        _CATALOGUE = pc.binary_join_element_wise(
            "a", pc.cast(pa.array(np.arange(ncat, dtype=np.int64)), STRING), ""
        )
    return _CATALOGUE


def asset_dict(code: np.ndarray) -> pa.DictionaryArray:
    """Catalogue asset ids, dictionary-encoded (memory: 4 bytes per id)."""
    return pa.DictionaryArray.from_arrays(pa.array(code.astype(np.int32)), catalogue())


def asset_strings(code: np.ndarray) -> pa.Array:
    """Asset ids: 'a' + code; code < 0 means null."""
    cat = catalogue()
    nulls = code < 0
    if code.size == 0 or code.max() < len(cat):
        return cat.take(pa.array(code, mask=nulls if nulls.any() else None))
    s = pc.binary_join_element_wise("a", pc.cast(pa.array(np.maximum(code, 0)), STRING), "")
    return with_nulls(s, nulls)


def entity_names(code: np.ndarray) -> pa.Array:
    """Entity names of the replay documents: five syllables, 'Zazeqo Kyvy'."""
    n = len(SYLLABLES)
    digits = [(code // n**i) % n for i in range(5)]
    syl = pa.array(list(SYLLABLES), STRING)
    cap = pa.array([s.capitalize() for s in SYLLABLES], STRING)
    parts = [
        cap.take(pa.array(digits[0])),
        syl.take(pa.array(digits[1])),
        syl.take(pa.array(digits[2])),
        pa.array([" "] * code.size, STRING),
        cap.take(pa.array(digits[3])),
        syl.take(pa.array(digits[4])),
    ]
    return pc.binary_join_element_wise(*parts, "")

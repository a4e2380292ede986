"""Sample-log generator for lara.

Writes the tables of the log contract (``shared/spec/log-contract.md``) for a
simulated creative-assistant deployment: a template-library search surface and
an assistant (``chat`` + ``editor_assistant``) sharing one retrieval system and
one user base, plus offline labels, per-stage spans and counterfactual replay
tables.  Behaviours imitate the LARA paper: low assistant trigger rate, missed
and misrouted retrievals, agent consumption hiding bad retrievals, chat
rewrites that are mostly downstream corrections, exports in a later editor
session that only lineage can credit, legacy logs without lineage, synthetic
traffic, and "bridge documents" in replays.

Layout
------
``<out>/<table>/dt=YYYY-MM-DD/part-0.parquet`` (or ``.jsonl`` / ``.jsonl.gz``).
The partition is the UTC day of the row's own event time: ``ts`` for
prompts, retrievals and actions, ``judged_at`` for the three label tables,
the prompt's day for ``stage_spans`` (no timestamp of its own).  Replay
tables and ``document_entities`` (no timestamps) all go to
``dt=<start_date>``.  Events can fall after the last generated day (late
actions, cross-session exports 1-3 days later, labels judged days later):
they are partitioned by their own day all the same.

With ``bad_rows=True`` defective rows are added (see :mod:`lara._bad_rows`):
kinds Parquet can express go into the Parquet part file itself, the others
(unparseable lines, bad timestamps, wrong JSON types, absent columns, a
string instead of a list) into an extra ``bad-rows.jsonl`` in the same
partition folder; in JSON Lines partitions they are interleaved into
``part-0.jsonl``.  Exact duplicates and conflicting versions are delivered
half inline and half in a ``late-0.<ext>`` file of the next day's partition
(same partition for the single-partition tables).  In ``fmt='mixed'``
partitions alternate Parquet / JSON Lines by table and day; single-partition
tables are split into ``part-0.parquet`` + ``part-1.jsonl``.

Parquet files are written without Arrow schema metadata: column types come
from the Parquet logical types (``timestamp[us, tz=UTC]``, ``list<string>``
for the asset lists, which are dictionary-encoded inside the file). Column
statistics (min / max) are written for timestamp and number columns only, and
the asset lists are stored uncompressed (other columns: Snappy); see
:func:`_parquet_options`. Any Parquet reader (DuckDB, pyarrow) reads them.

JSON Lines timestamps are ISO-8601 strings with a mix of ``Z``, ``+00:00``
and non-UTC offsets (``+02:00``, ``-05:00``, ``+05:30``) with the local time
shifted accordingly: consumers must normalise to UTC.

Determinism: same configuration (including seed) gives the same data
content, whatever the output format (formats only change where rows go).
All row-level work is vectorised (numpy / pyarrow); Python loops run over
tables, days, prompt positions within a session, templates or parameters.
Stages that do not depend on each other run in parallel threads and files are
written by a thread pool (``THREADS``, environment variable
``LARA_GENERATE_THREADS``): every stage has its own random stream
(``_rng(seed, stage)``) and only reads arrays of earlier stages, and every file
only its own rows, so the output does not depend on thread scheduling.

Manifest
--------
``<out>/_manifest.json`` (also returned by :func:`generate`) with keys:

``generator``, ``generator_version``, ``parameters`` (all config fields),
``layout`` (partitioning rules), ``tables`` (per table: ``rows_written`` =
raw rows on disk including injected rows, ``files``), ``expected_staging``
(per table ``{"clean", "exact_duplicates", "quarantined": {reason: n}}``
with raw rows = clean + exact_duplicates + sum(quarantined); reasons with
zero rows are omitted), ``bad_rows`` (injection log, see
:mod:`lara._bad_rows`), ``planted`` (``exact``, ``expected``,
``assumptions``, ``replay`` = {``parameters``, ``latent``, ``realised``}; see
:func:`compute_planted` and :func:`compute_replay_realised`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import gzip as _gzip
import json
import os
import shutil
import string
import sys
import threading
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from tqdm import tqdm

GENERATOR_VERSION = "1.0.0"

SURFACES = ("chat", "editor_assistant", "template_search")
CHAT, EDITOR, TEMPLATE = 0, 1, 2
ROLES = (
    "find",
    "browse",
    "operate",
    "generation_reference",
    "task_step",
    "context_dependent",
)
FIND, BROWSE, OPERATE = 0, 1, 2
KINDS = ("new_request", "rewrite", "follow_up")
NEW, REWRITE, FOLLOW = 0, 1, 2
ACTORS = ("user", "agent")
USER, AGENT = 0, 1
ACTION_TYPES = (
    "click",
    "select",
    "place",
    "edit",
    "follow_up",
    "export",
    "share",
    "download",
    "reject_result",
)
A_CLICK, A_SELECT, A_PLACE, A_EDIT, A_FOLLOW, A_EXPORT, A_SHARE, A_DOWNLOAD, A_REJECT = range(9)
JUDGES = ("llm", "human")
STAGES = ("planner", "retrieval", "generation", "other")
CF_STATUSES = ("ok", "agent_failed", "timeout")

TABLES = (
    "prompts",
    "retrievals",
    "actions",
    "relevance_labels",
    "prompt_labels",
    "goal_labels",
    "stage_spans",
    "replay_documents",
    "replay_queries",
    "document_entities",
)
REPLAY_TABLES = ("replay_documents", "replay_queries", "document_entities")

_STR = pa.string()
_TS = pa.timestamp("us", tz="UTC")
_I64 = pa.int64()
_F64 = pa.float64()
_BOOL = pa.bool_()
_LIST = pa.list_(pa.string())

SCHEMAS: dict[str, pa.Schema] = {
    "prompts": pa.schema(
        [
            ("prompt_id", _STR),
            ("session_guid", _STR),
            ("user_id", _STR),
            ("surface", _STR),
            ("ts", _TS),
            ("prompt_text", _STR),
            ("prompt_kind", _STR),
            ("is_synthetic", _BOOL),
        ]
    ),
    "retrievals": pa.schema(
        [
            ("retrieval_id", _STR),
            ("prompt_id", _STR),
            ("session_guid", _STR),
            ("ts", _TS),
            ("query_text", _STR),
            ("retrieval_role", _STR),
            ("returned_asset_ids", _LIST),
            ("displayed_asset_ids", _LIST),
        ]
    ),
    "actions": pa.schema(
        [
            ("action_id", _STR),
            ("session_guid", _STR),
            ("prompt_id", _STR),
            ("ts", _TS),
            ("actor", _STR),
            ("action_type", _STR),
            ("consumed_asset_id", _STR),
            ("source_retrieval_id", _STR),
            ("document_id", _STR),
        ]
    ),
    "relevance_labels": pa.schema(
        [
            ("retrieval_id", _STR),
            ("asset_id", _STR),
            ("grade", _I64),
            ("judge", _STR),
            ("judged_at", _TS),
        ]
    ),
    "prompt_labels": pa.schema(
        [
            ("prompt_id", _STR),
            ("has_retrieval_intent", _BOOL),
            ("retrieval_intent_count", _I64),
            ("judge", _STR),
            ("judged_at", _TS),
        ]
    ),
    "goal_labels": pa.schema(
        [
            ("prompt_id", _STR),
            ("goal_achieved", _BOOL),
            ("judge", _STR),
            ("judged_at", _TS),
        ]
    ),
    "stage_spans": pa.schema(
        [("prompt_id", _STR), ("stage", _STR), ("latency_ms", _I64), ("tokens", _I64)]
    ),
    "replay_documents": pa.schema(
        [
            ("trajectory_id", _STR),
            ("question_id", _STR),
            ("step_index", _I64),
            ("doc_id", _STR),
            ("is_relevant", _BOOL),
            ("reader_score_with", _F64),
            ("reader_score_without", _F64),
            ("proxy_score", _F64),
            ("answer_f1_original", _F64),
            ("answer_f1_counterfactual", _F64),
            ("next_recall_original", _F64),
            ("next_recall_counterfactual", _F64),
            ("turns_original", _I64),
            ("turns_counterfactual", _I64),
            ("counterfactual_status", _STR),
        ]
    ),
    "replay_queries": pa.schema(
        [("trajectory_id", _STR), ("step_index", _I64), ("query_text", _STR)]
    ),
    "document_entities": pa.schema([("doc_id", _STR), ("entity", _STR)]),
}

# in memory, asset lists and the enum columns of the log and label tables stay
# dictionary-encoded; files get SCHEMAS (list<string>, string)
_LIST_DICT = pa.list_(pa.dictionary(pa.int32(), pa.string()))
_ENUM = pa.dictionary(pa.int8(), pa.string())
_ENUM_COLUMNS = (
    "surface",
    "prompt_kind",
    "retrieval_role",
    "actor",
    "action_type",
    "judge",
    "stage",
)
_MEM_SCHEMAS = {
    t: pa.schema(
        [
            pa.field(f.name, _LIST_DICT)
            if f.type == _LIST
            else pa.field(f.name, _ENUM)
            if f.name in _ENUM_COLUMNS
            else f
            for f in schema
        ]
    )
    for t, schema in SCHEMAS.items()
}

_F1R = (
    "answer_f1_original",
    "answer_f1_counterfactual",
    "next_recall_original",
    "next_recall_counterfactual",
)

#: Validation rules of the contract as the generator understands them (used to
#: construct one-reason defects, and by the tests' reference validator).
#: ``ranges`` are inclusive ``(min, max)`` (``None`` = unbounded); ``ids`` are
#: id columns that must be non-blank when present; ``key`` is the conflict key
#: (``None``: only exact duplicates apply).
CONTRACT: dict[str, dict[str, Any]] = {
    "prompts": {
        "required": ["prompt_id", "session_guid", "user_id", "surface", "ts"],
        "ids": ["prompt_id", "session_guid", "user_id"],
        "enums": {"surface": SURFACES, "prompt_kind": KINDS},
        "ranges": {},
        "lists": [],
        "timestamps": ["ts"],
        "key": ["prompt_id"],
    },
    "retrievals": {
        "required": ["retrieval_id", "prompt_id", "session_guid", "ts", "returned_asset_ids"],
        "ids": ["retrieval_id", "prompt_id", "session_guid"],
        "enums": {"retrieval_role": ROLES},
        "ranges": {},
        "lists": ["returned_asset_ids", "displayed_asset_ids"],
        "timestamps": ["ts"],
        "key": ["retrieval_id"],
    },
    "actions": {
        "required": ["action_id", "session_guid", "ts", "actor", "action_type"],
        "ids": [
            "action_id",
            "session_guid",
            "prompt_id",
            "consumed_asset_id",
            "source_retrieval_id",
            "document_id",
        ],
        "enums": {"actor": ACTORS, "action_type": ACTION_TYPES},
        "ranges": {},
        "lists": [],
        "timestamps": ["ts"],
        "key": ["action_id"],
    },
    "relevance_labels": {
        "required": ["retrieval_id", "asset_id", "grade", "judge", "judged_at"],
        "ids": ["retrieval_id", "asset_id"],
        "enums": {"judge": JUDGES},
        "ranges": {"grade": (0, 3)},
        "lists": [],
        "timestamps": ["judged_at"],
        "key": ["retrieval_id", "asset_id", "judge", "judged_at"],
    },
    "prompt_labels": {
        "required": [
            "prompt_id",
            "has_retrieval_intent",
            "retrieval_intent_count",
            "judge",
            "judged_at",
        ],
        "ids": ["prompt_id"],
        "enums": {"judge": JUDGES},
        "ranges": {"retrieval_intent_count": (0, None)},
        "lists": [],
        "timestamps": ["judged_at"],
        "key": ["prompt_id", "judge", "judged_at"],
    },
    "goal_labels": {
        "required": ["prompt_id", "goal_achieved", "judge", "judged_at"],
        "ids": ["prompt_id"],
        "enums": {"judge": JUDGES},
        "ranges": {},
        "lists": [],
        "timestamps": ["judged_at"],
        "key": ["prompt_id", "judge", "judged_at"],
    },
    "stage_spans": {
        "required": ["prompt_id", "stage", "latency_ms", "tokens"],
        "ids": ["prompt_id"],
        "enums": {"stage": STAGES},
        "ranges": {"latency_ms": (0, None), "tokens": (0, None)},
        "lists": [],
        "timestamps": [],
        "key": None,
    },
    "replay_documents": {
        "required": [
            "trajectory_id",
            "question_id",
            "step_index",
            "doc_id",
            "is_relevant",
            "reader_score_with",
            "reader_score_without",
            "answer_f1_original",
            "next_recall_original",
            "turns_original",
            "counterfactual_status",
        ],
        "ids": ["trajectory_id", "question_id", "doc_id"],
        "enums": {"counterfactual_status": CF_STATUSES},
        "ranges": {
            "step_index": (0, None),
            "answer_f1_original": (0, 1),
            "answer_f1_counterfactual": (0, 1),
            "next_recall_original": (0, 1),
            "next_recall_counterfactual": (0, 1),
            "turns_original": (1, None),
            "turns_counterfactual": (1, None),
        },
        "lists": [],
        "timestamps": [],
        "key": ["trajectory_id", "step_index", "doc_id"],
    },
    "replay_queries": {
        "required": ["trajectory_id", "step_index", "query_text"],
        "ids": ["trajectory_id"],
        "enums": {},
        "ranges": {"step_index": (0, None)},
        "lists": [],
        "timestamps": [],
        "key": ["trajectory_id", "step_index"],
    },
    "document_entities": {
        "required": ["doc_id", "entity"],
        "ids": ["doc_id"],
        "enums": {},
        "ranges": {},
        "lists": [],
        "timestamps": [],
        "key": None,
    },
}

REASONS = (
    "json_parse_error",
    "missing_required",
    "empty_id",
    "invalid_timestamp",
    "invalid_type",
    "invalid_enum",
    "out_of_range",
    "invalid_list",
    "conflicting_duplicate",
)

US = 1_000_000
MS = 1_000
DAY_US = 86_400 * US

# --------------------------------------------------------------------------
# vocabularies (small on purpose: token Jaccard of re-searches is high, of
# unrelated queries low)
# --------------------------------------------------------------------------
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
_STRIDES = np.array([1, 2, 3], dtype=np.int64)

_SYL = ("za ze zo zu xa xe xo xu qa qe qo ky vy zy jo ju ja wu wy fy").split()
QWORDS = (
    "which year did the founder of band release album who directed film where was born "
    "author novel city river team won cup first largest company acquired museum located "
    "painter married"
).split()
N_ENTITY_CODES = len(_SYL) ** 5

# JSON timestamp renderings: suffix and offset in minutes
_TZ_SUFFIX = ("Z", "+00:00", "+02:00", "-05:00", "+05:30")
_TZ_OFFSET_MIN = np.array([0, 0, 120, -300, 330], dtype=np.int64)
_TZ_PROBS = np.array([0.5, 0.2, 0.15, 0.1, 0.05])

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


# --------------------------------------------------------------------------
# configuration
# --------------------------------------------------------------------------
@dataclass
class GeneratorConfig:
    """All tunable parameters of the sample generator (defaults in brackets).

    Output
        sessions [10_000]: client sessions with >= 1 prompt (cross-session
        export sessions come on top). days [7]: days over which sessions
        start. seed [42]. fmt ['parquet']: 'parquet' | 'jsonl' | 'mixed'.
        gzip [False]: JSON Lines files as ``.jsonl.gz``. bad_rows [False]:
        inject malformed / duplicate / conflicting rows. replay [True]: write
        the replay tables. start_date ['2026-08-01'].

    Population
        users_per_session [0.4]: user pool size / sessions (users return;
        activity is Zipf-skewed by user_activity_skew [1.0]).
        synthetic_share [0.03] of sessions are synthetic (is_synthetic true on
        all their prompts), from synthetic_users [20] bot users.
        is_synthetic_null_share [0.10] of non-synthetic prompts have a null
        is_synthetic (means false).
        template_to_assistant_ratio [8.0]: template_search sessions per
        assistant session. chat_share_of_assistant [0.55]: assistant sessions
        that are chat (rest editor_assistant).
        prompts_mean_chat [2.65], prompts_mean_editor [1.30],
        prompts_mean_template [3.0]: prompts per session (1 + Poisson);
        assistant overall ~2.04.
        legacy_share [0.05]: expected share of sessions (hence retrievals)
        logged by the legacy client: null retrieval_role, no
        source_retrieval_id, null prompt_kind; concentrated in the first days
        (weight exp(-day / legacy_decay_days [1.5])).
        prompt_kind_null_share [0.03] (on top of legacy sessions),
        prompt_text_null_share [0.05], query_text_null_share [0.02].

    Planner routing (assistant prompts)
        intent_rate_chat [0.12], intent_rate_editor [0.05]: latent
        has_retrieval_intent. missed_rate [0.35]: intent prompts that trigger
        nothing. misroute_rate [0.005]: no-intent prompts that trigger one
        retrieval. multi_intent_rate [0.06]: intent prompts with 2 (or, 20%
        of them, 3) intents, one retrieval per intent when not missed.

    Rewrites (per surface: chat, editor_assistant, template_search)
        research_prob [(0.55, 0.45, 0.65)]: next prompt is a re-search
        (``rewrite`` with a new retrieval of a similar query, within 600 s)
        when the previous prompt's retrievals were not used.
        correction_prob [(0.72, 0.45, 0.25)]: next prompt is a downstream
        correction (``rewrite``, "make it bluer") after a used retrieval or a
        prompt without retrieval. follow_up_prob [(0.12, 0.10, 0.0)].

    Retrievals
        role_mix_chat [(.30, .15, .15, .20, .12, .08)], role_mix_editor
        [(.20, .10, .30, .20, .12, .08)], role_mix_template
        [(.60, .35, 0, 0, .03, .02)]: role shares in ROLES order (find,
        browse, operate, generation_reference, task_step, context_dependent);
        a re-search keeps the role of the retrieval it repeats.
        good_prob_by_role [(.75, .70, .70, .65, .60, .55)]:
        latent quality. empty_rate [0.015]. list_len_template [(12, 36)],
        list_len_assistant [(10, 30)] (inclusive ranges).
        repeated_id_rate [0.003]: lists with one repeated asset id.
        topic_skew [0.8], asset_start_p [0.08]: popularity skew of topics and
        of assets within a topic.

    Template-search behaviour
        click_mean_good [1.4], click_mean_bad [0.6] (Poisson clicks per grid,
        rank ~ geometric(click_rank_p [0.3])), select_prob_good [0.55],
        select_prob_bad [0.15], place_prob [0.7], user_edit_prob [0.5],
        asset_download_prob [0.1].

    Assistant behaviour
        acr_prob_good [0.7], acr_prob_bad [0.35], acr_prob_misroute [0.1]:
        agent consumes a returned asset (agent place, + agent edit with
        agent_edit_prob [0.5]). substitution_prob [0.5]: for find/operate
        retrievals that are bad and not consumed, the agent places an asset
        NOT in the list. generative_place_prob [0.3]: same for other roles
        (not a failure there). display_prob_consumed [0.5],
        display_prob_unconsumed [0.85]: a few assets shown to the user.
        assistant_click_prob [0.35], assistant_select_prob_good [0.3],
        assistant_select_prob_bad [0.1], user_place_after_select [0.6],
        follow_up_action_prob [0.12], user_edit_agent_placed [0.45],
        reject_prob_good [0.05], reject_prob_bad [0.35],
        reject_with_source_share [0.6], agent_generative_edit_prob [0.7] and
        user_doc_edit_prob [0.2] (prompts without retrieval).

    Outcomes
        export_prob_with_placement [0.35], export_prob_without_placement
        [0.2]: document-level export/share/download at the end of the
        session. cross_session_export_prob [0.3]: non-legacy, non-synthetic
        sessions with a retrieval placement get a later editor session
        (new session_guid, null prompt_id) 1..cross_session_max_days [3] days
        later exporting the same document_id.

    Labels
        relevance_label_share [0.2] of non-empty retrievals, judged on the top
        relevance_k [10] with coverage relevance_coverage [0.92], plus an
        unreturned relevant asset with unreturned_relevant_prob [0.15];
        human_judge_share [0.15] of batches judged by humans;
        double_judge_prob [0.1]: the other judge kind also grades the pair;
        rejudge_prob [0.08]: the same kind re-grades later.
        prompt_label_max [300], prompt_label_frac [0.05] of assistant prompts,
        prompt_label_intent_share [0.5] of the sample drawn from prompts with
        intent or a retrieval, prompt_label_human_prob [0.25],
        prompt_label_llm_error [0.08]. goal_label_share [0.1] of
        retrieval-turn prompts. stage_span_coverage [0.9] of assistant
        prompts.

    Replay
        replay_trajectories [None -> max(50, sessions // 20)], replay_steps
        [(3, 8)], replay_docs_per_step [(2, 5)], replay_relevant_share [0.3],
        replay_rho [-0.03]: target Spearman(CTU, SRU) (Gaussian copula),
        proxy_rho [0.05]: target Spearman(CTU, proxy), proxy_sru_rho [0.6],
        proxy_null_share [0.1], replay_failure_share [0.03], replay_turn_cap
        [100], oer_p_discriminative [0.4], oer_p_non_discriminative [0.1],
        replay_shared_entities [(3, 6)], replay_unique_entities [(1, 3)],
        replay_shared_entity_doc_prob [0.4].

    Bad rows
        bad_rows_per_kind [2] per reason and table where it applies;
        exact_duplicates_per_table [2]; conflicts_per_table [2];
        unnormalised_enums_per_table [2] (valid enum values with odd case or
        spaces, e.g. ``" Chat "``, in good rows). All four apply only with
        ``bad_rows=True``; without it every written row is clean.
    """

    sessions: int = 10_000
    days: int = 7
    seed: int = 42
    fmt: str = "parquet"
    gzip: bool = False
    bad_rows: bool = False
    replay: bool = True
    start_date: str = "2026-08-01"
    # population
    users_per_session: float = 0.4
    user_activity_skew: float = 1.0
    synthetic_share: float = 0.03
    synthetic_users: int = 20
    is_synthetic_null_share: float = 0.10
    template_to_assistant_ratio: float = 8.0
    chat_share_of_assistant: float = 0.55
    prompts_mean_chat: float = 2.65
    prompts_mean_editor: float = 1.30
    prompts_mean_template: float = 3.0
    legacy_share: float = 0.05
    legacy_decay_days: float = 1.5
    prompt_kind_null_share: float = 0.03
    prompt_text_null_share: float = 0.05
    query_text_null_share: float = 0.02
    # routing
    intent_rate_chat: float = 0.12
    intent_rate_editor: float = 0.05
    missed_rate: float = 0.35
    misroute_rate: float = 0.005
    multi_intent_rate: float = 0.06
    # rewrites (chat, editor_assistant, template_search)
    research_prob: tuple[float, float, float] = (0.55, 0.45, 0.65)
    correction_prob: tuple[float, float, float] = (0.72, 0.45, 0.25)
    follow_up_prob: tuple[float, float, float] = (0.12, 0.10, 0.0)
    # retrievals
    role_mix_chat: tuple[float, ...] = (0.30, 0.15, 0.15, 0.20, 0.12, 0.08)
    role_mix_editor: tuple[float, ...] = (0.20, 0.10, 0.30, 0.20, 0.12, 0.08)
    role_mix_template: tuple[float, ...] = (0.60, 0.35, 0.0, 0.0, 0.03, 0.02)
    good_prob_by_role: tuple[float, ...] = (0.75, 0.70, 0.70, 0.65, 0.60, 0.55)
    empty_rate: float = 0.015
    list_len_template: tuple[int, int] = (12, 36)
    list_len_assistant: tuple[int, int] = (10, 30)
    repeated_id_rate: float = 0.003
    topic_skew: float = 0.8
    asset_start_p: float = 0.08
    # template behaviour
    click_mean_good: float = 1.4
    click_mean_bad: float = 0.6
    click_rank_p: float = 0.3
    select_prob_good: float = 0.55
    select_prob_bad: float = 0.15
    place_prob: float = 0.7
    user_edit_prob: float = 0.5
    asset_download_prob: float = 0.1
    # assistant behaviour
    acr_prob_good: float = 0.7
    acr_prob_bad: float = 0.35
    acr_prob_misroute: float = 0.1
    agent_edit_prob: float = 0.5
    substitution_prob: float = 0.5
    generative_place_prob: float = 0.3
    display_prob_consumed: float = 0.5
    display_prob_unconsumed: float = 0.85
    assistant_click_prob: float = 0.35
    assistant_select_prob_good: float = 0.3
    assistant_select_prob_bad: float = 0.1
    user_place_after_select: float = 0.6
    follow_up_action_prob: float = 0.12
    user_edit_agent_placed: float = 0.45
    reject_prob_good: float = 0.05
    reject_prob_bad: float = 0.35
    reject_with_source_share: float = 0.6
    agent_generative_edit_prob: float = 0.7
    user_doc_edit_prob: float = 0.2
    # outcomes
    export_prob_with_placement: float = 0.35
    export_prob_without_placement: float = 0.2
    cross_session_export_prob: float = 0.3
    cross_session_max_days: int = 3
    # labels
    relevance_label_share: float = 0.2
    relevance_k: int = 10
    relevance_coverage: float = 0.92
    unreturned_relevant_prob: float = 0.15
    human_judge_share: float = 0.15
    double_judge_prob: float = 0.1
    rejudge_prob: float = 0.08
    prompt_label_max: int = 300
    prompt_label_frac: float = 0.05
    prompt_label_intent_share: float = 0.5
    prompt_label_human_prob: float = 0.25
    prompt_label_llm_error: float = 0.08
    goal_label_share: float = 0.1
    stage_span_coverage: float = 0.9
    # replay
    replay_trajectories: int | None = None
    replay_steps: tuple[int, int] = (3, 8)
    replay_docs_per_step: tuple[int, int] = (2, 5)
    replay_relevant_share: float = 0.3
    replay_rho: float = -0.03
    proxy_rho: float = 0.05
    proxy_sru_rho: float = 0.6
    proxy_null_share: float = 0.1
    replay_failure_share: float = 0.03
    replay_turn_cap: int = 100
    oer_p_discriminative: float = 0.4
    oer_p_non_discriminative: float = 0.1
    replay_shared_entities: tuple[int, int] = (3, 6)
    replay_unique_entities: tuple[int, int] = (1, 3)
    replay_shared_entity_doc_prob: float = 0.4
    # bad rows
    bad_rows_per_kind: int = 2
    exact_duplicates_per_table: int = 2
    conflicts_per_table: int = 2
    unnormalised_enums_per_table: int = 2

    def validate(self) -> None:
        """Raise ValueError on inconsistent parameters."""
        if self.sessions < 1:
            raise ValueError("sessions must be >= 1")
        if self.days < 1:
            raise ValueError("days must be >= 1")
        if self.fmt not in ("parquet", "jsonl", "mixed"):
            raise ValueError("fmt must be 'parquet', 'jsonl' or 'mixed'")
        _dt.date.fromisoformat(str(self.start_date))
        for name in ("role_mix_chat", "role_mix_editor", "role_mix_template"):
            mix = np.asarray(getattr(self, name), dtype=float)
            if mix.shape != (len(ROLES),) or mix.min() < 0 or mix.sum() <= 0:
                raise ValueError(f"{name} must be {len(ROLES)} non-negative shares")
        for name in ("list_len_template", "list_len_assistant"):
            lo, hi = getattr(self, name)
            if not (1 <= lo <= hi <= ASSETS_PER_TOPIC - 30):
                raise ValueError(f"{name} out of range")
        lo, hi = self.replay_steps
        dlo, dhi = self.replay_docs_per_step
        if not (2 <= lo <= hi and 1 <= dlo <= dhi and hi * dhi <= _REPLAY_POOL):
            raise ValueError(f"replay_steps * replay_docs_per_step must be <= {_REPLAY_POOL}")
        for name in ("replay_rho", "proxy_rho", "proxy_sru_rho"):
            if not -1 < getattr(self, name) < 1:
                raise ValueError(f"{name} must be in (-1, 1)")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GeneratorConfig:
        """Build from a dict (e.g. the manifest's ``parameters``)."""
        names = {f.name for f in dataclasses.fields(cls)}
        kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items() if k in names}
        return cls(**kw)


_REPLAY_POOL = 41  # documents per question (prime)

#: parallelism (environment variable LARA_GENERATE_THREADS overrides it): with n >= 2,
#: stages that do not depend on each other run in n - 1 worker threads beside the main
#: thread, and files are written by n threads while the simulation goes on; 1 = stage
#: by stage with synchronous writes (least memory). The output is the same for any n.
THREADS = 2


def _threads() -> int:
    return max(1, int(os.environ.get("LARA_GENERATE_THREADS") or THREADS))


# --------------------------------------------------------------------------
# small vectorised helpers
# --------------------------------------------------------------------------
def _rng(seed: int, stage: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(stage.encode())]))


_MIX_MUL = np.uint64(0x9E3779B97F4A7C15 & ((1 << 40) - 1) | 1)
_MASK40 = np.uint64((1 << 40) - 1)


def _ids(prefix: str, idx: np.ndarray, salt: int) -> pa.Array:
    """Unique pseudo-random decimal ids ``prefix + str(bijection(idx))``."""
    h = (idx.astype(np.uint64) * _MIX_MUL + np.uint64(salt)) & _MASK40
    return pc.binary_join_element_wise(prefix, pc.cast(pa.array(h), _STR), "")


_CATALOGUE: pa.Array | None = None


def _catalogue() -> pa.Array:
    """Ids of the catalogue assets (code -> 'a' + code)."""
    global _CATALOGUE
    if _CATALOGUE is None:
        ncat = N_TOPICS * ASSETS_PER_TOPIC
        _CATALOGUE = pc.binary_join_element_wise(
            "a", pc.cast(pa.array(np.arange(ncat, dtype=np.int64)), _STR), ""
        )
    return _CATALOGUE


def _asset_dict(code: np.ndarray) -> pa.DictionaryArray:
    """Catalogue asset ids, dictionary-encoded (memory: 4 bytes per id)."""
    return pa.DictionaryArray.from_arrays(pa.array(code.astype(np.int32)), _catalogue())


def _asset_strings(code: np.ndarray) -> pa.Array:
    """Asset ids: 'a' + code; code < 0 means null."""
    cat = _catalogue()
    nulls = code < 0
    if code.size == 0 or code.max() < len(cat):
        return cat.take(pa.array(code, mask=nulls if nulls.any() else None))
    s = pc.binary_join_element_wise("a", pc.cast(pa.array(np.maximum(code, 0)), _STR), "")
    return _with_nulls(s, nulls)


def _with_nulls(arr: pa.Array, null_mask: np.ndarray) -> pa.Array:
    if not null_mask.any():
        return arr
    return pc.if_else(pa.array(null_mask), pa.scalar(None, arr.type), arr)


def _take_vocab(vocab: tuple[str, ...] | list[str], idx: np.ndarray) -> pa.Array:
    return pa.array(list(vocab), _STR).take(pa.array(idx.astype(np.int64)))


def _enum(
    vocab: tuple[str, ...], idx: np.ndarray, null_mask: np.ndarray | None = None
) -> pa.DictionaryArray:
    """Like ``_with_nulls(_take_vocab(vocab, idx), null_mask)``, dictionary-encoded
    (int8 codes; written to files as plain strings)."""
    mask = null_mask if null_mask is not None and null_mask.any() else None
    return pa.DictionaryArray.from_arrays(
        pa.array(idx.astype(np.int8), mask=mask), pa.array(list(vocab), _STR)
    )


def _explode(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row index repeated ``counts`` times, and position within the row."""
    counts = counts.astype(np.int64)
    idx = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    starts = np.cumsum(counts) - counts
    return idx, np.arange(idx.size, dtype=np.int64) - starts[idx]


def _list_codes(
    n_list: np.ndarray,
    topic: np.ndarray,
    start: np.ndarray,
    stride: np.ndarray,
    dupk1: np.ndarray,
    dupk2: np.ndarray,
    offsets: np.ndarray,
) -> np.ndarray:
    """Asset codes of all returned lists, concatenated in row order (see _Gen.asset_at)."""
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


def _compact(
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


class _Gathered:
    """``{k: arrays[k][order]}``, each array gathered on first use (less memory)."""

    def __init__(self, arrays: dict[str, np.ndarray], order: np.ndarray):
        self.arrays = arrays
        self.order = order
        self.done: dict[str, np.ndarray] = {}

    def __getitem__(self, key: str) -> np.ndarray:
        if key not in self.done:
            self.done[key] = self.arrays[key][self.order]
        return self.done[key]


def _ts_array(ts_us: np.ndarray) -> pa.Array:
    return pa.array(ts_us.astype(np.int64), _I64).cast(_TS)


def _round_ms(x: np.ndarray) -> np.ndarray:
    return (np.asarray(x, dtype=np.float64) // MS).astype(np.int64) * MS


def _render(
    templates: tuple[str, ...], choice: np.ndarray, fields: dict[str, pa.Array]
) -> pa.Array:
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
            pieces.insert(0, pa.array([""] * idx.size, _STR))
        arr_parts.append(pc.binary_join_element_wise(*pieces, ""))
        idx_parts.append(idx)
    if not idx_parts:
        return pa.array([], _STR)
    order = np.concatenate(idx_parts)
    inv = np.empty(n, dtype=np.int64)
    inv[order] = np.arange(n)
    return pa.concat_arrays(arr_parts).take(pa.array(inv))


def _ndtr(z: np.ndarray) -> np.ndarray:
    try:
        from scipy.special import ndtr

        return ndtr(z)
    except ImportError:  # pragma: no cover - scipy is a declared dependency
        import math

        f = np.frompyfunc(lambda v: 0.5 * math.erfc(-v / math.sqrt(2.0)), 1, 1)
        return f(z).astype(np.float64)


def _spearman(x: np.ndarray, y: np.ndarray) -> tuple[float | None, float | None]:
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


def _midrank_pct(x: np.ndarray) -> np.ndarray:
    """Mid-rank percentile: (strictly below + half of equal, itself included) / n."""
    r = pd.Series(x).rank(method="average").to_numpy()
    return (r - 0.5) / x.size


def _pick(rng: np.random.Generator, cand: np.ndarray, k: int) -> np.ndarray:
    """Up to k distinct candidates (deterministic, sorted by position)."""
    if cand.size <= k:
        return np.sort(cand)
    return np.sort(rng.choice(cand, size=k, replace=False))


# --------------------------------------------------------------------------
# the generator
# --------------------------------------------------------------------------
class _Gen:
    """Holds the latent arrays of one generation run."""

    def __init__(self, cfg: GeneratorConfig):
        self.cfg = cfg
        self.start = _dt.date.fromisoformat(str(cfg.start_date))
        epoch = _dt.datetime(self.start.year, self.start.month, self.start.day, tzinfo=_dt.UTC)
        self.base_us = int(epoch.timestamp()) * US
        self.tables: dict[str, pa.Table] = {}
        self.dt: dict[str, np.ndarray] = {}  # partition day index per row
        self.tz: dict[str, np.ndarray] = {}  # JSON offset choice per row
        self.cand: dict[str, np.ndarray] = {}  # conflict-victim candidates (row idx)
        self.plain: dict[str, np.ndarray] = {}  # rows safe for dups / enum variants
        self.victims: dict[str, np.ndarray] = {}
        self._id_cache: dict[str, pa.Array] = {}
        self.released: dict[str, int] = {}  # rows of tables freed once written
        self._id_locks = {kind: threading.Lock() for kind in self._ID_KINDS}

    # ---------------------------------------------------------------- sessions
    def sessions(self) -> None:
        cfg = self.cfg
        rng = _rng(cfg.seed, "sessions")
        n = cfg.sessions
        self.S = n
        self.syn = rng.random(n) < cfg.synthetic_share
        p_tmpl = cfg.template_to_assistant_ratio / (cfg.template_to_assistant_ratio + 1.0)
        u = rng.random(n)
        chat = rng.random(n) < cfg.chat_share_of_assistant
        self.surface = np.where(u < p_tmpl, TEMPLATE, np.where(chat, CHAT, EDITOR)).astype(np.int8)
        means = np.array(
            [cfg.prompts_mean_chat, cfg.prompts_mean_editor, cfg.prompts_mean_template]
        )
        self.n_prompts = 1 + rng.poisson(np.maximum(means[self.surface] - 1.0, 0.0))
        self.day = rng.integers(0, cfg.days, n)
        # diurnal: 70% around 14:00 UTC, 30% uniform
        tod = np.where(
            rng.random(n) < 0.7,
            rng.normal(14 * 3600, 3.5 * 3600, n) % 86_400,
            rng.uniform(0, 86_400, n),
        )
        self.start_us = self.base_us + self.day * DAY_US + _round_ms(tod * US)
        w = np.exp(-np.arange(cfg.days) / max(cfg.legacy_decay_days, 1e-9))
        p_leg = np.minimum(1.0, cfg.legacy_share * cfg.days * w / w.sum())
        self.legacy = rng.random(n) < p_leg[self.day]
        n_users = max(1, round(n * cfg.users_per_session))
        wu = 1.0 / np.arange(1, n_users + 1) ** cfg.user_activity_skew
        cdf = np.cumsum(wu) / wu.sum()
        perm = rng.permutation(n_users)
        self.user = perm[np.minimum(np.searchsorted(cdf, rng.random(n)), n_users - 1)]
        bots = rng.integers(0, max(1, cfg.synthetic_users), n)
        self.user = np.where(self.syn, n_users + bots, self.user)
        self.n_users = n_users
        # topic popularity
        wt = 1.0 / np.arange(1, N_TOPICS + 1) ** cfg.topic_skew
        self.topic_cdf = np.cumsum(wt) / wt.sum()
        self.topic_perm = rng.permutation(N_TOPICS)

    def _draw_topic(self, rng: np.random.Generator, n: int) -> np.ndarray:
        r = np.minimum(np.searchsorted(self.topic_cdf, rng.random(n)), N_TOPICS - 1)
        return self.topic_perm[r]

    # ------------------------------------------------------------ prompt loop
    def prompt_loop(self) -> None:
        """Simulate prompts position by position (vectorised over sessions)."""
        cfg = self.cfg
        rng = _rng(cfg.seed, "prompts")
        S = self.S
        nm = len(MODIFIERS)
        research_p = np.array(cfg.research_prob)
        corr_p = np.array(cfg.correction_prob)
        follow_p = np.array(cfg.follow_up_prob)
        mixes = np.array([cfg.role_mix_chat, cfg.role_mix_editor, cfg.role_mix_template], float)
        role_cum = np.cumsum(mixes / mixes.sum(1, keepdims=True), axis=1)
        role_cum[:, -1] = 1.0 + 1e-9
        good_p = np.array(cfg.good_prob_by_role)
        lo_t, hi_t = cfg.list_len_template
        lo_a, hi_a = cfg.list_len_assistant

        cur_topic = np.zeros(S, np.int64)
        cur_m1 = np.zeros(S, np.int64)
        cur_m2 = np.zeros(S, np.int64)
        prev_has_ret = np.zeros(S, bool)
        prev_used = np.zeros(S, bool)
        prev_end = np.zeros(S, np.int64)
        last_role = np.zeros(S, np.int64)
        P_chunks: list[dict[str, np.ndarray]] = []
        R_chunks: list[dict[str, np.ndarray]] = []
        p_off = 0
        max_j = int(self.n_prompts.max())
        for j in range(max_j):
            act = np.flatnonzero(self.n_prompts > j)
            m = act.size
            surf = self.surface[act]
            assist = surf != TEMPLATE
            rtype = np.zeros(m, np.int8)  # 0 none, 1 re-search, 2 correction
            if j == 0:
                kind = np.full(m, NEW, np.int8)
                ts = self.start_us[act]
            else:
                research_ok = prev_has_ret[act] & ~prev_used[act]
                is_research = research_ok & (rng.random(m) < research_p[surf])
                is_corr = ~research_ok & (rng.random(m) < corr_p[surf])
                is_follow = ~is_research & ~is_corr & (rng.random(m) < follow_p[surf])
                kind = np.where(
                    is_research | is_corr, REWRITE, np.where(is_follow, FOLLOW, NEW)
                ).astype(np.int8)
                rtype = np.where(is_research, 1, np.where(is_corr, 2, 0)).astype(np.int8)
                gap = np.where(
                    is_research,
                    rng.uniform(5, 150, m),
                    10 + np.minimum(rng.exponential(90.0, m), 3600.0),
                )
                ts = prev_end[act] + _round_ms(gap * US)
            # topic and modifiers
            is_new = kind == NEW
            topic = np.where(is_new, self._draw_topic(rng, m), cur_topic[act])
            new_m1 = rng.integers(0, nm, m)
            new_m2 = (new_m1 + 1 + rng.integers(0, nm - 1, m)) % nm
            m1 = np.where(is_new, new_m1, cur_m1[act])
            alt_m2 = (m1 + 1 + rng.integers(0, nm - 1, m)) % nm
            m2 = np.where(is_new, new_m2, np.where(rtype == 1, alt_m2, cur_m2[act]))
            m3 = rng.integers(0, nm, m)
            # routing
            p_int = np.where(surf == CHAT, cfg.intent_rate_chat, cfg.intent_rate_editor)
            draws = assist & (rtype == 0)
            has_int = (
                np.where(rtype == 1, True, draws & (rng.random(m) < p_int)) | ~assist
            )  # template searches always have intent
            multi = assist & has_int & (rtype == 0) & (rng.random(m) < cfg.multi_intent_rate)
            count = np.where(has_int, 1 + multi * (1 + (rng.random(m) < 0.2)), 0).astype(np.int64)
            missed = assist & has_int & (rtype == 0) & (rng.random(m) < cfg.missed_rate)
            misroute = assist & ~has_int & (rng.random(m) < cfg.misroute_rate)
            n_ret = np.where(
                assist, np.where(has_int, np.where(missed, 0, count), misroute.astype(int)), 1
            ).astype(np.int64)
            # retrievals of this position
            rp, k = _explode(n_ret)
            nr = rp.size
            rsess = act[rp]
            rsurf = surf[rp]
            rassist = rsurf != TEMPLATE
            r_topic = np.where(k == 0, topic[rp], (topic[rp] + 97 * k) % N_TOPICS)
            r_m1 = np.where(k == 0, m1[rp], rng.integers(0, nm, nr))
            r_m2 = np.where(k == 0, m2[rp], rng.integers(0, nm, nr))
            r_ts = ts[rp] + 800 * MS + k * 3000 * MS + _round_ms(rng.uniform(0, 1500, nr) * MS)
            u_role = rng.random(nr)
            drawn_role = (u_role[:, None] > role_cum[rsurf]).sum(1)
            role = np.where(rtype[rp] == 1, last_role[rsess], drawn_role).astype(np.int64)
            empty = rng.random(nr) < cfg.empty_rate
            n_list = np.where(
                empty,
                0,
                np.where(
                    rassist, rng.integers(lo_a, hi_a + 1, nr), rng.integers(lo_t, hi_t + 1, nr)
                ),
            ).astype(np.int64)
            good = ~empty & (rng.random(nr) < good_p[role])
            start = np.minimum(rng.geometric(cfg.asset_start_p, nr) - 1, ASSETS_PER_TOPIC - 1)
            stride = _STRIDES[rng.integers(0, _STRIDES.size, nr)]
            has_dup = (n_list >= 3) & (rng.random(nr) < cfg.repeated_id_rate)
            k1 = rng.integers(0, np.maximum(n_list - 1, 1))
            k2 = k1 + 1 + rng.integers(0, np.maximum(n_list - k1 - 1, 1))
            dupk1 = np.where(has_dup, k1, -1)
            dupk2 = np.where(has_dup, np.minimum(k2, n_list - 1), -1)
            r_misroute = misroute[rp]
            nonempty = n_list > 0
            tmpl = ~rassist
            # template behaviour
            n_click = np.where(
                tmpl & nonempty,
                rng.poisson(np.where(good, cfg.click_mean_good, cfg.click_mean_bad)),
                0,
            )
            sel = (n_click > 0) & (
                rng.random(nr) < np.where(good, cfg.select_prob_good, cfg.select_prob_bad)
            )
            uplace = sel & (rng.random(nr) < cfg.place_prob)
            uedit = uplace & (rng.random(nr) < cfg.user_edit_prob)
            adl = sel & (rng.random(nr) < cfg.asset_download_prob)
            # assistant behaviour
            p_acr = np.where(
                r_misroute,
                cfg.acr_prob_misroute,
                np.where(good, cfg.acr_prob_good, cfg.acr_prob_bad),
            )
            consumed = rassist & nonempty & (rng.random(nr) < p_acr)
            agent_edit = consumed & (rng.random(nr) < cfg.agent_edit_prob)
            sub_role = (role == FIND) | (role == OPERATE)
            subst = (
                rassist & ~consumed & sub_role & ~good & (rng.random(nr) < cfg.substitution_prob)
            )
            gen_place = (
                rassist & ~consumed & ~sub_role & (rng.random(nr) < cfg.generative_place_prob)
            )
            p_disp = np.where(consumed, cfg.display_prob_consumed, cfg.display_prob_unconsumed)
            disp_n = np.where(
                rassist & nonempty & (rng.random(nr) < p_disp),
                np.minimum(rng.integers(2, 6, nr), np.minimum(n_list, 10)),
                0,
            )
            aclick = (disp_n > 0) & (rng.random(nr) < cfg.assistant_click_prob)
            asel = (disp_n > 0) & (
                rng.random(nr)
                < np.where(good, cfg.assistant_select_prob_good, cfg.assistant_select_prob_bad)
            )
            aplace = asel & (rng.random(nr) < cfg.user_place_after_select)
            afollow = (
                rassist & (consumed | (disp_n > 0)) & (rng.random(nr) < cfg.follow_up_action_prob)
            )
            uedit_ag = consumed & (rng.random(nr) < cfg.user_edit_agent_placed)
            reject = rassist & (
                rng.random(nr) < np.where(good, cfg.reject_prob_good, cfg.reject_prob_bad)
            )
            reject_src = reject & (rng.random(nr) < cfg.reject_with_source_share)
            used = consumed | sel | asel | afollow
            R_chunks.append(
                _compact(
                    dict(
                        sess=rsess,
                        prompt=p_off + rp,
                        k=k,
                        ts=r_ts,
                        surface=rsurf,
                        role=role,
                        topic=r_topic,
                        m1=r_m1,
                        m2=r_m2,
                        n_list=n_list,
                        empty=empty,
                        good=good,
                        start=start,
                        stride=stride,
                        dupk1=dupk1,
                        dupk2=dupk2,
                        misroute=r_misroute,
                        n_click=n_click,
                        sel=sel,
                        uplace=uplace,
                        uedit=uedit,
                        adl=adl,
                        consumed=consumed,
                        agent_edit=agent_edit,
                        subst=subst,
                        gen_place=gen_place,
                        disp_n=disp_n,
                        aclick=aclick,
                        asel=asel,
                        aplace=aplace,
                        afollow=afollow,
                        uedit_ag=uedit_ag,
                        reject=reject,
                        reject_src=reject_src,
                        used=used,
                    )
                )
            )
            used_p = np.bincount(rp, weights=used, minlength=m) > 0
            L = np.where(n_ret > 0, ts + 800 * MS + (n_ret - 1) * 3000 * MS + 1500 * MS, ts)
            no_ret = n_ret == 0
            gen_edit = assist & no_ret & (rng.random(m) < cfg.agent_generative_edit_prob)
            doc_edit = assist & no_ret & (rng.random(m) < cfg.user_doc_edit_prob)
            end = np.where(
                no_ret,
                ts + _round_ms(rng.uniform(140, 230, m) * US),
                L + _round_ms(rng.uniform(230, 240, m) * US),
            )
            P_chunks.append(
                _compact(
                    dict(
                        sess=act,
                        j=np.full(m, j, np.int64),
                        ts=ts,
                        kind=kind,
                        rtype=rtype,
                        topic=topic,
                        m1=m1,
                        m2=m2,
                        m3=m3,
                        has_int=has_int & assist,
                        count=np.where(assist, count, 0),
                        missed=missed,
                        misroute=misroute,
                        n_ret=n_ret,
                        L=L,
                        end=end,
                        gen_edit=gen_edit,
                        doc_edit=doc_edit,
                        tmpl_choice=rng.integers(0, 1000, m),
                    )
                )
            )
            # update session state
            cur_topic[act] = topic
            cur_m1[act] = m1
            cur_m2[act] = m2
            prev_has_ret[act] = n_ret > 0
            prev_used[act] = used_p
            prev_end[act] = end
            if nr:
                last_idx = np.cumsum(n_ret)[n_ret > 0] - 1
                last_role[act[n_ret > 0]] = role[last_idx]
            p_off += m

        # chunks are compacted one by one (same arrays, half the peak memory)
        self.P = {k: np.concatenate([c.pop(k) for c in P_chunks]) for k in list(P_chunks[0])}
        del P_chunks
        self.R = {k: np.concatenate([c.pop(k) for c in R_chunks]) for k in list(R_chunks[0])}
        del R_chunks
        P, R = self.P, self.R
        P["surface"] = self.surface[P["sess"]]
        P["syn"] = self.syn[P["sess"]]
        P["legacy"] = self.legacy[P["sess"]]
        R["syn"] = self.syn[R["sess"]]
        R["legacy"] = self.legacy[R["sess"]]
        self.nP = P["sess"].size
        self.nR = R["sess"].size
        # last prompt of each session (prompt index)
        last = np.full(self.S, -1, np.int64)
        order = np.lexsort((P["j"], P["sess"]))
        last[P["sess"][order]] = order  # later j overwrite earlier ones (sorted)
        self.last_prompt = last

    # ---------------------------------------------------------------- assets
    def asset_at(self, r: np.ndarray, rank: np.ndarray) -> np.ndarray:
        R = self.R
        rank = np.where(rank == R["dupk2"][r], R["dupk1"][r], rank)
        pos = (R["start"][r] + rank * R["stride"][r]) % ASSETS_PER_TOPIC
        return R["topic"][r] * ASSETS_PER_TOPIC + pos

    def displayed_ranks(self) -> None:
        """Ranks shown to the user for assistant retrievals (few, agent-chosen order)."""
        rng = _rng(self.cfg.seed, "displayed")
        R = self.R
        idx = np.flatnonzero(R["disp_n"] > 0)
        keys = rng.random((idx.size, 10))
        keys[np.arange(10)[None, :] >= R["n_list"][idx][:, None]] = np.inf
        ranks = np.argsort(keys, axis=1, kind="stable")[:, :5]
        self.disp_idx = idx
        self.disp_ranks = ranks  # first disp_n columns are valid

    # -------------------------------------------------------------- actions
    def actions(self) -> None:
        cfg = self.cfg
        rng = _rng(cfg.seed, "actions")
        R, P = self.R, self.P
        L_r = P["L"][R["prompt"]]
        blocks: list[dict[str, np.ndarray]] = []
        gen_counter = [0]

        def block(sel_r, actor, atype, t_lo, t_hi, asset, source, doc, ref=None, prompt=None):
            """One action per selected row; times L + U(t_lo, t_hi) seconds."""
            n = sel_r.size
            base = L_r[sel_r] if ref is None else ref
            ts = base + _round_ms(rng.uniform(t_lo, t_hi, n) * US)
            blocks.append(
                dict(
                    sess=R["sess"][sel_r] if prompt is None else P["sess"][prompt],
                    prompt=R["prompt"][sel_r] if prompt is None else prompt,
                    ts=ts,
                    actor=np.full(n, actor, np.int8),
                    atype=np.full(n, atype, np.int8),
                    asset=asset,
                    source=source,
                    doc=doc,
                    ret=sel_r if prompt is None else np.full(n, -1, np.int64),
                )
            )

        def gen_assets(n):
            out = ASSET_GEN_BASE + gen_counter[0] + np.arange(n, dtype=np.int64)
            gen_counter[0] += n
            return out

        none = lambda n: np.full(n, -1, np.int64)  # noqa: E731
        sess_doc = lambda r: R["sess"][r]  # noqa: E731  document = session index

        # template clicks
        cr, ci = _explode(R["n_click"])
        n_l = R["n_list"][cr]
        rank = np.minimum(rng.geometric(cfg.click_rank_p, cr.size) - 1, n_l - 1)
        click_asset = self.asset_at(cr, rank)
        block(cr, USER, A_CLICK, 12, 40, click_asset, cr, none(cr.size))
        first_click = np.full(self.nR, -1, np.int64)
        first_click[cr[ci == 0]] = click_asset[ci == 0]
        r = np.flatnonzero(R["sel"])
        block(r, USER, A_SELECT, 45, 60, first_click[r], r, none(r.size))
        r = np.flatnonzero(R["uplace"])
        block(r, USER, A_PLACE, 62, 80, first_click[r], r, sess_doc(r))
        r = np.flatnonzero(R["uedit"])
        block(r, USER, A_EDIT, 85, 130, first_click[r], none(r.size), sess_doc(r))
        r = np.flatnonzero(R["adl"])
        block(r, USER, A_DOWNLOAD, 175, 200, first_click[r], r, none(r.size))

        # assistant: agent consumption
        cons_asset = np.full(self.nR, -1, np.int64)
        r = np.flatnonzero(R["consumed"])
        crank = rng.integers(0, np.minimum(R["n_list"][r], 5))
        cons_asset[r] = self.asset_at(r, crank)
        block(r, AGENT, A_PLACE, 1, 4, cons_asset[r], r, sess_doc(r))
        r = np.flatnonzero(R["agent_edit"])
        block(r, AGENT, A_EDIT, 5, 10, cons_asset[r], r, sess_doc(r))
        r = np.flatnonzero(R["subst"] | R["gen_place"])
        block(r, AGENT, A_PLACE, 1, 4, gen_assets(r.size), none(r.size), sess_doc(r))
        # displayed assets
        disp_first = np.full(self.nR, -1, np.int64)
        disp_any = np.full(self.nR, -1, np.int64)
        disp_any2 = np.full(self.nR, -1, np.int64)
        di = self.disp_idx
        if di.size:
            dn = R["disp_n"][di]
            disp_first[di] = self.asset_at(di, self.disp_ranks[:, 0])
            pick = rng.integers(0, dn)
            disp_any[di] = self.asset_at(di, self.disp_ranks[np.arange(di.size), pick])
            pick2 = rng.integers(0, dn)
            disp_any2[di] = self.asset_at(di, self.disp_ranks[np.arange(di.size), pick2])
        r = np.flatnonzero(R["aclick"])
        block(r, USER, A_CLICK, 12, 40, disp_any[r], r, none(r.size))
        r = np.flatnonzero(R["asel"])
        block(r, USER, A_SELECT, 45, 60, disp_any2[r], r, none(r.size))
        r = np.flatnonzero(R["aplace"])
        block(r, USER, A_PLACE, 62, 80, disp_any2[r], r, sess_doc(r))
        r = np.flatnonzero(R["uedit_ag"])
        block(r, USER, A_EDIT, 85, 130, cons_asset[r], none(r.size), sess_doc(r))
        r = np.flatnonzero(R["afollow"])
        fa = np.where(R["consumed"][r], cons_asset[r], disp_first[r])
        block(r, USER, A_FOLLOW, 135, 170, fa, r, none(r.size))
        r = np.flatnonzero(R["reject"] & R["reject_src"])
        top1 = np.where(R["n_list"][r] > 0, self.asset_at(r, np.zeros(r.size, np.int64)), -1)
        ra = np.where(R["consumed"][r], cons_asset[r], top1)
        block(r, USER, A_REJECT, 135, 170, ra, r, none(r.size))
        r = np.flatnonzero(R["reject"] & ~R["reject_src"])
        block(r, USER, A_REJECT, 135, 170, none(r.size), none(r.size), none(r.size))

        # prompt-level (assistant prompts without retrieval)
        p = np.flatnonzero(P["gen_edit"])
        block(p, AGENT, A_EDIT, 2, 8, none(p.size), none(p.size), P["sess"][p], P["ts"][p], p)
        p = np.flatnonzero(P["doc_edit"])
        block(p, USER, A_EDIT, 85, 130, none(p.size), none(p.size), P["sess"][p], P["ts"][p], p)

        # session-level outcomes
        retr_place = R["consumed"] | R["uplace"] | R["aplace"]
        placed = np.bincount(R["sess"], weights=retr_place, minlength=self.S) > 0
        lp = self.last_prompt
        last_end = P["end"][lp]
        p_exp = np.where(placed, cfg.export_prob_with_placement, cfg.export_prob_without_placement)
        s = np.flatnonzero(rng.random(self.S) < p_exp)
        otype = np.array([A_EXPORT, A_SHARE, A_DOWNLOAD])[
            np.searchsorted([0.7, 0.85], rng.random(s.size), side="right")
        ]
        ts = last_end[s] + _round_ms(rng.uniform(5, 60, s.size) * US)
        blocks.append(
            dict(
                sess=s,
                prompt=lp[s],
                ts=ts,
                actor=np.full(s.size, USER, np.int8),
                atype=otype.astype(np.int8),
                asset=none(s.size),
                source=none(s.size),
                doc=s,
                ret=none(s.size),
            )
        )
        # cross-session exports (later editor session of the same user)
        cs = np.flatnonzero(
            placed & ~self.syn & ~self.legacy & (rng.random(self.S) < cfg.cross_session_export_prob)
        )
        days_later = rng.integers(1, cfg.cross_session_max_days + 1, cs.size)
        ts = (
            last_end[cs]
            + days_later * DAY_US
            + _round_ms(rng.uniform(-4 * 3600, 4 * 3600, cs.size) * US)
        )
        new_sess = self.S + np.arange(cs.size, dtype=np.int64)
        otype = np.array([A_EXPORT, A_SHARE, A_DOWNLOAD])[
            np.searchsorted([0.75, 0.9], rng.random(cs.size), side="right")
        ]
        blocks.append(
            dict(
                sess=new_sess,
                prompt=none(cs.size),
                ts=ts,
                actor=np.full(cs.size, USER, np.int8),
                atype=otype.astype(np.int8),
                asset=none(cs.size),
                source=none(cs.size),
                doc=cs,
                ret=none(cs.size),
            )
        )
        pre = rng.random(cs.size) < 0.3
        blocks.append(
            dict(
                sess=new_sess[pre],
                prompt=none(int(pre.sum())),
                ts=ts[pre] - _round_ms(rng.uniform(60, 600, int(pre.sum())) * US),
                actor=np.full(int(pre.sum()), USER, np.int8),
                atype=np.full(int(pre.sum()), A_EDIT, np.int8),
                asset=none(int(pre.sum())),
                source=none(int(pre.sum())),
                doc=cs[pre],
                ret=none(int(pre.sum())),
            )
        )
        self.n_cross_sessions = cs.size

        A = {key: np.concatenate([b.pop(key) for b in blocks]) for key in list(blocks[0])}
        # session attributes (export sessions inherit from their origin session)
        origin = np.where(A["sess"] >= self.S, A["doc"], A["sess"])
        A["origin"] = origin
        A["syn"] = self.syn[origin]
        A["legacy"] = self.legacy[origin] & (A["sess"] < self.S)
        # legacy logs: no lineage id
        A["source"] = np.where(A["legacy"], -1, A["source"])
        self.A = _compact(A, keep64=("ts", "asset"))
        self.nA = A["sess"].size

    # --------------------------------------------------------------- tables
    # ids of sessions, prompts and retrievals are formatted once per entity and then
    # taken (several tables and threads use them); drop_id_cache() frees them
    _ID_KINDS = {"session": ("s_", 0x51D), "prompt": ("p_", 0x9E1), "retrieval": ("r_", 0x3C7)}

    def _cached_ids(self, kind: str, idx: np.ndarray) -> pa.Array:
        with self._id_locks[kind]:
            every = self._id_cache.get(kind)
            if every is None:
                n = {
                    "session": self.S + self.n_cross_sessions,
                    "prompt": self.nP,
                    "retrieval": self.nR,
                }[kind]
                prefix, salt = self._ID_KINDS[kind]
                every = _ids(prefix, np.arange(n, dtype=np.int64), salt)
                self._id_cache[kind] = every
        return every.take(pa.array(idx))

    def drop_id_cache(self) -> None:
        self._id_cache.clear()

    def release_table(self, t: str) -> None:
        """Free a table once written (``num_rows`` still answers)."""
        self.released[t] = self.tables[t].num_rows
        self.tables[t] = None  # type: ignore[assignment]

    def num_rows(self, t: str) -> int:
        tbl = self.tables[t]
        return self.released[t] if tbl is None else tbl.num_rows

    def _session_ids(self, s: np.ndarray) -> pa.Array:
        return self._cached_ids("session", s)

    def _prompt_ids(self, p: np.ndarray) -> pa.Array:
        return self._cached_ids("prompt", p)

    def _retrieval_ids(self, r: np.ndarray) -> pa.Array:
        return self._cached_ids("retrieval", r)

    def _doc_ids(self, d: np.ndarray) -> pa.Array:
        return _ids("doc_", d, 0x77D)

    def _day_of(self, ts_us: np.ndarray) -> np.ndarray:
        return ((ts_us - self.base_us) // DAY_US).astype(np.int64)

    def _tz_choice(self, rng: np.random.Generator, n: int) -> np.ndarray:
        # = searchsorted(cum, u, side="right"): the number of bounds <= u
        u = rng.random(n)
        out = np.zeros(n, np.int8)
        for bound in np.cumsum(_TZ_PROBS)[:-1]:
            out += u >= bound
        return out

    def build_prompts(self) -> None:
        cfg = self.cfg
        rng = _rng(cfg.seed, "prompts_table")
        P = self.P
        n = self.nP
        order = np.argsort(P["ts"], kind="stable")
        self.p_order = order
        g = _Gathered(P, order)
        occ = _take_vocab(OCCASIONS, g["topic"] // len(FORMATS))
        fmt = _take_vocab(FORMATS, g["topic"] % len(FORMATS))
        occ2 = _take_vocab(OCCASIONS, ((g["topic"] + 97) % N_TOPICS) // len(FORMATS))
        fmt2 = _take_vocab(FORMATS, ((g["topic"] + 97) % N_TOPICS) % len(FORMATS))
        fields = {
            "occ": occ,
            "fmt": fmt,
            "occ2": occ2,
            "fmt2": fmt2,
            "m1": _take_vocab(MODIFIERS, g["m1"]),
            "m2": _take_vocab(MODIFIERS, g["m2"]),
            "m3": _take_vocab(MODIFIERS, g["m3"]),
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
        text = _render(tuple(all_t), choice, fields)
        text = _with_nulls(text, rng.random(n) < cfg.prompt_text_null_share)
        kind_null = g["legacy"] | (rng.random(n) < cfg.prompt_kind_null_share)
        kind = _enum(KINDS, g["kind"], kind_null)
        syn_null = ~g["syn"] & (rng.random(n) < cfg.is_synthetic_null_share)
        is_syn = pa.array(g["syn"], _BOOL)
        is_syn = _with_nulls(is_syn, syn_null)
        users = pc.binary_join_element_wise(
            _take_vocab(("u_", "u_bot_"), g["syn"].astype(np.int64)),
            pc.cast(pa.array(self.user[g["sess"]]), _STR),
            "",
        )
        self.tables["prompts"] = pa.table(
            {
                "prompt_id": self._prompt_ids(order),
                "session_guid": self._session_ids(g["sess"]),
                "user_id": users,
                "surface": _enum(SURFACES, g["surface"]),
                "ts": _ts_array(g["ts"]),
                "prompt_text": text,
                "prompt_kind": kind,
                "is_synthetic": is_syn,
            },
            schema=_MEM_SCHEMAS["prompts"],
        )
        self.dt["prompts"] = self._day_of(g["ts"])
        self.tz["prompts"] = self._tz_choice(rng, n)
        self.p_row = np.empty(n, np.int64)
        self.p_row[order] = np.arange(n)  # prompt index -> row

    def build_retrievals(self) -> None:
        cfg = self.cfg
        rng = _rng(cfg.seed, "retrievals_table")
        R = self.R
        n = self.nR
        order = np.argsort(R["ts"], kind="stable")
        self.r_order = order
        g = _Gathered(R, order)
        # query text
        occ = _take_vocab(OCCASIONS, g["topic"] // len(FORMATS))
        fmt = _take_vocab(FORMATS, g["topic"] % len(FORMATS))
        ptype = self.P["rtype"][g["prompt"]]
        fields = {
            "occ": occ,
            "fmt": fmt,
            "m1": _take_vocab(MODIFIERS, g["m1"]),
            "m2": _take_vocab(MODIFIERS, g["m2"]),
            "m3": _take_vocab(MODIFIERS, self.P["m3"][g["prompt"]]),
        }
        tmpl = g["surface"] == TEMPLATE
        choice = np.where(
            tmpl,
            np.where(ptype == 2, 1, 0),
            np.where((ptype == 1) & (g["k"] == 0), 3, 2),
        )
        q = _render(
            (
                "{m1} {occ} {fmt} {m2}",
                "{m1} {occ} {fmt} {m2} {m3}",
                "{m1} {occ} {fmt}",
                "{m1} {occ} {fmt} {m2}",
            ),
            choice,
            fields,
        )
        q = _with_nulls(q, rng.random(n) < cfg.query_text_null_share)
        role = _enum(ROLES, g["role"], g["legacy"])
        # returned lists (sequential per-row parameters, int32 temporaries)
        n_list = g["n_list"]
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(n_list, out=offsets[1:])
        codes = _list_codes(
            n_list, g["topic"], g["start"], g["stride"], g["dupk1"], g["dupk2"], offsets
        )
        values = _asset_dict(codes)  # cast to list<string> per partition when written
        del codes
        returned = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), values)
        # displayed: full list on template search, a few agent-chosen assets or null
        # (values taken from the returned lists: position = offset + rank)
        if tmpl.all():
            displayed = returned
        else:
            d_rows = np.zeros(self.nR, np.int64)  # row of each retrieval index
            d_rows[order] = np.arange(n)
            disp_n = np.where(tmpl, n_list, g["disp_n"])
            d_off = np.zeros(n + 1, np.int64)
            np.cumsum(disp_n, out=d_off[1:])
            # source position in the returned values of each displayed item
            # (int32: list offsets are int32 anyway)
            src = np.arange(d_off[-1], dtype=np.int32)  # template rows: same positions
            src += np.repeat((offsets[:-1] - d_off[:-1]).astype(np.int32), disp_n)
            di = self.disp_idx
            if di.size:
                ai, ak = _explode(R["disp_n"][di])
                rows = d_rows[di]
                src[d_off[rows][ai] + ak] = offsets[rows][ai] + self.disp_ranks[ai, ak]
            displayed = pa.ListArray.from_arrays(
                pa.array(d_off.astype(np.int32)),
                values.take(pa.array(src)),
                mask=pa.array(~tmpl & (disp_n == 0)),
            )
        self.tables["retrievals"] = pa.table(
            {
                "retrieval_id": self._retrieval_ids(order),
                "prompt_id": self._prompt_ids(g["prompt"]),
                "session_guid": self._session_ids(g["sess"]),
                "ts": _ts_array(g["ts"]),
                "query_text": q,
                "retrieval_role": role,
                "returned_asset_ids": returned,
                "displayed_asset_ids": displayed,
            },
            schema=_MEM_SCHEMAS["retrievals"],
        )
        self.dt["retrievals"] = self._day_of(g["ts"])
        self.tz["retrievals"] = self._tz_choice(rng, n)
        self.r_row = np.empty(n, np.int64)
        self.r_row[order] = np.arange(n)

    def build_actions(self) -> None:
        rng = _rng(self.cfg.seed, "actions_table")
        A = self.A
        n = self.nA
        order = np.argsort(A["ts"], kind="stable")
        self.a_order = order
        g = _Gathered(A, order)
        self.tables["actions"] = pa.table(
            {
                "action_id": _ids("x_", order, 0xAC7),
                "session_guid": self._session_ids(g["sess"]),
                "prompt_id": _with_nulls(
                    self._prompt_ids(np.maximum(g["prompt"], 0)), g["prompt"] < 0
                ),
                "ts": _ts_array(g["ts"]),
                "actor": _enum(ACTORS, g["actor"]),
                "action_type": _enum(ACTION_TYPES, g["atype"]),
                "consumed_asset_id": _asset_strings(g["asset"]),
                "source_retrieval_id": _with_nulls(
                    self._retrieval_ids(np.maximum(g["source"], 0)), g["source"] < 0
                ),
                "document_id": _with_nulls(self._doc_ids(np.maximum(g["doc"], 0)), g["doc"] < 0),
            },
            schema=_MEM_SCHEMAS["actions"],
        )
        self.dt["actions"] = self._day_of(g["ts"])
        self.tz["actions"] = self._tz_choice(rng, n)
        self.a_row = np.empty(n, np.int64)
        self.a_row[order] = np.arange(n)

    # ---------------------------------------------------------------- labels
    def relevance_labels(self) -> None:
        cfg = self.cfg
        rng = _rng(cfg.seed, "relevance_labels")
        R = self.R
        elig = np.flatnonzero(~R["syn"] & (R["n_list"] > 0))
        lab = elig[rng.random(elig.size) < cfg.relevance_label_share]
        K = cfg.relevance_k
        depth = np.minimum(R["n_list"][lab], K)
        li, rank = _explode(depth)
        r = lab[li]
        keep = (rng.random(r.size) < cfg.relevance_coverage) & (rank != R["dupk2"][r])
        r, rank, li = r[keep], rank[keep], li[keep]
        good = R["good"][r]
        p_rel = np.where(good, np.maximum(0.15, 0.85 - 0.04 * rank), 0.12)
        rel = rng.random(r.size) < p_rel
        gcum = np.where(good[:, None], [[0.3, 0.7]], [[0.6, 0.9]])
        grade_if_rel = 1 + (rng.random(r.size)[:, None] > gcum).sum(1)
        grade = np.where(rel, grade_if_rel, 0)
        asset = self.asset_at(r, rank)
        # an unreturned relevant asset
        extra = lab[rng.random(lab.size) < cfg.unreturned_relevant_prob]
        e_rank = R["n_list"][extra] + rng.integers(0, 10, extra.size)
        r = np.concatenate([r, extra])
        asset = np.concatenate([asset, self.asset_at(extra, e_rank)])
        grade = np.concatenate([grade, rng.integers(2, 4, extra.size)])
        # judges: one batch per retrieval (human for some), then extra judgements
        batch_human = rng.random(self.nR) < cfg.human_judge_share
        batch_at = R["ts"] + _round_ms(rng.uniform(1, 5, self.nR) * DAY_US)
        judge = batch_human[r].astype(np.int8)
        at = batch_at[r]
        m = r.size
        dbl = rng.random(m) < cfg.double_judge_prob
        d_grade = np.clip(grade + np.where(rng.random(m) < 0.5, rng.choice([-1, 1], m), 0), 0, 3)
        rej = rng.random(m) < cfg.rejudge_prob
        rj_grade = np.clip(grade + np.where(rng.random(m) < 0.4, rng.choice([-1, 1], m), 0), 0, 3)
        rr = np.concatenate([r, r[dbl], r[rej]])
        aa = np.concatenate([asset, asset[dbl], asset[rej]])
        gg = np.concatenate([grade, d_grade[dbl], rj_grade[rej]])
        jj = np.concatenate([judge, 1 - judge[dbl], judge[rej]])
        tt = np.concatenate(
            [
                at,
                at[dbl] + _round_ms(rng.uniform(-12, 48, int(dbl.sum())) * 3600 * US) + MS,
                at[rej] + _round_ms(rng.uniform(1, 72, int(rej.sum())) * 3600 * US),
            ]
        )
        order = np.lexsort((aa, rr, tt))
        rr, aa, gg, jj, tt = rr[order], aa[order], gg[order], jj[order], tt[order]
        self.rel = dict(r=rr, asset=aa, grade=gg, judge=jj, at=tt)
        self.tables["relevance_labels"] = pa.table(
            {
                "retrieval_id": self._retrieval_ids(rr),
                "asset_id": _asset_strings(aa),
                "grade": pa.array(gg.astype(np.int64)),
                "judge": _enum(JUDGES, jj),
                "judged_at": _ts_array(tt),
            },
            schema=_MEM_SCHEMAS["relevance_labels"],
        )
        self.dt["relevance_labels"] = self._day_of(tt)
        self.tz["relevance_labels"] = self._tz_choice(rng, rr.size)
        self.labelled_ret = np.zeros(self.nR, bool)
        self.labelled_ret[rr] = True

    def prompt_labels(self) -> None:
        cfg = self.cfg
        rng = _rng(cfg.seed, "prompt_labels")
        P = self.P
        assist = (P["surface"] != TEMPLATE) & ~P["syn"]
        n_target = min(cfg.prompt_label_max, round(cfg.prompt_label_frac * int(assist.sum())))
        strat = assist & (P["has_int"] | (P["n_ret"] > 0))
        a = np.flatnonzero(strat)
        b = np.flatnonzero(assist & ~strat)
        na = min(a.size, round(n_target * cfg.prompt_label_intent_share))
        nb = min(b.size, n_target - na)
        lab = np.sort(np.concatenate([_pick(rng, a, na), _pick(rng, b, nb)]))
        n = lab.size
        true_int = P["has_int"][lab]
        true_cnt = P["count"][lab]
        at = P["ts"][lab] + _round_ms(rng.uniform(2, 10, n) * DAY_US)
        # llm label (noisy)
        err = rng.random(n) < cfg.prompt_label_llm_error
        llm_int = np.where(err, ~true_int, true_int)
        cnt_err = rng.random(n) < 0.1
        llm_cnt = np.where(
            llm_int,
            np.where(true_int, np.maximum(1, true_cnt - cnt_err.astype(int)), 1),
            0,
        )
        hum = rng.random(n) < cfg.prompt_label_human_prob
        hum_at = at + _round_ms(rng.uniform(1, 96, n) * 3600 * US)
        rej = rng.random(n) < 0.05
        rej_at = at + _round_ms(rng.uniform(1, 48, n) * 3600 * US) + MS
        pp = np.concatenate([lab, lab[hum], lab[rej]])
        ii = np.concatenate([llm_int, true_int[hum], true_int[rej]])
        cc = np.concatenate([llm_cnt, true_cnt[hum], true_cnt[rej]])
        jj = np.concatenate([np.zeros(n, np.int8), np.ones(int(hum.sum()), np.int8),
                             np.zeros(int(rej.sum()), np.int8)])  # fmt: skip
        tt = np.concatenate([at, hum_at[hum], rej_at[rej]])
        order = np.lexsort((pp, tt))
        pp, ii, cc, jj, tt = pp[order], ii[order], cc[order], jj[order], tt[order]
        self.plab = dict(p=pp, has_int=ii, count=cc, judge=jj, at=tt)
        self.tables["prompt_labels"] = pa.table(
            {
                "prompt_id": self._prompt_ids(pp),
                "has_retrieval_intent": pa.array(ii, _BOOL),
                "retrieval_intent_count": pa.array(cc.astype(np.int64)),
                "judge": _enum(JUDGES, jj),
                "judged_at": _ts_array(tt),
            },
            schema=_MEM_SCHEMAS["prompt_labels"],
        )
        self.dt["prompt_labels"] = self._day_of(tt)
        self.tz["prompt_labels"] = self._tz_choice(rng, pp.size)
        self.labelled_prompt = np.zeros(self.nP, bool)
        self.labelled_prompt[pp] = True

    def goal_labels(self) -> None:
        cfg = self.cfg
        rng = _rng(cfg.seed, "goal_labels")
        P, R = self.P, self.R
        elig = np.flatnonzero(~P["syn"] & (P["n_ret"] > 0))
        lab = elig[rng.random(elig.size) < cfg.goal_label_share]
        used = np.bincount(R["prompt"], weights=R["used"], minlength=self.nP) > 0
        good = np.bincount(R["prompt"], weights=R["good"], minlength=self.nP) > 0
        p_goal = np.where(used[lab], np.where(good[lab], 0.85, 0.5), 0.25)
        truth = rng.random(lab.size) < p_goal
        n = lab.size
        at = P["ts"][lab] + _round_ms(rng.uniform(2, 10, n) * DAY_US)
        llm = np.where(rng.random(n) < 0.1, ~truth, truth)
        hum = rng.random(n) < 0.15
        pp = np.concatenate([lab, lab[hum]])
        gg = np.concatenate([llm, truth[hum]])
        jj = np.concatenate([np.zeros(n, np.int8), np.ones(int(hum.sum()), np.int8)])
        tt = np.concatenate(
            [at, at[hum] + _round_ms(rng.uniform(1, 96, int(hum.sum())) * 3600 * US)]
        )
        order = np.lexsort((pp, tt))
        pp, gg, jj, tt = pp[order], gg[order], jj[order], tt[order]
        self.glab = dict(p=pp, goal=gg, judge=jj, at=tt)
        self.tables["goal_labels"] = pa.table(
            {
                "prompt_id": self._prompt_ids(pp),
                "goal_achieved": pa.array(gg, _BOOL),
                "judge": _enum(JUDGES, jj),
                "judged_at": _ts_array(tt),
            },
            schema=_MEM_SCHEMAS["goal_labels"],
        )
        self.dt["goal_labels"] = self._day_of(tt)
        self.tz["goal_labels"] = self._tz_choice(rng, pp.size)
        self.goal_labelled = np.zeros(self.nP, bool)
        self.goal_labelled[pp] = True

    def stage_spans(self) -> None:
        cfg = self.cfg
        rng = _rng(cfg.seed, "stage_spans")
        P = self.P
        cov = np.flatnonzero(
            (P["surface"] != TEMPLATE) & (rng.random(self.nP) < cfg.stage_span_coverage)
        )
        cov = cov[np.argsort(P["ts"][cov], kind="stable")]
        has_r = P["n_ret"][cov] > 0
        # stages per prompt: planner, [retrieval], generation, other
        n_st = 3 + has_r
        pi, si = _explode(n_st)
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
        self.tables["stage_spans"] = pa.table(
            {
                "prompt_id": self._prompt_ids(p),
                "stage": _enum(STAGES, stage),
                "latency_ms": pa.array(np.round(lat).astype(np.int64)),
                "tokens": pa.array(tok.astype(np.int64)),
            },
            schema=_MEM_SCHEMAS["stage_spans"],
        )
        self.dt["stage_spans"] = self._day_of(P["ts"][p])
        self.tz["stage_spans"] = np.zeros(m, np.int8)
        self.spanned = np.zeros(self.nP, bool)
        self.spanned[cov] = True

    # ---------------------------------------------------------------- replay
    def replay(self) -> None:
        cfg = self.cfg
        rng = _rng(cfg.seed, "replay")
        T = cfg.replay_trajectories or max(50, cfg.sessions // 20)
        nq = max(1, int(np.ceil(T * 0.85)))
        q_of = np.concatenate([np.arange(nq), rng.integers(0, nq, T - nq)])
        q_of = q_of[rng.permutation(T)]
        M = _REPLAY_POOL
        rel_pool = rng.random((nq, M)) < cfg.replay_relevant_share
        slo, shi = cfg.replay_steps
        dlo, dhi = cfg.replay_docs_per_step
        n_steps = rng.integers(slo, shi + 1, T)
        ti, step = _explode(n_steps)  # (traj, step) rows
        n_docs = rng.integers(dlo, dhi + 1, ti.size)
        si, within = _explode(n_docs)  # doc reads
        traj = ti[si]
        stp = step[si]
        read_no = (
            np.arange(si.size)
            - (np.cumsum(np.bincount(traj, minlength=T)) - np.bincount(traj, minlength=T))[traj]
        )
        start = rng.integers(0, M, T)
        stride = rng.integers(1, M, T)
        pos = (start[traj] + read_no * stride[traj]) % M
        q = q_of[traj]
        dockey = q * M + pos
        is_rel = rel_pool[q, pos]
        n = traj.size
        # Gaussian copula: (CTU, SRU, proxy)
        r_cs = 2 * np.sin(np.pi * cfg.replay_rho / 6)
        r_cp = 2 * np.sin(np.pi * cfg.proxy_rho / 6)
        r_sp = 2 * np.sin(np.pi * cfg.proxy_sru_rho / 6)
        C = np.array([[1, r_cs, r_cp], [r_cs, 1, r_sp], [r_cp, r_sp, 1]])
        try:
            Lc = np.linalg.cholesky(C)
        except np.linalg.LinAlgError as exc:
            raise ValueError("replay_rho, proxy_rho, proxy_sru_rho not jointly feasible") from exc
        z = rng.standard_normal((n, 3)) @ Lc.T
        u = _ndtr(z)
        u_ctu, u_sru, u_px = u[:, 0], u[:, 1], u[:, 2]
        without = rng.uniform(0.3, 0.45, n)
        with_ = without + (-0.3 + 0.85 * u_sru**1.3)
        # CTU = dA + dR - (To - Tc): integer turn change levels + continuous part
        th = np.array([0.0, 0.08, 0.78, 0.93, 1.0])
        lvl = np.clip(np.searchsorted(th, u_ctu, side="right") - 1, 0, 3)
        extra = lvl - 1  # -1, 0, 1, 2 extra turns without the document
        frac = (u_ctu - th[lvl]) / (th[lvl + 1] - th[lvl])
        s = -0.5 + frac
        w = rng.uniform(0.3, 0.7, n)
        f1o_t = rng.uniform(0.35, 0.65, T)
        ro_s = rng.uniform(0.35, 0.65, ti.size)
        f1o = f1o_t[traj]
        ro = ro_s[si]
        f1c = f1o - s * w
        rc = ro - s * (1 - w)
        to = n_steps[traj]
        tc = to + extra
        fail = rng.random(n) < cfg.replay_failure_share
        status = np.where(fail, np.where(rng.random(n) < 0.7, 1, 2), 0)
        garbage = fail & (rng.random(n) < 0.5)
        nulled = fail & ~garbage
        f1c = np.where(garbage, rng.uniform(0, 1, n), f1c)
        rc = np.where(garbage, rng.uniform(0, 1, n), rc)
        tc = np.where(garbage, rng.integers(1, 50, n), tc)
        proxy = np.round(u_px, 6)
        proxy_null = rng.random(n) < cfg.proxy_null_share

        def f(x, mask=None):
            a = pa.array(np.round(x, 6), _F64)
            return a if mask is None else _with_nulls(a, mask)

        traj_ids = _ids("t_", np.arange(T), 0x7A1)
        q_ids = _ids("q_", np.arange(nq), 0x0B5)
        doc_ids_all = pc.binary_join_element_wise(
            "d", pc.cast(pa.array(q), _STR), pc.cast(pa.array(pos), _STR), "_"
        )
        self.tables["replay_documents"] = pa.table(
            {
                "trajectory_id": traj_ids.take(pa.array(traj)),
                "question_id": q_ids.take(pa.array(q)),
                "step_index": pa.array(stp.astype(np.int64)),
                "doc_id": doc_ids_all,
                "is_relevant": pa.array(is_rel, _BOOL),
                "reader_score_with": f(with_),
                "reader_score_without": f(without),
                "proxy_score": f(proxy, proxy_null),
                "answer_f1_original": f(f1o),
                "answer_f1_counterfactual": f(f1c, nulled),
                "next_recall_original": f(ro),
                "next_recall_counterfactual": f(rc, nulled),
                "turns_original": pa.array(to.astype(np.int64)),
                "turns_counterfactual": _with_nulls(pa.array(tc.astype(np.int64)), nulled),
                "counterfactual_status": _take_vocab(CF_STATUSES, status),
            },
            schema=SCHEMAS["replay_documents"],
        )
        # entities: per question shared entities, per document unique ones
        udoc, inv = np.unique(dockey, return_inverse=True)
        nd = udoc.size
        dq = udoc // M
        s_lo, s_hi = cfg.replay_shared_entities
        u_lo, u_hi = cfg.replay_unique_entities
        n_shared = rng.integers(s_lo, s_hi + 1, nq)
        half = N_ENTITY_CODES // 2
        q_base = rng.integers(0, half, nq)
        q_stride = 1 + 2 * rng.integers(0, 1000, nq)
        member = (rng.random((nd, s_hi)) < cfg.replay_shared_entity_doc_prob) & (
            np.arange(s_hi)[None, :] < n_shared[dq][:, None]
        )
        md, mk = np.nonzero(member)
        sh_code = (q_base[dq[md]] + mk * q_stride[dq[md]]) % half
        n_uni = rng.integers(u_lo, u_hi + 1, nd)
        ud, uk = _explode(n_uni)
        d_base = rng.integers(0, half - 10, nd)
        un_code = half + d_base[ud] + uk
        e_doc = np.concatenate([md, ud])
        e_code = np.concatenate([sh_code, un_code])
        eo = np.lexsort((e_code, e_doc))
        e_doc, e_code = e_doc[eo], e_code[eo]
        names = self._entity_names(e_code)
        variant = np.searchsorted([0.8, 0.88, 0.94], rng.random(e_code.size), side="right")
        disp = _render(
            ("{n}", "{lo}", "{up}", "  {n} "),
            variant,
            {"n": names, "lo": pc.utf8_lower(names), "up": pc.utf8_upper(names)},
        )
        ud_q = udoc // M
        ud_pos = udoc % M
        udoc_ids = pc.binary_join_element_wise(
            "d", pc.cast(pa.array(ud_q), _STR), pc.cast(pa.array(ud_pos), _STR), "_"
        )
        self.tables["document_entities"] = pa.table(
            {"doc_id": udoc_ids.take(pa.array(e_doc)), "entity": disp},
            schema=SCHEMAS["document_entities"],
        )
        # OER units: distinct (traj, step, entity) for steps with a next query
        e_cnt = np.bincount(e_doc, minlength=nd)
        e_off = np.cumsum(e_cnt) - e_cnt
        has_next = stp < n_steps[traj] - 1
        rd = np.flatnonzero(has_next)
        xi, xk = _explode(e_cnt[inv[rd]])
        read = rd[xi]
        code = e_code[e_off[inv[read]] + xk]
        ts_key = (traj[read] * 16 + stp[read]).astype(np.int64)
        ukey = ts_key * N_ENTITY_CODES + code
        uk_unique, u_inv = np.unique(ukey, return_inverse=True)
        nonrel = np.bincount(u_inv, weights=~is_rel[read], minlength=uk_unique.size)
        disc = nonrel == 0
        appear = rng.random(uk_unique.size) < np.where(
            disc, cfg.oer_p_discriminative, cfg.oer_p_non_discriminative
        )
        u_ts = uk_unique // N_ENTITY_CODES
        u_code = uk_unique % N_ENTITY_CODES
        # queries: step 0 = question; step t+1 = two question words + entities from t
        qw = rng.integers(0, len(QWORDS), (nq, 6))
        n_rows = ti.size
        key_rows = (ti * 16 + step).astype(np.int64)
        qwords = {f"w{i}": _take_vocab(QWORDS, qw[q_of[ti], i]) for i in range(6)}
        base_q = _render(
            ("{w0} {w1} {w2} {w3} {w4} {w5}", "{w0} {w4} {w5}"),
            (step > 0).astype(np.int64),
            qwords,
        )
        app_key = u_ts[appear] + 1  # the (traj, step+1) query row they go into
        app_code = u_code[appear]
        app_lower = rng.random(app_code.size) < 0.5
        app_names = self._entity_names(app_code)
        app_names = pc.if_else(pa.array(app_lower), pc.utf8_lower(app_names), app_names)
        row_of_key = np.searchsorted(key_rows, app_key)
        cnt = np.bincount(row_of_key, minlength=n_rows)
        ordr = np.argsort(row_of_key, kind="stable")
        lists = pa.ListArray.from_arrays(
            pa.array(np.concatenate([[0], np.cumsum(cnt)]).astype(np.int32)),
            app_names.take(pa.array(ordr)),
        )
        ents = pc.binary_join(lists, ", ")
        qtext = pc.if_else(
            pa.array(cnt > 0), pc.binary_join_element_wise(base_q, ents, ", "), base_q
        )
        self.tables["replay_queries"] = pa.table(
            {
                "trajectory_id": traj_ids.take(pa.array(ti)),
                "step_index": pa.array(step.astype(np.int64)),
                "query_text": qtext,
            },
            schema=SCHEMAS["replay_queries"],
        )
        for t in REPLAY_TABLES:
            nrow = self.tables[t].num_rows
            self.dt[t] = np.zeros(nrow, np.int64)
            self.tz[t] = np.zeros(nrow, np.int8)
        self.replay_latent = dict(
            T=T,
            n_docs=n,
            failed=int(fail.sum()),
            discriminative_units=int(disc.sum()),
            non_discriminative_units=int((~disc).sum()),
            generated_appear_disc=int((appear & disc).sum()),
            generated_appear_non=int((appear & ~disc).sum()),
        )

    @staticmethod
    def _entity_names(code: np.ndarray) -> pa.Array:
        n = len(_SYL)
        digits = [(code // n**i) % n for i in range(5)]
        syl = pa.array(list(_SYL), _STR)
        cap = pa.array([s.capitalize() for s in _SYL], _STR)
        parts = [
            cap.take(pa.array(digits[0])),
            syl.take(pa.array(digits[1])),
            syl.take(pa.array(digits[2])),
            pa.array([" "] * code.size, _STR),
            cap.take(pa.array(digits[3])),
            syl.take(pa.array(digits[4])),
        ]
        return pc.binary_join_element_wise(*parts, "")

    # ------------------------------------------------------- victim candidates
    def candidates(self) -> None:
        """Rows that can be conflict victims (nothing important depends on them)."""
        P, R, A = self.P, self.R, self.A
        acts_per_prompt = np.bincount(A["prompt"][A["prompt"] >= 0], minlength=self.nP)
        src_per_ret = np.bincount(A["source"][A["source"] >= 0], minlength=self.nR)
        last = np.zeros(self.nP, bool)
        last[self.last_prompt] = True
        n_prompts_sess = self.n_prompts[P["sess"]]
        prompt_ok = (
            ~P["syn"]
            & ~P["legacy"]
            & (P["surface"] != TEMPLATE)
            & (P["n_ret"] == 0)
            & (acts_per_prompt == 0)
            & ~self.labelled_prompt
            & ~self.goal_labelled
            & last
            & (n_prompts_sess >= 2)
            & (P["kind"] == NEW)
        )
        # prefer prompts without stage spans (else their spans become orphans)
        if (prompt_ok & ~self.spanned).sum() >= self.cfg.conflicts_per_table:
            prompt_ok &= ~self.spanned
        ret_ok = (
            ~R["syn"]
            & ~R["legacy"]
            & (src_per_ret == 0)
            & (acts_per_prompt[R["prompt"]] == 0)
            & ~self.labelled_ret
            & ~self.goal_labelled[R["prompt"]]
            & ~self.labelled_prompt[R["prompt"]]
        )
        act_ok = ~A["syn"] & ~A["legacy"] & (A["actor"] == USER) & (A["atype"] == A_CLICK)
        self.cand["prompts"] = np.sort(self.p_row[np.flatnonzero(prompt_ok)])
        # prefer retrievals of prompts with several retrievals (trigger rate unchanged)
        multi = ret_ok & (P["n_ret"][R["prompt"]] >= 2)
        if multi.sum() >= self.cfg.conflicts_per_table:
            ret_ok = multi
        self.cand["retrievals"] = np.sort(self.r_row[np.flatnonzero(ret_ok)])
        self.cand["actions"] = np.sort(self.a_row[np.flatnonzero(act_ok)])
        for t in ("relevance_labels", "prompt_labels", "goal_labels") + REPLAY_TABLES:
            if t in self.tables:
                self.cand[t] = np.arange(self.num_rows(t))
        # rows safe to duplicate / decorate: any non-candidate is fine, but keep
        # synthetic rows out so that synthetic counts stay simple
        self.plain["prompts"] = self.p_row[np.flatnonzero(~P["syn"])]
        self.plain["retrievals"] = self.r_row[np.flatnonzero(~R["syn"])]
        self.plain["actions"] = self.a_row[np.flatnonzero(~A["syn"])]


# --------------------------------------------------------------------------
# planted truth
# --------------------------------------------------------------------------
def _resolve_latest(key: np.ndarray, judge: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Index of the winning label per key: human over llm, latest within a kind."""
    order = np.lexsort((at, judge, key))
    if order.size == 0:  # no labels left (a tiny sample, every label a conflict victim)
        return order
    k = key[order]
    last = np.r_[k[1:] != k[:-1], True]
    return order[last]


def _legacy_resolution(g: _Gen) -> tuple[np.ndarray, np.ndarray]:
    """Attribute legacy-session actions (no source id) as the marts would.

    Rule 2 (placement: inherit from the latest earlier ``place`` of the same
    asset in the same document) then rule 4 (temporal: the latest retrieval
    of the session at or before the action whose list contains the asset).
    Returns (action index, resolved retrieval index or -1).
    """
    A, R = g.A, g.R
    la = np.flatnonzero(A["legacy"] & (A["asset"] >= 0))
    if la.size == 0:
        return la, la
    lr = np.flatnonzero(R["legacy"] & (R["n_list"] > 0))
    ri, rank = _explode(R["n_list"][lr])
    rr = lr[ri]
    ex = pd.DataFrame(
        {"sess": R["sess"][rr], "asset": g.asset_at(rr, rank), "ts": R["ts"][rr], "ret": rr}
    ).sort_values("ts", kind="stable")
    act = pd.DataFrame(
        {
            "a": la,
            "sess": A["sess"][la],
            "asset": A["asset"][la],
            "ts": A["ts"][la],
            "doc": A["doc"][la],
            "place": A["atype"][la] == A_PLACE,
        }
    ).sort_values("ts", kind="stable")
    tm = pd.merge_asof(
        act, ex, on="ts", by=["sess", "asset"], direction="backward", allow_exact_matches=True
    )
    tm["ret"] = tm["ret"].fillna(-1).astype(np.int64)
    tm = tm.sort_values(["ts", "a"], kind="stable").reset_index(drop=True)
    # places: every legacy place inherits from the first place of (doc, asset)
    pl = tm[tm["place"] & (tm["doc"] >= 0)].copy()
    pl["res"] = pl.groupby(["doc", "asset"])["ret"].transform("first")
    res = pd.Series(tm["ret"].to_numpy(), index=tm["a"].to_numpy())
    res.loc[pl["a"].to_numpy()] = pl["res"].to_numpy()
    other = tm[~tm["place"] & (tm["doc"] >= 0)]
    if len(other) and len(pl):
        m = pd.merge_asof(
            other[["a", "ts", "doc", "asset"]],
            pl[["ts", "doc", "asset", "res"]],
            on="ts",
            by=["doc", "asset"],
            direction="backward",
            allow_exact_matches=False,
        )
        hit = m["res"].notna().to_numpy()
        res.loc[m["a"].to_numpy()[hit]] = m["res"].to_numpy()[hit].astype(np.int64)
    return res.index.to_numpy(), res.to_numpy().astype(np.int64)


def compute_planted(g: _Gen, victims: dict[str, np.ndarray]) -> dict[str, Any]:
    """Planted truth in the terms of metrics.md (non-synthetic traffic only).

    Everything under ``exact`` is computed on the rows the staging layer keeps
    (conflict victims removed) and the marts must reproduce it exactly:
    prompt / session counts per surface, prompts per assistant / chat session,
    trigger rate per surface, the labelled Tier 0 rates (labels resolved with
    human-over-llm and latest-within-kind), misrouted and in-scope retrieval
    counts, empty-result rate, retrievals per role, agent consumption (ACR)
    per role, goal rate, cross-session retrieval-driven outcomes, synthetic
    counts.  ``expected`` holds population values of the latent variables
    (tests should use tolerances).
    """
    P, R, A = g.P, g.R, g.A
    vp = np.zeros(g.nP, bool)
    vp[g.p_order[victims.get("prompts", np.zeros(0, np.int64))]] = True
    vr = np.zeros(g.nR, bool)
    vr[g.r_order[victims.get("retrievals", np.zeros(0, np.int64))]] = True
    keep_p = ~P["syn"] & ~vp
    keep_r = ~R["syn"] & ~vr
    n_ret_clean = np.bincount(R["prompt"][keep_r], minlength=g.nP)
    has_ret = n_ret_clean > 0

    def rate(num: int, den: int) -> dict[str, Any]:
        return {
            "numerator": int(num),
            "denominator": int(den),
            "rate": (num / den) if den else None,
        }

    surf_p = P["surface"]
    per_surface = {}
    trig = {}
    for si, s in enumerate(SURFACES):
        m = keep_p & (surf_p == si)
        per_surface[s] = int(m.sum())
        trig[s] = rate((m & has_ret).sum(), m.sum())
    am = keep_p & (surf_p != TEMPLATE)
    trig["assistant"] = rate((am & has_ret).sum(), am.sum())
    trig["overall"] = rate((keep_p & has_ret).sum(), keep_p.sum())
    # sessions
    sess_prompts = np.bincount(P["sess"][keep_p], minlength=g.S)
    sess_surf = g.surface
    assist_s = (sess_prompts > 0) & (sess_surf != TEMPLATE)
    chat_s = (sess_prompts > 0) & (sess_surf == CHAT)

    # prompt labels (after removal of conflict victims)
    pl = g.plab
    keep_l = np.ones(pl["p"].size, bool)
    keep_l[victims.get("prompt_labels", np.zeros(0, np.int64))] = False
    win = _resolve_latest(pl["p"][keep_l], pl["judge"][keep_l], pl["at"][keep_l])
    lp = pl["p"][keep_l][win]
    l_int = pl["has_int"][keep_l][win]
    l_cnt = pl["count"][keep_l][win]
    ok = keep_p[lp]
    lp, l_int, l_cnt = lp[ok], l_int[ok], l_cnt[ok]
    l_ret = has_ret[lp]
    no_intent = np.zeros(g.nP, bool)
    no_intent[lp[~l_int]] = True
    tier0 = {
        "labelled_prompts": int(lp.size),
        "misroute": rate((l_ret & ~l_int).sum(), l_ret.sum()),
        "missed_retrieval": rate((l_int & ~l_ret).sum(), l_int.sum()),
        "multi_intent": rate((l_cnt >= 2).sum(), lp.size),
    }
    # scope of Tiers 1-3
    misrouted = keep_r & no_intent[R["prompt"]]
    scope = keep_r & ~misrouted
    role = np.where(R["legacy"], -1, R["role"])
    role_names = {i: n for i, n in enumerate(ROLES)} | {-1: "unknown"}

    # ACR: non-legacy via source id; legacy as the marts resolve them
    acr = R["consumed"] & ~R["legacy"]
    a_idx, a_res = _legacy_resolution(g)
    if a_idx.size:
        agent = (A["actor"][a_idx] == AGENT) & (a_res >= 0)
        same = agent & (A["prompt"][a_idx] == R["prompt"][np.maximum(a_res, 0)])
        acr = acr.copy()
        acr[a_res[same]] = True

    def per_role(flag: np.ndarray | None) -> dict[str, Any]:
        out = {}
        for code, name in role_names.items():
            m = scope & (role == code)
            if flag is None:
                out[name] = int(m.sum())
            else:
                out[name] = rate((m & flag).sum(), m.sum())
        return out

    acr_roles = per_role(acr)
    acr_roles["overall"] = rate((scope & acr).sum(), scope.sum())
    per_surface_empty = {
        s: rate(
            (scope & R["empty"] & (R["surface"] == si)).sum(), (scope & (R["surface"] == si)).sum()
        )
        for si, s in enumerate(SURFACES)
    }

    # cross-session retrieval-driven outcomes (document rule)
    placed_by = (A["atype"] == A_PLACE) & (A["source"] >= 0)
    pd_doc = A["doc"][placed_by]
    pd_ret = A["source"][placed_by]
    good_place = scope[pd_ret]
    pairs = np.unique(pd_doc[good_place] * np.int64(g.nR + 1) + pd_ret[good_place])
    credit_docs, credits = np.unique(pairs // (g.nR + 1), return_counts=True)
    n_credit = np.zeros(g.S, np.int64)
    n_credit[credit_docs] = credits
    cross = (A["sess"] >= g.S) & np.isin(A["atype"], [A_EXPORT, A_SHARE, A_DOWNLOAD])
    cross_doc = A["doc"][cross]
    cross_events = int((n_credit[cross_doc] > 0).sum())
    cross_attr = int(n_credit[cross_doc].sum())

    # goal labels
    gl = g.glab
    keep_g = np.ones(gl["p"].size, bool)
    keep_g[victims.get("goal_labels", np.zeros(0, np.int64))] = False
    gw = _resolve_latest(gl["p"][keep_g], gl["judge"][keep_g], gl["at"][keep_g])
    gp = gl["p"][keep_g][gw]
    gv = gl["goal"][keep_g][gw]
    in_scope_turn = np.bincount(R["prompt"][scope], minlength=g.nP) > 0
    gok = keep_p[gp] & in_scope_turn[gp]

    syn_p = P["syn"]
    exact = {
        "prompts_per_surface": per_surface,
        "sessions": {
            "assistant_sessions": int(assist_s.sum()),
            "chat_sessions": int(chat_s.sum()),
            "template_search_sessions": int(((sess_prompts > 0) & (sess_surf == TEMPLATE)).sum()),
            "prompts_per_assistant_session": rate(sess_prompts[assist_s].sum(), assist_s.sum()),
            "prompts_per_chat_session": rate(sess_prompts[chat_s].sum(), chat_s.sum()),
        },
        "trigger_rate": trig,
        "tier0_labelled": tier0,
        "retrievals": {
            "non_synthetic": int(keep_r.sum()),
            "misrouted_labelled": int(misrouted.sum()),
            "in_scope": int(scope.sum()),
        },
        "empty_result_rate": rate((scope & R["empty"]).sum(), scope.sum()),
        "empty_result_rate_per_surface": per_surface_empty,
        "retrievals_per_role": per_role(None),
        "agent_consumption_per_role": acr_roles,
        "goal_rate": rate((gv & gok).sum(), gok.sum()),
        "cross_session_outcomes": {
            "events": cross_events,
            "attributions": cross_attr,
            "later_sessions": int(g.n_cross_sessions),
        },
        "synthetic": {
            "prompts": int(syn_p.sum()),
            "retrievals": int(R["syn"].sum()),
            "actions": int(A["syn"].sum()),
            "sessions": int(g.syn.sum()),
        },
    }
    pa_ = ~P["syn"] & (P["surface"] != TEMPLATE)
    pr_ = ~R["syn"]
    expected = {
        "note": "population values of latent variables (all non-synthetic prompts), not "
        "what the labelled sample shows: compare with tolerances",
        "intent_rate_assistant": float(P["has_int"][pa_].mean()) if pa_.any() else None,
        "missed_rate_population": float(P["missed"][pa_ & P["has_int"]].mean())
        if (pa_ & P["has_int"]).any()
        else None,
        "misroute_rate_population": float(P["misroute"][pa_ & (P["n_ret"] > 0)].mean())
        if (pa_ & (P["n_ret"] > 0)).any()
        else None,
        "multi_intent_rate_population": float((P["count"][pa_] >= 2).mean()) if pa_.any() else None,
        "legacy_share_retrievals": float(R["legacy"][pr_].mean()) if pr_.any() else None,
        "good_share_per_role": {
            ROLES[i]: float(R["good"][pr_ & (R["role"] == i)].mean())
            for i in range(len(ROLES))
            if (pr_ & (R["role"] == i)).any()
        },
        "naive_rewrite_rate_latent": _latent_rewritten(g),
    }
    return {
        "scope": "non-synthetic traffic, rows staging keeps (conflict victims removed); "
        "misrouted = retrievals of prompts whose resolved prompt label says no intent",
        "exact": exact,
        "expected": expected,
        "assumptions": [
            "labels: human wins over llm, latest wins within a kind",
            "in-scope retrievals: non-synthetic and not misrouted (labelled no-intent "
            "prompt); empty-result rate, roles, ACR, goal rate and cross-session "
            "outcomes use them",
            "ACR: agent action attributed by any rule (legacy sessions: placement then "
            "temporal) in the retrieval's prompt_id on an asset of its returned list",
            "document rule credits every in-scope retrieval that a place action resolved "
            "to in that document before the event; cross-session = event session differs",
            "goal rate: resolved goal labels of prompts with >= 1 in-scope retrieval",
            "prompts per assistant session: non-synthetic prompts / sessions with >= 1 "
            "chat or editor_assistant prompt",
        ],
        "exactness": "'exact' values and replay.realised must be reproduced exactly by "
        "the marts; 'expected' and replay.parameters are targets (use tolerances)",
    }


def _latent_rewritten(g: _Gen) -> dict[str, float | None]:
    """Naive rewrite rate per surface from the latent prompt kinds (non-synthetic)."""
    P = g.P
    nxt = np.full(g.nP, -1, np.int64)
    order = np.lexsort((P["j"], P["sess"]))
    same = P["sess"][order][1:] == P["sess"][order][:-1]
    nxt[order[:-1][same]] = order[1:][same]
    rewritten = (nxt >= 0) & (P["kind"][np.maximum(nxt, 0)] == REWRITE)
    out: dict[str, float | None] = {}
    for si, s in enumerate(SURFACES):
        m = ~P["syn"] & (P["surface"] == si)
        out[s] = float(rewritten[m].mean()) if m.any() else None
    return out


def compute_replay_realised(
    tables: dict[str, pa.Table], cfg: GeneratorConfig, victims: dict[str, np.ndarray]
) -> dict[str, Any]:
    """Spearman(CTU, SRU / proxy), bridge shares and OER on the clean replay rows.

    Exact (the bridge-evidence marts must reproduce them, bootstrap intervals
    aside): computed with the metrics.md definitions (alpha = beta = gamma =
    1, failed replays F1 0, recall 0, turns = replay_turn_cap).
    """

    def clean(t: str) -> pa.Table:
        tbl = tables[t]
        v = victims.get(t)
        if v is None or v.size == 0:
            return tbl
        keep = np.ones(tbl.num_rows, bool)
        keep[v] = False
        return tbl.filter(pa.array(keep))

    docs = clean("replay_documents")
    queries = clean("replay_queries")
    ents = tables["document_entities"]
    d = {
        c: docs[c].to_numpy(zero_copy_only=False)
        for c in docs.column_names
        if docs.schema.field(c).type != _STR  # numbers only (strings: object arrays)
    }
    # enums are normalised by staging (trim + lower-case): " Ok " is ok
    status = pc.utf8_lower(pc.utf8_trim_whitespace(docs["counterfactual_status"]))
    failed = status.to_numpy(zero_copy_only=False) != "ok"
    cap = cfg.replay_turn_cap
    f1c = np.where(failed, 0.0, d["answer_f1_counterfactual"].astype(float))
    rc = np.where(failed, 0.0, d["next_recall_counterfactual"].astype(float))
    tc = np.where(failed, cap, d["turns_counterfactual"].astype(float))
    ctu = (
        (d["answer_f1_original"] - f1c)
        + (d["next_recall_original"] - rc)
        - (d["turns_original"] - tc)
    )
    sru = d["reader_score_with"] - d["reader_score_without"]
    rho, pval = _spearman(ctu, sru)
    proxy = docs["proxy_score"].to_numpy(zero_copy_only=False).astype(float)
    hp = ~np.isnan(proxy)
    rho_p, pval_p = _spearman(ctu[hp], proxy[hp])
    p_sru, p_ctu = _midrank_pct(sru), _midrank_pct(ctu)
    bridge = float(np.mean((p_sru < 0.5) & (p_ctu > 0.5))) if sru.size else None
    pp_sru, pp_ctu = _midrank_pct(proxy[hp]), _midrank_pct(ctu[hp])
    bridge_p = float(np.mean((pp_sru < 0.5) & (pp_ctu > 0.5))) if hp.any() else None
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.register("docs", docs)
    con.register("queries", queries)
    con.register("ents", ents)
    row = con.execute(
        """
        with e as (
            select distinct doc_id, lower(trim(entity)) as entity from ents
        ), units as (
            select d.trajectory_id, d.step_index, e.entity,
                   bool_and(d.is_relevant) as discriminative
            from docs d join e using (doc_id)
            group by 1, 2, 3
        ), scored as (
            select u.*, contains(lower(q.query_text), u.entity) as appears
            from units u join queries q
              on q.trajectory_id = u.trajectory_id and q.step_index = u.step_index + 1
        )
        select
            count(*) filter (where discriminative),
            count(*) filter (where discriminative and appears),
            count(*) filter (where not discriminative),
            count(*) filter (where not discriminative and appears)
        from scored
        """
    ).fetchone()
    con.close()
    nd, ad, nn, an = (int(x or 0) for x in row)
    rate_d = ad / nd if nd else None
    rate_n = an / nn if nn else None
    oer = rate_d / rate_n if rate_d is not None and rate_n else None
    return {
        "n_documents": int(sru.size),
        "n_trajectories": int(pc.count_distinct(docs["trajectory_id"], mode="all").as_py()),
        "failed_replays": int(failed.sum()),
        "spearman_ctu_sru": rho,
        "spearman_ctu_sru_pvalue": pval,
        "n_with_proxy": int(hp.sum()),
        "spearman_ctu_proxy": rho_p,
        "spearman_ctu_proxy_pvalue": pval_p,
        "bridge_cell_share_reader": bridge,
        "bridge_cell_share_proxy": bridge_p,
        "oer": {
            "discriminative_units": nd,
            "discriminative_appear": ad,
            "non_discriminative_units": nn,
            "non_discriminative_appear": an,
            "rate_discriminative": rate_d,
            "rate_non_discriminative": rate_n,
            "ratio": oer,
        },
    }


# --------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------
def _json_ts(ts: pa.ChunkedArray | pa.Array, tz: np.ndarray) -> pa.Array:
    if isinstance(ts, pa.ChunkedArray):
        ts = ts.combine_chunks()
    nulls = np.asarray(ts.is_null().to_numpy(zero_copy_only=False), bool)
    us = ts.cast(_I64).fill_null(0).to_numpy()
    local = us + _TZ_OFFSET_MIN[tz.astype(np.int64)] * 60 * US
    s = np.datetime_as_string(local.astype("datetime64[us]"), unit="ms")
    suffix = pa.array(list(_TZ_SUFFIX), _STR).take(pa.array(tz.astype(np.int64)))
    out = pc.binary_join_element_wise(pa.array(s, _STR), suffix, "")
    return _with_nulls(out, nulls)


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


class _Writer:
    """Writes the output files, several at a time in a thread pool.

    ``write_file`` plans a file (its path is returned at once) and queues the
    writing; every file depends only on its own rows, so the output does not
    depend on the order in which the threads run. ``finish`` waits for all
    files and raises the first error.
    """

    def __init__(self, cfg: GeneratorConfig, out: Path, start: _dt.date):
        self.cfg = cfg
        self.out = out
        self.start = start
        threads = _threads()
        self.pool = ThreadPoolExecutor(max_workers=threads) if threads > 1 else None
        self.futures: list[Future[None]] = []
        self.n_tmp = 0
        self.lock = threading.Lock()

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
            cols[f.name] = _json_ts(col, tz) if f.type == _TS else col
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

    def _write(
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


def _write_table(
    w: _Writer,
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


def _simulate(
    g: _Gen,
    step: Callable[[str], None],
    bar: tqdm,
    on_table: Callable[[str], None] | None = None,
) -> None:
    """All tables and labels, stage by stage.

    Every stage draws from its own random stream (``_rng(seed, stage)``) and
    reads only arrays of earlier stages, so the stages that do not depend on
    each other run in a thread pool without changing the data: the replay
    tables from the start, the tables and labels once the actions are drawn.
    ``on_table(name)`` is called (in the stage's thread) as soon as a table is built.
    """

    def run(stage: Callable[[], None], tables: tuple[str, ...]) -> None:
        stage()
        _trim_heap()
        if on_table is not None:
            for t in tables:
                on_table(t)

    _catalogue()  # shared, built once before the threads start
    threads = _threads()
    with ThreadPoolExecutor(max_workers=max(1, threads - 1)) as pool:
        running: list[Future[None]] = []

        def start(stage: Callable[[], None], tables: tuple[str, ...]) -> None:
            if threads > 1:
                running.append(pool.submit(run, stage, tables))
            else:  # one thread: stage by stage
                run(stage, tables)

        if g.cfg.replay:
            start(g.replay, REPLAY_TABLES)
        step("sessions")
        g.sessions()
        bar.update()
        step("prompts")
        g.prompt_loop()
        g.displayed_ranks()
        _trim_heap()
        bar.update()
        step("actions")
        g.actions()
        _trim_heap()
        bar.update()
        step("tables")
        for stage, tables in (
            (g.build_retrievals, ("retrievals",)),
            (g.build_prompts, ("prompts",)),
            (g.build_actions, ("actions",)),
            (g.relevance_labels, ("relevance_labels",)),
            (g.prompt_labels, ("prompt_labels",)),
            (g.goal_labels, ("goal_labels",)),
            (g.stage_spans, ("stage_spans",)),
        ):
            start(stage, tables)
        for done in running:
            done.result()
    g.drop_id_cache()
    for d in (g.tables, g.dt, g.tz):  # TABLES order, whichever stage finished first
        ordered = {t: d[t] for t in TABLES if t in d}
        d.clear()
        d.update(ordered)
    bar.update(3)


def _trim_heap() -> None:
    """Give freed heap memory back to the OS (glibc only; elsewhere a no-op).

    numpy's many large temporaries are malloc'ed: once freed, glibc keeps most of
    them in its (per-thread) heaps, where pyarrow's allocator cannot reuse them.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


def _preload_scipy() -> None:
    """Import scipy.stats (a second or more) in the background: the replay and
    planted-truth steps use it (normal CDF, Spearman) and find it loaded."""
    with contextlib.suppress(ImportError):
        import scipy.special
        import scipy.stats  # noqa: F401


# --------------------------------------------------------------------------
# entry point
# --------------------------------------------------------------------------
def generate(config: GeneratorConfig, out_dir: Path, progress: bool = True) -> dict:
    """Generate the sample logs into ``out_dir`` and return the manifest.

    Existing ``<out_dir>/<table>`` folders of the contract's tables and
    ``_manifest.json`` are replaced; nothing else in ``out_dir`` is touched.
    """
    from lara import _bad_rows

    cfg = config
    cfg.validate()
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

    g = _Gen(cfg)
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
    w = _Writer(cfg, out, g.start)

    def write(t: str, extras: list[dict[str, Any]]) -> None:
        # TABLES.index(t) = position among the tables written (only the replay
        # tables, the last ones, can be absent): mixed-format alternation
        written[t] = _write_table(w, t, TABLES.index(t), g.tables[t], g.dt[t], g.tz[t], extras)
        if write_early and t not in REPLAY_TABLES:
            g.release_table(t)

    try:
        _simulate(g, step, bar, (lambda t: write(t, [])) if write_early else None)
        step("bad rows")
        if cfg.bad_rows:
            g.candidates()
        injection = _bad_rows.inject(g, cfg)
        bar.update()
        tables_out = [t for t in TABLES if t in g.tables]
        if not write_early:
            for t in tables_out:
                write(t, injection.extras.get(t, []))
        step("planted")
        planted = compute_planted(g, injection.victims)
        replay_info: dict[str, Any] | None = None
        if cfg.replay:
            replay_info = {
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
                    "trajectories": g.replay_latent["T"],
                    "target_oer_ratio": cfg.oer_p_discriminative
                    / max(cfg.oer_p_non_discriminative, 1e-12),
                },
                "latent": g.replay_latent,
                "realised": compute_replay_realised(g.tables, cfg, injection.victims),
            }
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
    params = dataclasses.asdict(cfg)
    params["replay_trajectories_effective"] = g.replay_latent["T"] if cfg.replay else None
    manifest = {
        "generator": "lara.generate",
        "generator_version": GENERATOR_VERSION,
        "parameters": params,
        "layout": {
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
            "json_timestamps": "ISO-8601 with offsets " + ", ".join(_TZ_SUFFIX),
        },
        "tables": table_info,
        "expected_staging": expected,
        "bad_rows": injection.log,
        "planted": planted | {"replay": replay_info},
    }
    manifest = json.loads(json.dumps(manifest, default=_json_default))
    (out / "_manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n")
    return manifest


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

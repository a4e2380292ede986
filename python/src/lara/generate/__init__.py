"""Sample-log generator for lara.

Writes the tables of the log contract (``shared/spec/log-contract.md``; the
tables, columns and validation rules are read from :mod:`lara.contract`) for
a simulated creative-assistant deployment: a template-library search surface
and an assistant (``chat`` + ``editor_assistant``) sharing one retrieval
system and one user base, plus offline labels, per-stage spans and
counterfactual replay tables. Behaviours imitate the LARA paper: low
assistant trigger rate, missed and misrouted retrievals, agent consumption
hiding bad retrievals, chat rewrites that are mostly downstream corrections,
exports in a later editor session that only lineage can credit, legacy logs
without lineage, synthetic traffic, and "bridge documents" in replays.

    from lara.generate import GeneratorConfig, generate
    manifest = generate(GeneratorConfig(sessions=2000, days=3, seed=1), Path("raw"))

Modules
-------
``config``      :class:`GeneratorConfig` (every parameter), threads, the clock
``schema``      tables, file schemas and validation rules from :mod:`lara.contract`;
                the enum code order of the simulation
``vocabulary``  words, topics, the asset catalogue, replay entities
``arrays``      vectorised helpers (random streams, ids, rendering)
``sessions``    sessions, then prompts and retrievals (the latent simulation)
``actions``     user and agent actions, outcomes, cross-session exports
``logs``        table family: prompts, retrievals, actions
``labels``      table family: relevance, prompt and goal labels
``spans``       table family: stage_spans
``replay``      table family: replay_documents, replay_queries, document_entities
``output``      what a family hands on: built table, partition days, ids
``sample``      one run's latent arrays and tables, read by the two below
``bad_rows``    malformed, duplicate and conflicting rows (``bad_rows=True``)
``planted``     the planted truth the marts must reproduce
``writer``      partitions, formats and files
``pipeline``    :func:`generate`: the stages in order, threads, the manifest

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

With ``bad_rows=True`` defective rows are added (see :mod:`lara.generate.bad_rows`):
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
``writer._parquet_options``. Any Parquet reader (DuckDB, pyarrow) reads them.

JSON Lines timestamps are ISO-8601 strings with a mix of ``Z``, ``+00:00``
and non-UTC offsets (``+02:00``, ``-05:00``, ``+05:30``) with the local time
shifted accordingly: consumers must normalise to UTC.

Determinism: same configuration (including seed) gives the same data
content, whatever the output format (formats only change where rows go).
All row-level work is vectorised (numpy / pyarrow); Python loops run over
tables, days, prompt positions within a session, templates or parameters.
Stages that do not depend on each other run in parallel threads and files are
written by a thread pool (``config.THREADS``, environment variable
``LARA_GENERATE_THREADS``): every stage has its own random stream
(``arrays.stream(seed, stage)``) and only reads arrays of earlier stages, and
every file only its own rows, so the output does not depend on thread
scheduling.

Manifest
--------
``<out>/_manifest.json`` (also returned by :func:`generate`) with keys:

``generator``, ``generator_version``, ``parameters`` (all config fields),
``layout`` (partitioning rules), ``tables`` (per table: ``rows_written`` =
raw rows on disk including injected rows, ``files``), ``expected_staging``
(per table ``{"clean", "exact_duplicates", "quarantined": {reason: n}}``
with raw rows = clean + exact_duplicates + sum(quarantined); reasons with
zero rows are omitted), ``bad_rows`` (injection log, see
:mod:`lara.generate.bad_rows`), ``planted`` (``exact``, ``expected``,
``assumptions``, ``replay`` = {``parameters``, ``latent``, ``realised``}; see
:func:`compute_planted` and :func:`compute_replay_realised`).
"""

from lara.generate.config import GeneratorConfig
from lara.generate.pipeline import GENERATOR_VERSION, generate
from lara.generate.planted import compute_planted, compute_replay_realised
from lara.generate.schema import (
    ACTION_TYPES,
    ACTORS,
    CF_STATUSES,
    CONTRACT,
    JUDGES,
    KINDS,
    REASONS,
    REPLAY_TABLES,
    ROLES,
    SCHEMAS,
    STAGES,
    SURFACES,
    TABLES,
)

__all__ = [
    "ACTION_TYPES",
    "ACTORS",
    "CF_STATUSES",
    "CONTRACT",
    "GENERATOR_VERSION",
    "JUDGES",
    "KINDS",
    "REASONS",
    "REPLAY_TABLES",
    "ROLES",
    "SCHEMAS",
    "STAGES",
    "SURFACES",
    "TABLES",
    "GeneratorConfig",
    "compute_planted",
    "compute_replay_realised",
    "generate",
]

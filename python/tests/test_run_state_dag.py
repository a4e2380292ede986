"""The load log is the last node of the DAG: every incremental model is upstream of it.

`lara_incremental_manifest` records what a run loaded and advances the watermark
the next run starts from. dbt skips the nodes downstream of a failed model (or,
in `dbt build`, of a failed data test), so the log only records a run whose
incremental models all succeeded when every one of them is upstream of it;
otherwise a failed aggregate would never recompute the sessions and days of
that run. Checked on the manifest of the shared clean sample's build.

A session or day reached only by a label table (reason `label`) is recomputed
only by the models with that table in their lineage; each model finds those
tables from `graph` when it runs (macro lara_label_tables_read). The macro's
answer, as `dbt run-operation lara_show_label_lineage` prints it, must equal
a walk over the manifest done here in Python.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from lara.dbt import run_dbt

LOG = "model.lara.lara_incremental_manifest"


def _models(clean_sample) -> dict:
    path = Path(clean_sample.warehouse).parent / "target" / "manifest.json"
    nodes = json.loads(path.read_text())["nodes"]
    return {
        key: node
        for key, node in nodes.items()
        if node["resource_type"] == "model" and node["package_name"] == "lara"
    }


def _ancestors(models: dict, key: str, through_run_state: bool = True) -> set[str]:
    seen: set[str] = set()
    stack = [key]
    while stack:
        current = stack.pop()
        node = models.get(current, {})
        if (
            current != key
            and not through_run_state
            and node.get("fqn", [None, None])[1] == "run_state"
        ):
            continue
        for parent in node.get("depends_on", {}).get("nodes", []):
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return seen


def test_every_incremental_model_is_upstream_of_the_load_log(clean_sample):
    models = _models(clean_sample)
    incremental = {
        key
        for key, node in models.items()
        if node["config"]["materialized"] == "incremental" and key != LOG
    }
    assert len(incremental) > 50, sorted(incremental)
    missing = sorted(key.split(".")[-1] for key in incremental - _ancestors(models, LOG))
    assert not missing, f"not upstream of lara_incremental_manifest: {missing}"


def test_the_log_reads_no_model_downstream_of_it(clean_sample):
    # No model reads the log by ref() (base models read it by relation), so it is a leaf.
    models = _models(clean_sample)
    readers = [key for key, node in models.items() if LOG in node["depends_on"]["nodes"]]
    assert not readers, readers


LABEL_TABLES = ("goal_labels", "relevance_labels", "stage_spans", "prompt_label_sample_design")


def test_each_model_recomputes_label_sessions_only_for_the_labels_it_reads(clean_sample, tmp_path):
    result = run_dbt(
        ["run-operation", "lara_show_label_lineage"],
        clean_sample.raw_path,
        clean_sample.warehouse,
        extra_env={
            "DBT_TARGET_PATH": str(tmp_path / "target"),
            "DBT_LOG_PATH": str(tmp_path / "logs"),
        },
        capture=True,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    printed = {
        row["model"]: row["label_tables"]
        for row in (
            json.loads(match) for match in re.findall(r"lara_label_lineage (\{.*\})", result.stdout)
        )
    }
    models = _models(clean_sample)
    expected = {}
    for key, node in models.items():
        if node["config"]["materialized"] != "incremental":
            continue
        # A node is in its own lineage (a base model reads its own table).
        ancestors = _ancestors(models, key, through_run_state=False) | {key}
        expected[node["name"]] = [
            table for table in LABEL_TABLES if f"model.lara.base_lara__{table}" in ancestors
        ]
    assert printed == expected
    # The goal labels are joined where they are used, not in the scope models every model reads.
    for model in (
        "int_prompts_scoped",
        "int_retrievals_scoped",
        "int_retrieval_signals",
        "fct_sessions",
    ):
        assert printed[model] == [], model
    assert printed["fct_retrievals"] == ["goal_labels", "relevance_labels"]
    assert printed["fct_prompts"] == ["goal_labels", "prompt_label_sample_design"]

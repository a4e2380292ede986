"""The load log is the last node of the DAG: every incremental model is upstream of it.

`lara_incremental_manifest` records what a run loaded and advances the watermark
the next run starts from. dbt skips the nodes downstream of a failed model (or,
in `dbt build`, of a failed data test), so the log only records a run whose
incremental models all succeeded when every one of them is upstream of it;
otherwise a failed aggregate would never recompute the sessions and days of
that run. Checked on the manifest of the shared clean sample's build.
"""

from __future__ import annotations

import json
from pathlib import Path

LOG = "model.lara.lara_incremental_manifest"


def _models(clean_sample) -> dict:
    path = Path(clean_sample.warehouse).parent / "target" / "manifest.json"
    nodes = json.loads(path.read_text())["nodes"]
    return {
        key: node
        for key, node in nodes.items()
        if node["resource_type"] == "model" and node["package_name"] == "lara"
    }


def _ancestors(models: dict, key: str) -> set[str]:
    seen: set[str] = set()
    stack = [key]
    while stack:
        for parent in models.get(stack.pop(), {}).get("depends_on", {}).get("nodes", []):
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

"""Documentation coverage (lara.docs_coverage) on the manifest of a real build.

Public marts (schema `marts`, `fct_*` / `agg_*`) must be fully described:
the model and every column it really has in the warehouse. Everything else
is reported (printed; run pytest with -s to see it), and the resources this
layer adds (semantic models, metrics, exposures, the privacy macros, the time
spine) must be complete too. The five public fact marts enforce a model
contract: every column declares its data_type.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lara.docs_coverage import documentation_coverage, is_public_mart

CONTRACTED_MARTS = (
    "fct_retrievals",
    "fct_action_attributions",
    "fct_prompts",
    "fct_sessions",
    "fct_document_utility",
)


@pytest.fixture(scope="module")
def manifest_path(clean_sample) -> Path:
    path = clean_sample.warehouse.parent / "target" / "manifest.json"
    assert path.exists(), "the fixture's dbt build wrote no manifest"
    return path


@pytest.fixture(scope="module")
def report(manifest_path, clean_sample):
    return documentation_coverage(manifest_path, clean_sample.warehouse)


def test_public_marts_are_fully_documented(report):
    public = report.select(public=True)
    names = {r.name for r in public}
    assert {"fct_retrievals", "fct_prompts", "agg_tier2_usage", "agg_ctr"} <= names
    gaps = report.gaps(public=True)
    assert not gaps, "undocumented public marts or columns:\n" + "\n".join(gaps)
    assert report.ratio(public) == 1.0


def test_coverage_of_everything_else_is_reported(report, capsys):
    summary = report.summary()
    for kind in ("model", "source", "seed", "macro", "metric", "semantic_model", "exposure"):
        assert kind in summary, kind
        assert 0.0 <= summary[kind]["coverage"] <= 1.0
    with capsys.disabled():
        print("\n" + report.format())


def test_the_semantic_layer_and_privacy_macros_are_documented(report, manifest_path):
    manifest = json.loads(manifest_path.read_text())
    own_macros = {
        m["name"]
        for m in manifest["macros"].values()
        if m["package_name"] == "lara" and m["original_file_path"].startswith("macros/privacy/")
    }
    assert "lara_hash_user_id" in own_macros
    checked = [
        r
        for r in report.resources
        if r.resource_type in ("semantic_model", "metric", "exposure")
        or (r.resource_type == "macro" and r.name in own_macros)
        or r.name == "metricflow_time_spine"
    ]
    assert len(checked) > 50
    incomplete = [f"{r.resource_type} {r.name}" for r in checked if not r.complete]
    assert not incomplete, incomplete
    exposures = {r.name for r in report.select(resource_type="exposure")}
    assert {"lara_dashboard", "lara_bi_exports"} <= exposures


def test_public_fact_marts_enforce_a_contract(manifest_path):
    manifest = json.loads(manifest_path.read_text())
    models = {
        n["name"]: n
        for n in manifest["nodes"].values()
        if n["resource_type"] == "model" and n["package_name"] == "lara"
    }
    for name in CONTRACTED_MARTS:
        node = models[name]
        assert is_public_mart(node), name
        assert node["config"]["contract"]["enforced"], f"{name}: contract not enforced"
        untyped = [c for c, v in node["columns"].items() if not v.get("data_type")]
        assert not untyped, f"{name}: columns without data_type: {untyped}"


def test_every_macro_source_and_seed_is_described(report):
    """Macros, sources and seeds: 100% (models beyond the public marts are reported)."""
    summary = report.summary()
    for kind in ("macro", "source", "seed"):
        assert summary[kind]["coverage"] == 1.0, (kind, summary[kind])


def test_the_command_reads_the_manifest_dbt_wrote(
    manifest_path, clean_sample, tmp_path, monkeypatch, capsys
):
    # `python -m lara.docs_coverage` without arguments reads the manifest
    # under DBT_TARGET_PATH, where dbt wrote it: here a copy of the build's
    # with one public mart's description removed, which it must report.
    from lara.docs_coverage import main

    manifest = json.loads(manifest_path.read_text())
    manifest["nodes"]["model.lara.fct_retrievals"]["description"] = ""
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.setenv("DBT_TARGET_PATH", str(tmp_path))
    monkeypatch.setenv("LARA_DUCKDB_PATH", str(clean_sample.warehouse))
    assert main([]) == 1
    assert "fct_retrievals" in capsys.readouterr().out

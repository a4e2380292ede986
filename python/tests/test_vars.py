"""Metric parameters (dbt vars) can be overridden without breaking the build.

The README tells users to override the metric parameters with
`dbt build --vars '{lara_k: 5}'`. That only works when every dbt unit test
that depends on a var pins the values its expected rows assume
(`overrides: vars:`); otherwise the user's override reaches the unit test and
fails it. Two tests: a static one over the parsed manifest (every var a unit
test's model reads, directly or through the project's macros, is pinned),
and a real build with `--vars '{lara_k: 5}'` on a small sample: the models and
data tests, then the unit tests selected explicitly (`--select test_type:unit`,
which also overrides a default selector that leaves unit tests out). And a
setting that must be a number stops `dbt parse` with its name when it is not
(LARA_BULK_RUN_SHARE, LARA_THREADS).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import build_sample
from lara.dbt import run_dbt

# Vars no unit test result depends on: where the raw files are and how much an
# incremental run re-reads (unit tests mock their inputs and is_incremental),
# and whether user keys are hashed (no unit test expects a user key; the
# privacy tests check it on a real build).
NOT_MODEL_LOGIC = {"lara_raw_path", "lara_raw_schema", "lara_lookback_days", "lara_expose_user_ids"}
VAR_CALL = re.compile(r"""\bvar\(\s*['"]([A-Za-z0-9_]+)['"]""")
CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def _vars_read(code: str, macros: dict[str, str], seen: set[str] | None = None) -> set[str]:
    """Vars read by `code` and, transitively, by the project macros it calls."""
    seen = set() if seen is None else seen
    found = set(VAR_CALL.findall(code))
    for name in CALL.findall(code):
        for candidate in (name, f"default__{name}", f"duckdb__{name}"):
            if candidate in macros and candidate not in seen:
                seen.add(candidate)
                found |= _vars_read(macros[candidate], macros, seen)
    return found


def test_every_unit_test_pins_the_vars_its_model_reads(clean_sample):
    manifest = json.loads(
        (Path(clean_sample.warehouse).parent / "target" / "manifest.json").read_text()
    )
    macros = {
        m["name"]: m["macro_sql"]
        for m in manifest["macros"].values()
        if m["package_name"] == "lara"
    }
    unit_tests = list(manifest["unit_tests"].values())
    assert len(unit_tests) > 30
    unpinned = {}
    checked = 0
    for test in unit_tests:
        model = manifest["nodes"][test["depends_on"]["nodes"][0]]
        needed = _vars_read(model["raw_code"], macros) - NOT_MODEL_LOGIC
        if needed:
            checked += 1
        pinned = set((test.get("overrides") or {}).get("vars") or {})
        missing = needed - pinned
        if missing:
            unpinned[f"{test['name']} ({model['name']})"] = sorted(missing)
    assert checked >= 10, "the var scan found too few var-dependent unit tests"
    assert not unpinned, f"unit tests that do not pin the vars they depend on: {unpinned}"


@pytest.fixture(scope="module")
def k5_sample(tmp_path_factory):
    from lara.generate import GeneratorConfig

    root = tmp_path_factory.mktemp("k5_sample")
    config = GeneratorConfig(sessions=150, days=2, seed=21, replay=False)
    return build_sample(
        root, config, ["build", "--exclude", "test_type:unit", "--vars", "{lara_k: 5}"]
    )


def test_dbt_build_with_another_k_passes_and_uses_it(k5_sample):
    # The build passed, or build_sample would have raised.
    assert re.search(r"PASS=\d+", k5_sample.build_log)
    assert "ERROR=0" in k5_sample.build_log
    unit = run_dbt(
        ["test", "--select", "test_type:unit", "--vars", "{lara_k: 5}"],
        k5_sample.raw_path,
        k5_sample.warehouse,
        extra_env={
            "DBT_TARGET_PATH": str(k5_sample.warehouse.parent / "target"),
            "DBT_LOG_PATH": str(k5_sample.warehouse.parent / "logs"),
        },
        capture=True,
    )
    log = unit.stdout + unit.stderr
    assert unit.returncode == 0, log[-6000:]
    passed = re.search(r"PASS=(\d+) WARN=\d+ ERROR=0", log)
    assert passed and int(passed.group(1)) >= 30, log[-2000:]
    for mart in ("agg_tier1_quality", "agg_tier1_weighted"):
        assert k5_sample.query(f"select distinct k from marts.{mart}") == [(5,)], mart


def _parse(tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    """`dbt parse` of the project (no raw files needed), output captured."""
    return run_dbt(
        ["parse", *args],
        tmp_path / "raw",
        tmp_path / "lara.duckdb",
        extra_env={
            **(env or {}),
            "DBT_TARGET_PATH": str(tmp_path / "target"),
            "DBT_LOG_PATH": str(tmp_path / "logs"),
        },
        capture=True,
    )


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        # Jinja's float filter reads "0,5" as 0: every run touching a session would be bulk.
        ("LARA_BULK_RUN_SHARE", "0,5"),
        ("LARA_BULK_RUN_SHARE", "-1"),
        # `| int` reads "two" as 0 threads: dbt stopped with a traceback.
        ("LARA_THREADS", "two"),
        ("LARA_THREADS", "0"),
        # ... and "2.5" as 2 threads, silently.
        ("LARA_THREADS", "2.5"),
    ],
)
def test_a_setting_that_is_not_a_number_stops_dbt_with_its_name(tmp_path, setting, value):
    parsed = _parse(tmp_path, env={setting: value})
    log = parsed.stdout + parsed.stderr
    assert parsed.returncode != 0, log[-2000:]
    assert setting in log and f'"{value}"' in log, log[-2000:]
    assert "Traceback" not in log, log[-2000:]


def test_every_var_of_the_project_has_a_kind_checked_when_a_run_starts():
    import yaml

    from lara.paths import project_dir

    project = yaml.safe_load((project_dir() / "dbt_project.yml").read_text())
    checks = (project_dir() / "macros/settings/check_vars.sql").read_text()
    kinds = checks[checks.index("macro lara_var_kinds") : checks.index("endmacro")]
    checked = re.findall(r"\[\s*'([a-z0-9_]+)'\s*,\s*'([a-z_]+)'", kinds)
    assert {name for name, _ in checked} == set(project["vars"])
    assert "{{ lara_check_vars() }}" in project["on-run-start"][0]


def test_a_var_of_the_wrong_kind_stops_dbt_naming_every_such_var(tmp_path):
    bad = {
        "lara_k": "ten",
        "reretrieval_window_days": "7 days",
        "tier1_good_ndcg": 1.5,
        "lara_full_test": "yes",
        "orf_substitution_roles": "find",
        "lara_raw_schema": "raw; drop table marts.fct_retrievals",
        "missed_retrieval_reference_surface": " ",
    }
    parsed = _parse(tmp_path, "--vars", json.dumps(bad))
    log = parsed.stdout + parsed.stderr
    assert parsed.returncode != 0, log[-3000:]
    for name, value in bad.items():
        assert f"var {name} must be " in log and f", got {json.dumps(value)}" in log, name
    assert "Traceback" not in log
    # Numeric text (an environment variable's value) and true numbers pass.
    good = {"lara_k": "5", "research_window_s": 0.5, "ctu_gamma": -1}
    parsed = _parse(tmp_path, "--vars", json.dumps(good))
    assert parsed.returncode == 0, (parsed.stdout + parsed.stderr)[-3000:]

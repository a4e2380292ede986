"""The dbt unit tests (hand-worked inputs and outputs of the metric rules).

Production builds leave them out (selectors.yml: the default selector
`production` excludes resource type unit_test), so `make test` runs them
here, once, against the shared clean sample's warehouse (unit tests read the
column types of their input relations from it).
"""

from __future__ import annotations

import json
import re

from lara.dbt import run_dbt


def _unit_test_ids(sample) -> set[str]:
    listed = run_dbt(
        ["ls", "--selector", "with_unit_tests", "--resource-type", "unit_test", "--output", "json"],
        sample.raw_path,
        sample.warehouse,
        extra_env={"DBT_TARGET_PATH": str(sample.warehouse.parent / "target-unit-ls")},
        capture=True,
    )
    assert listed.returncode == 0, listed.stdout[-3000:]
    names = set()
    for line in listed.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            names.add(json.loads(line)["unique_id"])
    return names


def test_a_plain_build_leaves_unit_tests_out(clean_sample):
    assert "Using default selector production" in clean_sample.build_log
    assert not re.search(r"START unit_test", clean_sample.build_log)


def test_every_dbt_unit_test_passes(clean_sample):
    expected = _unit_test_ids(clean_sample)
    assert len(expected) >= 30, expected
    result = run_dbt(
        ["test", "--selector", "with_unit_tests", "--resource-type", "unit_test"],
        clean_sample.raw_path,
        clean_sample.warehouse,
        extra_env={"DBT_TARGET_PATH": str(clean_sample.warehouse.parent / "target-unit")},
        capture=True,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-6000:]
    summary = re.search(r"PASS=(\d+) WARN=(\d+) ERROR=(\d+) SKIP=(\d+)", log)
    assert summary and summary.group(3) == "0" and summary.group(4) == "0", log[-2000:]
    # Every unit test ran and passed: "<n> of <m> PASS <model>::<unit test>".
    passed = {
        f"unit_test.lara.{model}.{name}"
        for model, name in re.findall(r"\d+ of \d+ PASS (\w+)::(\w+)", log)
    }
    assert passed == expected, sorted(expected ^ passed)

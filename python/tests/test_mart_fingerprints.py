"""No behaviour change: every mart and data-quality table equals its recorded fingerprint.

The fingerprints in python/tests/golden/ were taken from the clean sample and
the bad-rows sample (the shared fixtures of conftest.py: the generator of the
bundled sample, and every kind of malformed row) built by the project as it
was before the issue-19 tidy (macro folders, generated staging YAML, one
semantic folder, the roll-up and scope macros). A refactoring must leave them
equal (mart_fingerprint.py says what is compared and how).

A change that is meant to move numbers (a metric definition, a new column)
rewrites them, in the same commit as the change and docs/metrics-changes.md:

    LARA_WRITE_FINGERPRINTS=1 make test PYTEST_ARGS=python/tests/test_mart_fingerprints.py

(or the same variable with pytest on this file).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import mart_fingerprint

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("sample_name", ["clean_sample", "bad_rows_sample"])
def test_marts_equal_their_fingerprint(sample_name: str, request) -> None:
    sample = request.getfixturevalue(sample_name)
    path = GOLDEN / f"{sample_name}.json"
    actual = mart_fingerprint.fingerprint(sample.warehouse, sample.raw_path)
    if os.environ.get("LARA_WRITE_FINGERPRINTS") == "1":
        mart_fingerprint.write(path, actual)
        pytest.skip(f"wrote {path}")
    expected = mart_fingerprint.read(path)
    problems = mart_fingerprint.differences(expected, actual)
    assert not problems, (
        f"{len(problems)} differences from {path.name} (if the change is meant to move"
        " numbers, rewrite it: see this file's docstring):\n  " + "\n  ".join(problems[:40])
    )


def test_fingerprint_sees_a_changed_value(clean_sample, tmp_path) -> None:
    """The comparison is not vacuous: a changed value, two values swapped
    between rows, and a float moved by 1e-6 are each reported; a float moved
    by 1e-12 (summation order) is not."""
    import shutil

    import duckdb

    copy = tmp_path / "copy.duckdb"
    shutil.copy(clean_sample.warehouse, copy)
    before = mart_fingerprint.fingerprint(copy, clean_sample.raw_path)
    assert before["marts.fct_retrievals"]["rows"] > 0

    def change(*statements: str) -> list[str]:
        nonlocal before
        with duckdb.connect(str(copy)) as con:
            for statement in statements:
                con.execute(statement)
        after = mart_fingerprint.fingerprint(copy, clean_sample.raw_path)
        problems = mart_fingerprint.differences(before, after)
        before = after
        return problems

    pick = "(select {f}(retrieval_id) from marts.fct_retrievals where surface = '{s}')"
    a, b = pick.format(f="min", s="chat"), pick.format(f="min", s="template_search")
    assert change(f"update marts.fct_retrievals set surface = 'chat' where retrieval_id = {b}") == [
        "marts.fct_retrievals.surface: values differ"
    ]
    b = pick.format(f="max", s="template_search")
    swapped = change(
        f"""
        update marts.fct_retrievals
        set surface = case when surface = 'chat' then 'template_search' else 'chat' end
        where retrieval_id in ({a}, {b})
        """
    )
    assert swapped == ["marts.fct_retrievals: the same column values, combined into different rows"]
    assert (
        change("update marts.agg_tier1_quality set ndcg_at_k_sum = ndcg_at_k_sum * (1 + 1e-12)")
        == []
    )
    moved = change("update marts.agg_tier1_quality set ndcg_at_k_sum = ndcg_at_k_sum + 1e-6")
    assert [p.split(":")[0] for p in moved] == ["marts.agg_tier1_quality.ndcg_at_k_sum"], moved

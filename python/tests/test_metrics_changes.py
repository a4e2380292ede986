"""docs/metrics-changes.md: the before/after report reads every number it names."""

from __future__ import annotations

from lara.metrics_changes import CHANGES, report


def test_every_number_of_the_report_is_read_from_the_marts(clean_sample):
    text = report(clean_sample.warehouse, clean_sample.warehouse)
    for change in CHANGES:
        assert f"## {change.title}" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    body = [row for row in rows if not row.startswith("| number |")]
    assert len(body) == sum(len(change.checks) for change in CHANGES)
    for row in body:
        label, before, after, delta = (cell.strip() for cell in row.strip("|").split("|"))
        # the same warehouse on both sides: every value is read, nothing moves
        assert after != "-", label
        assert before == after and delta == "0", row

"""The contract macro is generated from the sources YAML and must not drift."""

from __future__ import annotations

from lara.contract import MACRO_PATH, load_contract, render_macro
from lara.paths import project_dir

CONTRACT_TABLES = [
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
    "label_sample_design",
    "prompt_label_sample_design",
]


def test_contract_macro_matches_sources_yaml():
    committed = (project_dir() / MACRO_PATH).read_text()
    assert committed == render_macro(load_contract()), (
        "macros/contract/log_contract.sql is stale: run `python -m lara.contract --write`"
    )


def test_contract_has_every_table_of_the_log_contract():
    contract = load_contract()
    assert list(contract) == CONTRACT_TABLES
    assert {name for name, table in contract.items() if table.required_table} == {
        "prompts",
        "retrievals",
        "actions",
    }


def test_every_key_column_is_a_required_column():
    for table in load_contract().values():
        for key in table.key:
            assert table.column(key).required, f"{table.name}.{key}"


def test_enums_and_ranges_are_declared():
    contract = load_contract()
    assert contract["prompts"].column("surface").values == (
        "chat",
        "editor_assistant",
        "template_search",
    )
    assert len(contract["retrievals"].column("retrieval_role").values) == 6
    grade = contract["relevance_labels"].column("grade")
    assert (grade.min, grade.max) == (0, 3)


def test_counterfactual_outcomes_are_required_on_ok_replays():
    """metrics.md v2: an `ok` replay without its counterfactual outcomes (a null
    CTU) is quarantined, never dropped from the percentiles. The contract says
    so once (`required_when`), the staging macro and the gate both read it."""
    import duckdb

    from lara.contract import render_macro
    from lara.gate.reader import _required_when_sql

    tables = load_contract()
    table = tables["replay_documents"]
    for name in ("answer_f1_counterfactual", "next_recall_counterfactual", "turns_counterfactual"):
        column = table.column(name)
        assert not column.required
        assert column.required_when == (("counterfactual_status", ("ok",)),)
    assert '"required_when": {"counterfactual_status": ["ok"]}' in render_macro(tables)
    condition = _required_when_sql(table.column("answer_f1_counterfactual"))
    with duckdb.connect() as con:
        con.execute(
            "create table replay_documents as select * from (values "
            "(null, ' OK '), (null, 'ok'), (null, 'timeout'), (0.5, 'ok'), (null, null)"
            ") v(answer_f1_counterfactual, counterfactual_status)"
        )
        flagged = con.execute(
            "select count(*) from replay_documents "
            f"where answer_f1_counterfactual is null and {condition}"
        ).fetchone()[0]
    assert flagged == 2

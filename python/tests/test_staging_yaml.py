"""The base models' YAML is generated from the contract and must not drift."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from lara import staging_yaml
from lara.contract import load_contract
from lara.paths import project_dir
from lara.staging_yaml import BASE_MODELS_PATH, WRITE_COMMAND, render_base_models

HOSTILE = 'It\'s "quoted": {{ not_jinja }}, {% raw %} #1\nsecond line: - [a, b] & *x'


def test_base_models_yaml_matches_the_contract():
    committed = (project_dir() / BASE_MODELS_PATH).read_text()
    assert committed == render_base_models(load_contract()), (
        f"{BASE_MODELS_PATH} is stale: run `{WRITE_COMMAND}`"
    )


def test_check_reports_a_stale_file(tmp_path, monkeypatch, capsys):
    (tmp_path / BASE_MODELS_PATH).parent.mkdir(parents=True)
    (tmp_path / BASE_MODELS_PATH).write_text("version: 2\n")
    monkeypatch.setattr(staging_yaml, "project_dir", lambda: tmp_path)
    assert staging_yaml.main(["--check"]) == 1
    assert WRITE_COMMAND in capsys.readouterr().err
    assert staging_yaml.main(["--write"]) == 0
    assert staging_yaml.main(["--check"]) == 0


def test_every_contract_column_and_bookkeeping_column_is_described():
    document = yaml.safe_load(render_base_models(load_contract()))
    bookkeeping = [c.name for c in staging_yaml.bookkeeping_columns("any")]
    for table, model in zip(load_contract().values(), document["models"], strict=True):
        assert model["name"] == f"base_lara__{table.name}"
        names = [c["name"] for c in model["columns"]]
        assert names == [c.name for c in table.columns] + bookkeeping
        assert all(c["description"] for c in model["columns"])


def test_every_referenced_doc_block_exists():
    defined = set()
    for path in (project_dir() / "models").rglob("*.md"):
        defined |= set(re.findall(r"{%-?\s*docs\s+(\w+)\s*-?%}", path.read_text()))
    text = render_base_models(load_contract())
    referenced = set(re.findall(r'doc\("(\w+)"\)', text))
    assert referenced, "the generated YAML refers to no doc block"
    assert referenced <= defined, f"undefined doc blocks: {sorted(referenced - defined)}"


def _hostile_contract(path: Path) -> Path:
    sources = {
        "version": 2,
        "sources": [
            {
                "name": "lara_raw",
                "tables": [
                    {
                        "name": "hostile",
                        "description": HOSTILE,
                        "meta": {"required_table": False, "key": ["a: b"]},
                        "columns": [
                            {"name": "a: b", "description": HOSTILE, "meta": {"lara_type": "id"}},
                            {"name": "plain", "meta": {"lara_type": "string"}},
                        ],
                    }
                ],
            }
        ],
    }
    path.write_text(yaml.safe_dump(sources, sort_keys=False))
    return path


def test_hostile_descriptions_give_yaml_that_round_trips(tmp_path):
    tables = load_contract(_hostile_contract(tmp_path / "sources.yml"))
    assert tables["hostile"].column("a: b").description == HOSTILE
    text = render_base_models(tables)
    assert yaml.safe_load(text) == staging_yaml.base_models_document(tables)
    model = yaml.safe_load(text)["models"][0]
    columns = {c["name"]: c["description"] for c in model["columns"]}
    assert columns["a: b"] == HOSTILE + ' {{ doc("lara_typed_value") }}'
    assert columns["plain"] == '{{ doc("lara_typed_value") }}'
    assert "&id" not in text and "*id" not in text

"""The scheduler examples (examples/airflow_dag.py, examples/dagster_assets.py).

apache-airflow (about 80 packages, an API server stack) and dagster (about 25,
grpcio and SQLAlchemy among them) are not installed in the project's
environment: their pins would weigh on every developer's and CI's setup for
two example files. So the examples are parsed, not imported: they must be
valid Python, import only what those packages provide, call only commands
that exist with options lara accepts, pass only environment variables lara
reads, and act on lara run's exit codes as the CLI defines them.
"""

from __future__ import annotations

import ast
import re
import shlex

import pytest

from lara import cli
from lara.paths import project_dir

EXAMPLES = {
    "airflow_dag.py": "airflow",
    "dagster_assets.py": "dagster",
}
DBT_COMMANDS = {("source", "freshness"), ("build",)}
COMMAND = re.compile(r"(?:^|[\s/])(lara|dbt)\b((?:[ \t]+[^&|;]+)?)")


def _tree(name: str) -> ast.Module:
    path = project_dir() / "examples" / name
    return ast.parse(path.read_text(), filename=str(path))


def _strings(tree: ast.AST) -> list[str]:
    """Every string constant, f-strings joined with their holes as spaces."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            found.append(
                "".join(
                    part.value if isinstance(part, ast.Constant) else " " for part in node.values
                )
            )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append(node.value)
    return found


def _text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            part.value if isinstance(part, ast.Constant) else " " for part in node.values
        )
    return None


def _commands(tree: ast.AST) -> list[list[str]]:
    """The commands the example runs: Airflow's bash_command= strings and the
    strings the Dagster example passes to its _run(context, command)."""
    texts = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        texts += [_text(k.value) for k in node.keywords if k.arg == "bash_command"]
        if isinstance(node.func, ast.Name) and node.func.id == "_run" and len(node.args) == 2:
            texts.append(_text(node.args[1]))
    commands = []
    for text in texts:
        assert text is not None, "a command that is not a string literal"
        for match in COMMAND.finditer(text):
            commands.append([match.group(1), *shlex.split(match.group(2))])
    return commands


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_parses_and_imports_only_its_scheduler(name):
    tree = _tree(name)
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots.add(node.module.split(".")[0])
    allowed = {EXAMPLES[name], "__future__", "datetime", "os", "shlex", "subprocess", "pendulum"}
    assert roots <= allowed, roots - allowed
    assert EXAMPLES[name] in roots


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_calls_only_commands_that_exist(name):
    commands = _commands(_tree(name))
    assert [c for c in commands if c[0] == "lara"], "no lara command found"
    assert [c for c in commands if c[0] == "dbt"], "no dbt command found"
    parser = cli.build_parser()
    for command in commands:
        if command[0] == "lara":
            args = parser.parse_args(command[1:])  # exits 2 on an unknown command or option
            assert callable(args.func)
        else:
            assert tuple(w for w in command[1:] if not w.startswith("-")) in DBT_COMMANDS, command


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_sets_only_variables_lara_reads(name):
    tree = _tree(name)
    documented = cli.build_parser()._subparsers._group_actions[0].choices["run"].epilog
    names = {text for text in _strings(tree) if re.fullmatch(r"(LARA|DBT)_[A-Z_]+", text)}
    assert {"LARA_RAW_PATH", "LARA_DUCKDB_PATH"} <= names
    assert all(n in documented for n in names), names - {n for n in names if n in documented}


def test_dagster_example_acts_on_lara_run_exit_codes():
    tree = _tree("dagster_assets.py")
    constants = {
        node.targets[0].id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Constant)
    }
    assert constants["EXIT_BUILD_FAILED"] == cli.EXIT_BUILD_FAILED
    assert constants["EXIT_GATE_FAILED"] == cli.EXIT_GATE_FAILED

"""`lara --help` and every sub-command's --help: purpose, environment, exit codes.

Schedulers (cron, Airflow, Dagster) act on exit codes and pass settings
through the environment, so every command documents both where a user looks
first. Every command's help comes from the entry point `lara.cli.main`;
`lara run --help` also from the installed `lara` script.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lara.cli import build_parser, main


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple]:
    """Every sub-command path: ('run',), ('ingest', 'openinference'), ..."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.append((*prefix, name))
                found += _commands(child, (*prefix, name))
    return found


COMMANDS = _commands(build_parser())


def _help(*command: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0
    return out.getvalue()


def test_every_command_is_listed():
    names = {c[0] for c in COMMANDS}
    assert {"run", "check", "generate", "export", "report", "bridge", "mf"} <= names
    assert ("ingest", "openinference") in COMMANDS


@pytest.mark.parametrize("command", [(), *COMMANDS], ids=lambda c: " ".join(c) or "lara")
def test_help_states_purpose_environment_and_exit_codes(command):
    text = _help(*command)
    usage, _, rest = text.partition("\n\n")
    assert usage.startswith("usage: lara")
    purpose = rest.strip().splitlines()[0]
    assert len(purpose) > 20 and purpose.endswith("."), purpose
    assert "environment variables:" in text
    codes = text.split("exit codes:", 1)
    assert len(codes) == 2, "no exit codes"
    listed = re.findall(r"^  ([0-9])  \S", codes[1], re.MULTILINE)
    assert "0" in listed and len(listed) >= 2, listed


def test_run_help_names_what_a_scheduler_needs():
    script = Path(sys.executable).parent / "lara"
    command = [str(script)] if script.exists() else [shutil.which("lara") or "lara"]
    result = subprocess.run([*command, "run", "--help"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for name in ("LARA_RAW_PATH", "LARA_DUCKDB_PATH", "LARA_USER_ID_SALT"):
        assert name in text
    codes = text.split("exit codes:", 1)[1]
    assert re.search(r"^  0  built", codes, re.MULTILINE)
    assert re.search(r"^  1  build failed", codes, re.MULTILINE)
    assert re.search(r"^  2  built, but the data-quality gate failed", codes, re.MULTILINE)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["generate", "--out", "o", "--sessions", "0"], "--sessions: a whole number >= 1, not '0'"),
        (["generate", "--out", "o", "--days", "-5"], "--days: a whole number >= 1, not '-5'"),
        (["generate", "--out", "o", "--days", "0"], "--days: a whole number >= 1, not '0'"),
        (["generate", "--out", "o", "--days", "1.5"], "--days: not a whole number: '1.5'"),
        (
            ["generate", "--out", "o", "--start-date", "2026-13-01"],
            "--start-date: not a date (YYYY-MM-DD): '2026-13-01'",
        ),
        (["run", "--resamples", "0"], "--resamples: a whole number >= 1, not '0'"),
        (["run", "--wait-lock", "-1"], "--wait-lock: a number of seconds >= 0, not '-1'"),
        (["bridge", "--resamples", "-1"], "--resamples: a whole number >= 1, not '-1'"),
        (["label-sample", "--out", "o", "--total", "0"], "--total: a whole number >= 1, not '0'"),
        (["label-sample", "--out", "o", "--total", "5", "--k", "0"], "--k: a whole number >= 1"),
        (
            ["label-sample", "--out", "o", "--total", "5", "--min-per-stratum", "-1"],
            "--min-per-stratum: a whole number >= 0, not '-1'",
        ),
        (["bench", "--days", "0"], "--days: a whole number >= 1, not '0'"),
        (["bench", "--spans", "-1"], "--spans: a whole number >= 0, not '-1'"),
    ],
)
def test_a_number_out_of_range_is_a_usage_error(capsys, monkeypatch, tmp_path, argv, says):
    """argparse stops before anything runs: exit 2, the option named, no traceback,
    nothing written (the relative output folders would land in tmp_path)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"lara {argv[0]}: error: argument {says}" in err, err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_no_option_takes_any_whole_number_but_a_seed():
    """A count, a size or a number of days has a least value (`lara.arguments`): a
    plain `type=int` would let 0 or -3 through to a traceback or an empty result."""

    def parsers(parser, path=()):
        yield path, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    yield from parsers(child, (*path, name))

    plain = [
        (" ".join(path), action.option_strings)
        for path, parser in parsers(build_parser())
        for action in parser._actions
        if action.type in (int, float) and action.dest != "seed"
    ]
    assert plain == []

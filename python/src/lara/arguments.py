"""Types for command-line options: a value out of range is argparse's usage error (the
option named, exit 2) before anything runs, not a traceback from deep in a command."""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Callable


def whole_number(minimum: int) -> Callable[[str], int]:
    """An option's type: a whole number of at least `minimum`."""

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError as error:
            raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from error
        if number < minimum:
            raise argparse.ArgumentTypeError(f"a whole number >= {minimum}, not {value!r}")
        return number

    parse.__name__ = f"whole number >= {minimum}"  # argparse names the type by it
    return parse


def iso_date(value: str) -> dt.date:
    """An option's type: a date as YYYY-MM-DD."""
    try:
        return dt.date.fromisoformat(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {value!r}") from error


def seconds(value: str) -> float:
    """An option's type: a number of seconds, at least 0."""
    try:
        number = float(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from error
    if not number >= 0:
        raise argparse.ArgumentTypeError(f"a number of seconds >= 0, not {value!r}")
    return number

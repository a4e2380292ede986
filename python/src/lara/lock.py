"""One `lara run` at a time per warehouse: a lock file beside it.

`<warehouse>.lock` (e.g. `warehouse/lara.duckdb.lock`) is held with an
exclusive `flock` for the whole run and names its holder (pid, host, command,
since when) as JSON. The kernel drops the `flock` when the holder dies, even
on `kill -9`; the file then still names the dead holder, and the next run
takes the lock over, saying so. A run that finds the lock held either stops
at once (exit code 75, nothing touched) or, with a wait, polls until the lock
is free or the wait is over.

A holder named on another host cannot be checked from here: its lock is only
taken over when the file lock is free *and* the file says it was released;
otherwise the run stops and says which file to delete once that run is known
to be gone.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import shlex
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Holder:
    """Who holds (or last held) a lock."""

    pid: int
    host: str
    command: str
    since: str  # ISO-8601, UTC

    def describe(self) -> str:
        age = ""
        try:
            started = dt.datetime.fromisoformat(self.since)
            minutes = (dt.datetime.now(dt.UTC) - started).total_seconds() / 60
            age = f" ({minutes:.0f} min ago)" if minutes >= 1 else " (under a minute ago)"
        except ValueError:
            pass
        return (
            f"pid {self.pid} on host {self.host}, command `{self.command}`, since {self.since}{age}"
        )


class LockHeld(RuntimeError):
    """Another process holds the lock (or a lock of another host cannot be judged)."""

    def __init__(self, path: Path, holder: Holder | None, waited: float, reason: str) -> None:
        self.path = path
        self.holder = holder
        self.waited = waited
        self.reason = reason
        super().__init__(reason)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def _this_command() -> str:
    argv = [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv else ["lara"]
    return shlex.join(argv)


class RunLock:
    """The lock of one warehouse (a file `<warehouse>.lock` beside it)."""

    def __init__(self, warehouse: Path) -> None:
        warehouse = Path(warehouse)
        self.path = warehouse.with_name(warehouse.name + ".lock")
        self._fd: int | None = None
        self.took_over: Holder | None = None

    # -- the file ------------------------------------------------------------------

    def _read(self, fd: int) -> Holder | None:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 65536).decode("utf-8", "replace").strip()
        if not text:
            return None
        try:
            data = json.loads(text)
            return Holder(
                pid=int(data["pid"]),
                host=str(data["host"]),
                command=str(data["command"]),
                since=str(data["since"]),
            )
        except (ValueError, KeyError, TypeError):
            return Holder(
                pid=0, host="?", command=f"unreadable lock file: {text[:80]!r}", since="?"
            )

    def _write(self, fd: int, holder: Holder) -> None:
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, (json.dumps(asdict(holder)) + "\n").encode())
        os.fsync(fd)

    def holder(self) -> Holder | None:
        """Who the lock file names (None: free, or never used)."""
        if not self.path.exists():
            return None
        fd = os.open(self.path, os.O_RDONLY)
        try:
            return self._read(fd)
        finally:
            os.close(fd)

    # -- acquire / release -----------------------------------------------------------

    def acquire(
        self,
        wait_seconds: float = 0.0,
        log: Callable[[str], None] = print,
        poll_seconds: float = 1.0,
    ) -> None:
        """Take the lock, waiting up to `wait_seconds`; raises LockHeld otherwise."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        started = time.monotonic()
        announced = False
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    holder = self._read(fd)
                    waited = time.monotonic() - started
                    if waited >= wait_seconds:
                        raise LockHeld(self.path, holder, waited, "held") from None
                    if not announced:
                        shown = holder.describe() if holder else "a process starting up"
                        log(
                            f"lara: the warehouse is locked by {shown}; waiting up to "
                            f"{wait_seconds:g} s for it ({self.path})"
                        )
                        announced = True
                    time.sleep(min(poll_seconds, max(wait_seconds - waited, 0.01)))
            previous = self._read(fd)
            if previous is not None:
                if previous.host != socket.gethostname():
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    raise LockHeld(self.path, previous, time.monotonic() - started, "other_host")
                state = "no longer running" if not _pid_alive(previous.pid) else "no longer locking"
                log(
                    f"lara: took over a stale lock: {previous.describe()} ({state}; "
                    "it did not finish cleanly)"
                )
                self.took_over = previous
            if announced:
                log(f"lara: lock acquired after waiting {time.monotonic() - started:.0f} s")
            holder = Holder(
                pid=os.getpid(),
                host=socket.gethostname(),
                command=_this_command(),
                since=dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
            )
            self._write(fd, holder)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        """Free the lock: the file stays, empty (= released)."""
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def held_message(error: LockHeld, warehouse: Path) -> str:
    """What `lara run` prints when it cannot take the lock."""
    holder = error.holder.describe() if error.holder else "a process that is starting up"
    if error.reason == "other_host":
        return (
            f"lara: the warehouse {warehouse} was locked by {holder}, which did not release "
            f"it. lara cannot tell from this host whether that run is still going: once it "
            f"is known to be gone, delete {error.path} and rerun. Nothing was done."
        )
    waited = f" after waiting {error.waited:.0f} s" if error.waited >= 1 else ""
    return (
        f"lara: another `lara run` is using the warehouse {warehouse}: {holder}. "
        f"Lock file: {error.path}. Nothing was done{waited}; wait for it to finish, or rerun "
        "with --wait-lock SECONDS (exit code 75 = locked, try again later)."
    )

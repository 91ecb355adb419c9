"""Servers meeple runs as child processes of its own (the tests' and the embedded
PostgreSQL, the NATS server of a cluster on one machine): how they die with their
parent, how they are stopped, and what their log said last."""

from __future__ import annotations

import ctypes
import logging
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

__all__ = ["ChildServer", "die_with_parent", "log_tail", "stop_child"]

logger = logging.getLogger(__name__)


def die_with_parent(sig: signal.Signals) -> Callable[[], None] | None:
    """A preexec function asking Linux to send ``sig`` to the child when the thread that
    started it dies, however it dies (``PR_SET_PDEATHSIG``); None off Linux.

    subprocess changes the child's user before it calls the preexec function, so this is
    set after (a change of credentials clears it). The libc function is looked up here,
    before the fork.
    """
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    pr_set_pdeathsig = 1

    def preexec() -> None:
        prctl(pr_set_pdeathsig, sig)

    return preexec


def stop_child(
    proc: subprocess.Popen[bytes] | None,
    escalation: Sequence[tuple[signal.Signals, float]],
    name: str,
) -> None:
    """Send each signal in turn, waiting its seconds for ``proc`` to exit, until it has."""
    if proc is None or proc.poll() is not None:
        return
    for sig, wait in escalation:
        proc.send_signal(sig)
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            logger.warning("%s %d ignored %s", name, proc.pid, sig.name)


def log_tail(path: Path | None, size: int = 2000) -> str:
    """The last ``size`` characters of a child's log file ('' when there is none)."""
    if path is None:
        return ""
    try:
        return path.read_text(errors="replace")[-size:]
    except OSError:
        return ""


class ChildServer:
    """A server in a child process, used as a context manager: started on entry, stopped
    on exit (subclasses define :meth:`start` and :meth:`stop`; stop is safe twice)."""

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

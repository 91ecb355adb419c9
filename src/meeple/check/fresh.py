"""One check per fresh start of the target (issue 31.8): ``--fresh COMMAND``.

Some servers host one game and then must be restarted, or break down after a check
that upsets them (the AM27 group's Java server, run check after check, stopped
accepting connections). :func:`run_fresh` starts ``COMMAND`` (a shell command line) in
a session of its own before each check, waits until the target's port accepts a
connection, runs that one check (:func:`~meeple.check.core.run_checks`, so a target
that stops answering is still said once), then stops the whole session: SIGTERM, and
SIGKILL if it is still there after a grace period. A command that exits, or does not
listen in time, makes the check "could not test", with the end of what it wrote on
stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from meeple.check.core import Check, Fault, Probe, Result, Status, Step, _selects, run_checks

__all__ = ["Fresh", "run_fresh"]

STDERR_TAIL = 600  # bytes of the command's stderr a failed start shows


@dataclass(frozen=True, slots=True)
class Fresh:
    """How to start the target afresh for each check, and how long to give it."""

    command: str
    start_timeout: float = 30.0  # until its port accepts a connection
    stop_grace: float = 5.0  # after SIGTERM, before SIGKILL
    poll: float = 0.05  # between two tries to connect while it starts


class _Started:
    """A started command: its process and the tail of its stderr."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.stderr = bytearray()
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.proc.stderr is not None
        with contextlib.suppress(Exception):
            while chunk := await self.proc.stderr.read(4096):
                self.stderr += chunk
                del self.stderr[:-STDERR_TAIL]

    async def stop(self, grace: float) -> None:
        """The command's whole session ended: SIGTERM, then SIGKILL after ``grace``."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if self.proc.returncode is not None:
                break
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)
            try:
                await asyncio.wait_for(self.proc.wait(), grace)
            except TimeoutError:
                continue
        # Its children may outlive it in the session: end them too.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self._reader.cancel()


async def _start(fresh: Fresh, target: Any) -> tuple[_Started, str | None]:
    """Start the command; None once the target's port accepts, else why not."""
    proc = await asyncio.create_subprocess_shell(
        fresh.command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    started = _Started(proc)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + fresh.start_timeout
    where = f"{target.host}:{target.port}"
    while True:
        if proc.returncode is not None:
            return started, f"the command exited (status {proc.returncode}) before {where} listened"
        try:
            _, writer = await asyncio.wait_for(
                asyncio.open_connection(target.host, target.port), fresh.poll * 10
            )
        except (OSError, TimeoutError):
            if loop.time() >= deadline:
                return started, f"nothing listened at {where} within {fresh.start_timeout:g} s"
            await asyncio.sleep(fresh.poll)
            continue
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
        return started, None


async def run_fresh(
    checks: Sequence[Check],
    target: Any,
    fresh: Fresh,
    *,
    wait: float = 3.0,
    only: Sequence[str] = (),
    progress: Callable[[Result], None] | None = None,
    waiting: Callable[[Check, float], None] | None = None,
    probe: Probe | None = None,
) -> list[Result]:
    """Each check (those ``only`` selects) against a target started for it alone."""
    results: list[Result] = []
    for check in checks:
        if only and not any(_selects(o, check.id) for o in only):
            continue
        began = time.monotonic()
        started, failed = await _start(fresh, target)
        try:
            if failed is not None:
                await asyncio.sleep(0)  # let the stderr reader take the last bytes
                fault = Fault(
                    f"the --fresh command did not start the server: {failed}",
                    f"check that {fresh.command!r} starts the server at "
                    f"{target.host}:{target.port} and stays up",
                    sections=("connection",),
                    evidence=bytes(started.stderr),
                    stopped=True,
                )
                result = Result(
                    check,
                    Status.COULD_NOT_TEST,
                    f"blocked by {fault.name}",
                    time.monotonic() - began,
                    step=Step(f"start {fresh.command}", "connection"),
                    got=bytes(started.stderr),
                    fault=fault,
                )
                if progress is not None:
                    progress(result)
                results.append(result)
                continue
            if waiting is not None and time.monotonic() - began > 2:
                waiting(check, time.monotonic() - began)
            results += await run_checks(
                [check], target, wait=wait, progress=progress, waiting=waiting, probe=probe
            )
        finally:
            await started.stop(fresh.stop_grace)
    return results

"""Takeover between real processes: SIGSTOP a room's owner, let another process take the
room over when the lease lapses, SIGCONT the old one: its next append is refused, and
the log holds every acknowledged append once, in order (tests/cluster/owner.py)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

import pytest
from nats.aio.client import Client
from tests.natsd import NatsEnv
from tests.patience import PATIENCE

from meeple.bus.subjects import Namespace
from meeple.cluster.jetstream import JetStreamBackplane
from meeple.cluster.log import JetStreamLog
from meeple.server.store.database import Store

ROOT = Path(__file__).resolve().parents[2]
GENESIS = {"version": 1, "game": "counting", "record": {"players": ["ann", "bob"]}}


class Owner:
    """One ``tests.cluster.owner`` process and the lines it printed."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []

    @classmethod
    async def start(
        cls, env: NatsEnv, ns: Namespace, uid: str, name: str, records: Path, *hold: str
    ) -> Owner:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.cluster.owner",
            *("--url", env.url, "--user", env.NODE_USER, "--password", env.node_password),
            *("--ns", ns.root, "--uid", uid, "--name", name, "--records", str(records)),
            *hold,
            cwd=ROOT,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            # The tree under test first (a worktree beside an installed checkout).
            env={**os.environ, "PYTHONPATH": os.pathsep.join((str(ROOT / "src"), str(ROOT)))},
        )
        return cls(proc)

    async def until(self, prefix: str, timeout: float = PATIENCE) -> str:
        """Read lines until one starts with ``prefix``; that line."""
        assert self.proc.stdout is not None

        async def read() -> str:
            assert self.proc.stdout is not None
            while True:
                raw = await self.proc.stdout.readline()
                if not raw:
                    raise AssertionError(f"exited without {prefix!r}: {self.lines}")
                line = raw.decode().strip()
                self.lines.append(line)
                if line.startswith(prefix):
                    return line

        return await asyncio.wait_for(read(), timeout)

    def appended(self) -> list[int]:
        return [int(x.split()[1]) for x in self.lines if x.startswith("appended ")]

    async def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
        await self.proc.wait()


@pytest.mark.slow
async def test_a_stopped_owner_that_wakes_up_cannot_append(
    nats_env: NatsEnv, nats_ns: Namespace, node: Client, tmp_path: Path
) -> None:
    """A owns the room and appends; SIGSTOP A; B waits for the lease to lapse and claims
    the log (replaying A's entries), but appends nothing yet; SIGCONT A: A's next append
    is refused although its sequence is the log's next (the claim fenced it out); then B
    appends, and the log is A's acknowledged appends then B's, each once, without a gap."""
    records = Store(tmp_path / "records.sqlite3")
    log = JetStreamLog(JetStreamBackplane(node), nats_ns, records)
    await log.open_log("r1", "counting", GENESIS)
    a = await Owner.start(nats_env, nats_ns, "r1", "A", tmp_path / "records.sqlite3")
    b: Owner | None = None
    try:
        await a.until("claimed")
        for _ in range(5):
            await a.until("appended")
        a.proc.send_signal(signal.SIGSTOP)
        b = await Owner.start(nats_env, nats_ns, "r1", "B", tmp_path / "records.sqlite3", "--hold")
        claimed = (await b.until("claimed")).split()
        replayed = int(claimed[2])
        a.proc.send_signal(signal.SIGCONT)
        refused = await a.until("refused")
        assert await asyncio.wait_for(a.proc.wait(), PATIENCE) == 3
        assert b.proc.stdin is not None
        b.proc.stdin.write(b"go\n")
        await b.proc.stdin.drain()
        for _ in range(5):
            await b.until("appended")
        b.proc.send_signal(signal.SIGSTOP)  # B's log is now still, to compare
        # Every append A was told about is in the log, before B's claim; A's refused
        # sequence was B's to write.
        assert a.appended() == list(range(1, replayed + 1))
        assert int(refused.split()[1]) == replayed + 1
        entries = await log.action_log("r1")
        assert entries is not None
        seqs = [e.seq for e in entries.entries]
        assert seqs == list(range(1, len(seqs) + 1))
        by = [e.entry["action"]["by"] for e in entries.entries]
        assert by == ["A"] * replayed + ["B"] * (len(seqs) - replayed)
        assert len(seqs) - replayed >= 5
    finally:
        await a.kill()
        if b is not None:
            await b.kill()
        records.close()

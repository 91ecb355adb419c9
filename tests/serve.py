"""`meeple serve` as a real process for the durability tests: every port 0, the ports read
from its log, stopped with SIGKILL as a crash stops it (or SIGTERM), stderr drained."""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection

from meeple.protocols.web import PROTOCOL

__all__ = ["LISTENERS", "Serve", "next_of", "web_client"]

LISTENERS = ("twente", "clarkson", "cmpn402", "santorini", "spectrangle", "web")
_LISTENING = re.compile(r"(\w+):? listening on (?:http://)?127\.0\.0\.1:(\d+)")


class Serve:
    """One ``meeple serve`` process on ``database``; ``ports`` once it listens."""

    def __init__(
        self, database: str | Path, *extra: str, timeout: float = 60, nofile: int | None = None
    ) -> None:
        args = [sys.executable, "-m", "meeple", "serve", "--database", str(database)]
        for name in LISTENERS:
            args += [f"--{name}-port", "0"]
        if "--lexicon" not in extra:
            # The tests' clients choose their words with the gcide fixture: the server
            # judges with the same list (the default, Wordnik, would refuse some).
            args += ["--lexicon", "gcide"]
        self.lines: list[str] = []
        self.ports: dict[str, int] = {}
        self._ready = threading.Event()

        def limit() -> None:  # nofile: RLIMIT_NOFILE soft and hard, as `ulimit -n`
            if nofile is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self.proc = subprocess.Popen(
            [*args, *extra],
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ),
            preexec_fn=limit if nofile is not None else None,
        )
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        if not self._ready.wait(timeout):
            self.kill()
            raise AssertionError("the server did not start listening:\n" + self.log)
        self.listening_at = time.monotonic()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            match = _LISTENING.search(line)
            if match:
                self.ports[match.group(1)] = int(match.group(2))
                if set(LISTENERS) <= self.ports.keys():
                    self._ready.set()
        self._ready.set()  # exited: the waiter looks at the log

    @property
    def log(self) -> str:
        return "".join(self.lines)

    def kill(self) -> None:
        """SIGKILL: no goodbye, no flush, nothing but what is already on disk survives."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self._close()

    def stop(self) -> int:
        """SIGTERM: the graceful shutdown; the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(20)
        self._close()
        return code

    def _close(self) -> None:
        self._reader.join(5)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


async def web_client(port: int) -> ClientConnection:
    """A meeple-web/1 connection to the web listener on ``port``, past hello."""
    ws = await websockets.connect(f"ws://127.0.0.1:{port}/ws", max_size=2**22)
    await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL}))
    assert json.loads(await ws.recv())["type"] == "welcome"
    return ws


async def next_of(ws: ClientConnection, kind: str, timeout: float = 30) -> dict[str, Any]:
    """The next message of type ``kind`` on ``ws`` (others are skipped)."""
    while True:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), timeout))
        if message["type"] == kind:
            return message


def assert_stored_as_logged(
    store: Any, scores: dict[str, int], lexicon: Any, logs: Any = None
) -> None:
    """The store holds one finished game, with ``scores``, closed on its room's log: the
    record's actions are the log's, it replays to the end, and no log is left open.
    ``logs``: where the logs are read (``meeple.node.logfile.room_logs``; the store's
    own table unless told)."""
    from meeple.games import records

    logs = store if logs is None else logs
    [stored] = store.games()
    assert stored.result["scores"] == scores
    assert stored.data is not None
    log = logs.action_log(stored.data["uid"])
    assert log is not None
    assert log.game_id == stored.id
    assert [e.entry["action"] for e in log.entries] == stored.data["actions"]
    assert list(records.replay(stored.data, lexicon=lexicon))[-1].game.is_over
    assert logs.open_logs() == []

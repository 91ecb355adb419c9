"""An AM27 server that hosts one game at a time, like the AM27 group's Java server.

meeple's AM27 server behind a relay: while a game runs (from PLAYERSMESSAGE until its
players have had ENDGAME or gone), a new connection gets SERVERSTATE ``open: false``
(§2.1: not accepted) and is closed. A game whose players closed their connections
is over only ``linger`` seconds later (the Java server notices a gone player by its
heartbeat), so the kit's next check meets ``open: false`` first. With ``once`` it
stops listening when its first game is over (a server that must be restarted).

As a command, for ``meeple check server santorini --fresh``::

    python -m tests.check.one_game PORT [--once]
"""

from __future__ import annotations

import asyncio
import random
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from tests.check.broken import Mangler

from meeple.check.santorini import object_stream_units
from meeple.protocols.santorini import STREAM_HEADER, ServerState
from meeple.protocols.santorini.framing import ObjectStreamEncoder
from meeple.server.app import MeepleServer
from meeple.server.config import SantoriniConfig, ServerConfig

__all__ = ["OneGame", "main"]


class OneGame(Mangler):
    """One game at a time in front of meeple's AM27 listener at ``upstream``."""

    def __init__(
        self, upstream: int, *, once: bool = False, port: int = 0, linger: float = 0.4
    ) -> None:
        super().__init__(upstream, b"", cut=object_stream_units, relay=self._relay)
        self.once = once
        self.linger = linger
        self.busy_until = 0.0
        self.listen_port = port
        self.playing: set[asyncio.Task[None]] = set()  # connections in the running game
        self.games = 0
        self.turned_away = 0
        self.over = asyncio.Event()  # (once) the first game is over

    async def __aenter__(self) -> OneGame:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.listen_port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def _relay(self, write: object) -> tuple[object, object]:
        task = asyncio.current_task()
        assert task is not None

        def to_client(unit: bytes) -> bytes:
            if b'"type":"PLAYERSMESSAGE"' in unit:
                if not self.playing:
                    self.games += 1
                self.playing.add(task)  # type: ignore[arg-type]
            elif b'"type":"ENDGAME"' in unit:
                self._leaves(task)  # type: ignore[arg-type]
            return unit

        return to_client, (lambda chunk: chunk)

    def _leaves(self, task: asyncio.Task[None], *, closed: bool = False) -> None:
        if task in self.playing:
            self.playing.discard(task)
            if self.playing:
                return
            loop = asyncio.get_running_loop()
            linger = self.linger if closed else 0.0
            self.busy_until = loop.time() + linger
            if self.once:
                loop.call_later(linger, self._stop)

    def _stop(self) -> None:
        if self._server is not None:
            self._server.close()  # a server that must be restarted after a game
        self.over.set()

    @property
    def busy(self) -> bool:
        return bool(self.playing) or asyncio.get_running_loop().time() < self.busy_until

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.busy:  # §2.1: open false, the client is not accepted
            self.turned_away += 1
            unit = ObjectStreamEncoder().encode(ServerState(False, False).encode())
            writer.write(STREAM_HEADER + unit)
            await writer.drain()
            writer.close()
            return
        task = asyncio.current_task()
        try:
            await super()._handle(reader, writer)
        finally:
            self._leaves(task, closed=True)  # type: ignore[arg-type]


async def serve(port: int, once: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = ServerConfig(database=str(Path(tmp) / "am27.sqlite3")).only("santorini")
        config = replace(config, santorini=SantoriniConfig(heartbeat_timeout=1.0))
        srv = MeepleServer(config, rng=random.Random(27))
        await srv.start()
        try:
            async with OneGame(srv.ports["santorini"], once=once, port=port) as one:
                await (one.over.wait() if once else asyncio.Event().wait())
                await asyncio.Event().wait()  # stopped listening; the kit stops the process
        finally:
            await srv.stop()


def main(argv: list[str]) -> None:
    asyncio.run(serve(int(argv[0]), "--once" in argv))


if __name__ == "__main__":
    main(sys.argv[1:])

"""A TCP relay between a process and a server, that a test cuts or silences: what a
lost network does to a connection, without stopping a server other tests share."""

from __future__ import annotations

import asyncio
import contextlib


class Relay:
    """Listens on 127.0.0.1 (a free port, kept across :meth:`cut` and :meth:`restore`)
    and pipes each connection to ``host:port``.

    - :meth:`cut`: every connection closed, the port closed (a connection is refused);
    - :meth:`freeze`: nothing forwarded any more and nothing closed (a silent network:
      no FIN, no RST), new connections accepted and held;
    - :meth:`restore`: the port open again and bytes flowing again.
    """

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            await self._flowing.wait()
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            self._writers.discard(writer)
            return
        self._writers.add(up_writer)
        for src, dst in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.get_running_loop().create_task(self._pump(src, dst))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pump(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(65536):
                await self._flowing.wait()
                dst.write(data)
                await dst.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            dst.close()
            self._writers.discard(dst)

    def freeze(self) -> None:
        self._flowing.clear()

    async def cut(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            writer.close()
        self._writers.clear()

    async def restore(self) -> None:
        self._flowing.set()
        if self._server is None:
            await self.start()

    async def close(self) -> None:
        self._flowing.set()
        await self.cut()
        for task in list(self._tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

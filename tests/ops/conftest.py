"""Fixtures and helpers of the operations tests (issue 35): a Spectrangle server on port 0
with its metrics port, raw Spectrangle peers, and a scrape of ``/metrics`` parsed by
prometheus_client's own parser."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from tests.patience import PATIENCE

import meeple.server.rooms.spectrangle as spectrangle_server
from meeple.ai.spectrangle import greedy_action
from meeple.games import spectrangle as engine
from meeple.games.spectrangle import TILE_SET, Game
from meeple.protocols.spectrangle import messages_for
from meeple.server.app import LISTENERS, MeepleServer
from meeple.server.config import ServerConfig

ONLY_SPECTRANGLE = {"spectrangle": LISTENERS["spectrangle"]}
# Samples by (name, sorted labels).
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def bag(seed: int = 7) -> list[Any]:
    """The deal of every game in these tests (a replica can follow it)."""
    tiles = list(TILE_SET)
    random.Random(seed).shuffle(tiles)
    return tiles


@pytest.fixture
def known_deal(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every Spectrangle room deals :func:`bag`; the players of each game, in turn order."""
    games: list[list[str]] = []

    def new_game(players: list[str], rng: random.Random) -> Game:
        games.append(list(players))
        return Game(players, bag=bag())

    monkeypatch.setattr(spectrangle_server, "new_game", new_game)
    return games


def command_for(action: engine.Action) -> str:
    if isinstance(action, engine.Place):
        return f"place {action.tile} on {action.index}"
    if isinstance(action, engine.Exchange):
        return f"exchange {action.tile}"
    return "skip"


async def play_out(peers: dict[str, Raw], players: list[str], moves: int | None = None) -> None:
    """The greedy player's moves for everyone, each line checked against a replica game,
    to the game's end (or ``moves`` moves)."""
    replica = Game(players, bag=bag())
    played = 0
    while replica.turn is not None and (moves is None or played < moves):
        action = greedy_action(replica, replica.turn)
        peers[players[replica.turn]].send(command_for(action))
        expected = [m.to_line() for m in messages_for(replica, replica.apply(action))]
        for peer in peers.values():
            for line in expected:
                assert await peer.next() == line
        played += 1


def make_server(tmp_path: Path, **settings: Any) -> MeepleServer:
    settings = {"database": str(tmp_path / "meeple.sqlite3"), **settings}
    config = ServerConfig(metrics_port=0, **settings)
    return MeepleServer(
        config.only("spectrangle"), rng=random.Random(5), listeners=ONLY_SPECTRANGLE
    )


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[MeepleServer]:
    """Spectrangle and the metrics port, each on a free port."""
    srv = make_server(tmp_path)
    await srv.start()
    yield srv
    await srv.stop()


def ops_port(server: MeepleServer, name: str = "metrics") -> int:
    return next(o.port for o in server.ops if o.name == name)


async def http_get(port: int, path: str, host: str = "127.0.0.1") -> tuple[int, str]:
    """A GET over a real socket: (status, body)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
    data = await asyncio.wait_for(reader.read(-1), PATIENCE)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body.decode()


async def scrape(port: int) -> Samples:
    """``/metrics`` parsed with prometheus_client's parser."""
    status, text = await http_get(port, "/metrics")
    assert status == 200
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


class Raw:
    """A raw-lines Spectrangle peer."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.buffer = b""

    @classmethod
    async def connect(cls, server: MeepleServer, name: str) -> Raw:
        peer = cls(*await asyncio.open_connection("127.0.0.1", server.ports["spectrangle"]))
        peer.send(f"connect {name}")
        assert await peer.next() == "welcome"
        return peer

    def send(self, line: str) -> None:
        self.writer.write(line.encode() + b"\n")

    async def next(self, timeout: float = 5.0) -> str:
        while b"\n" not in self.buffer:
            chunk = await asyncio.wait_for(self.reader.read(4096), timeout)
            assert chunk, f"connection closed; buffer {self.buffer!r}"
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()

    async def until(self, prefix: str) -> str:
        while not (line := await self.next()).startswith(prefix):
            pass
        return line

    def close(self) -> None:
        self.writer.close()


async def two_players(server: MeepleServer, first: str = "p1", second: str = "p2") -> list[Raw]:
    """``first`` and ``second`` request a game of two; returned once it has started."""
    a = await Raw.connect(server, first)
    b = await Raw.connect(server, second)
    a.send("request 2")
    await a.until("waiting")
    b.send("request 2")
    for peer in (a, b):
        await peer.until("tiles")
    return [a, b]


def ops_node(
    name: str, nats_url: str, nats_env: Any, ns: Any, server: ServerConfig | None = None
) -> Any:
    """A rooms and lobby node of the test's namespace with metrics and health ports of its
    own (port 0), on ``nats_url`` (the session's NATS, or a relay to it)."""
    from meeple.node.node import Node, NodeConfig

    return Node(
        NodeConfig(
            name=name,
            roles=frozenset({"rooms", "lobby"}),
            nats_url=nats_url,
            nats_user=nats_env.NODE_USER,
            nats_password=nats_env.node_password,
            namespace=ns.root,
            server=server or ServerConfig(),
            metrics_port=0,
            health_port=0,
        )
    )


def node_port(node: Any, name: str) -> int:
    """The port of a node's ``metrics`` or ``health`` listener."""
    port: int = next(o.port for o in node.ops if o.name == name)
    return port

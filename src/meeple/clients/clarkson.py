"""An async client for the Clarkson Scrabble protocol, for anyone writing a bot or UI.

::

    client = await ClarksonClient.connect("127.0.0.1", 9000, "Alice")
    await client.ready()
    async for message in client:            # every server message, in order
        if isinstance(message, Turn) and client.my_turn:
            await client.place([Placement(7, 7, "H"), Placement(7, 8, "I")])

Besides handing on messages the client keeps what a player can know: the users at the
table (USERJOIN/USERCHANGE), the board (BOARDPUSH), its hand (TILES), every score
(SCORE), whose turn it is (TURN) and the winners (WINNER). :func:`play_clarkson`
is a bot that plays whole games with the best-scoring AI.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import platform
import sys
from collections.abc import AsyncIterator, Iterable

from meeple.ai.scrabble import ExchangeChoice, PassChoice, choose
from meeple.clients.scrabble_bot import MAX_RETRIES, BotResult
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Placement
from meeple.games.scrabble.tiles import CLARKSON
from meeple.protocols.clarkson.messages import (
    BoardPush,
    ClientMessage,
    Exchange,
    Goodbye,
    Hello,
    Nok,
    Ok,
    Pass,
    Place,
    Quit,
    Ready,
    Score,
    ServerMessage,
    Starting,
    Tiles,
    Turn,
    UserChange,
    UserJoin,
    UserSet,
    Winner,
    meeple_hello,
)
from meeple.protocols.clarkson.session import ClientSession, ConnectionClosed

__all__ = ["ClarksonClient", "ClarksonClientError", "NameRefused", "play_clarkson", "run_bot"]

logger = logging.getLogger(__name__)

READ_SIZE = 65536
BAG_SIZE = 100  # RFC §4: 98 letters and 2 random ones


class ClarksonClientError(Exception):
    """The server refused us (version, name) or the connection ended early."""


class NameRefused(ClarksonClientError):
    """The server answered USERSET with NOK (§3.5): the name is taken or not allowed."""


class ClarksonClient:
    """One connection to a Clarkson server. Create it with :meth:`connect`."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self.session = ClientSession()
        self._pending: list[ServerMessage] = []
        self.server_hello: Hello | None = None
        self.name = ""
        self.users: list[str] = []  # the others at the table, as USERJOIN named them
        self.players: list[str] = []  # the game's players, from the opening SCOREs
        self.scores: dict[str, int] = {}
        self.board = Board()
        self.rack = ""
        self.turn: str | None = None
        self.winners: list[Winner] = []
        self.last_nok: Nok | None = None
        self._asked: str | None = None  # the name of a USERSET awaiting its USERCHANGE

    @classmethod
    async def connect(cls, host: str, port: int, name: str | None = None) -> ClarksonClient:
        """Connect, exchange HELLO (§3.1) and, if ``name`` is given, USERSET it (§3.5)."""
        reader, writer = await asyncio.open_connection(host, port)
        client = cls(reader, writer)
        try:
            hello = await client.receive()
            if not isinstance(hello, Hello):
                raise ClarksonClientError(f"the server did not say HELLO: {hello}")
            client.server_hello = hello
            await client._send(meeple_hello(platform.platform()))
            reply = await client.receive()
            if not isinstance(reply, Ok):
                raise ClarksonClientError(f"not welcomed: {reply}")
            if name is not None:
                await client._send(UserSet(name))
                while True:
                    reply = await client.receive()
                    if isinstance(reply, UserChange) and reply.new == name:
                        break
                    if isinstance(reply, Nok):
                        raise NameRefused(f"name refused: {reply.description}")
        except BaseException:
            await client.close()
            raise
        return client

    # --- actions ------------------------------------------------------------------------

    @property
    def my_turn(self) -> bool:
        """Whether the last TURN handed out named this client (and the game is on)."""
        return self.turn is not None and self.turn == self.name

    async def ready(self) -> None:
        await self._send(Ready())

    async def place(self, placements: Iterable[Placement]) -> None:
        await self._send(Place(tuple(placements)))

    async def pass_turn(self) -> None:
        await self._send(Pass())

    async def exchange(self, tile: str | None = None) -> None:
        """Swap one tile, or the whole hand when ``tile`` is None (§3.16)."""
        await self._send(Exchange(tile))

    async def quit(self) -> None:
        """QUIT (§3.2); the server answers GOODBYE and closes."""
        if not self.session.closed:
            with contextlib.suppress(Exception):
                await self._send(Quit())

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()
            await self._writer.wait_closed()

    @property
    def bag_count(self) -> int:
        """Tiles left in the bag, as far as a player can tell (others hold 7 while it lasts)."""
        on_board = sum(1 for _ in self.board.tiles())
        return max(0, BAG_SIZE - on_board - 7 * max(1, len(self.players)))

    # --- receiving ----------------------------------------------------------------------

    async def receive(self) -> ServerMessage:
        """The next server message (state updated first); ClarksonClientError at the end."""
        while not self._pending:
            data = await self._reader.read(READ_SIZE)
            events = self.session.receive_data(data) if data else self.session.receive_eof()
            for event in events:
                if isinstance(event, ServerMessage):
                    self._pending.append(event)
                elif not isinstance(event, ConnectionClosed):
                    logger.info("%s: ignored %s", self.name or "client", event)
            if not data and not self._pending:
                raise ClarksonClientError("connection closed by the server")
        # What the client knows is as of the message handed out, not of everything in
        # the same read: one read can hold TURN for the other player and, after their
        # move, TURN for us; acting on the first with the second's state played a move
        # twice (NOK, or a tile on an occupied square).
        message = self._pending.pop(0)
        self._track(message)
        return message

    def __aiter__(self) -> AsyncIterator[ServerMessage]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[ServerMessage]:
        while True:
            try:
                message = await self.receive()
            except ClarksonClientError:
                return
            yield message
            if isinstance(message, Goodbye):
                return

    def _track(self, message: ServerMessage) -> None:
        if isinstance(message, UserChange):
            if message.new == self._asked and (not self.name or message.old == self.name):
                # Our own USERSET went through (§3.5): from now on we are this name.
                self.name = self.session.name = message.new
                self._asked = None
            self.users = [message.new if u == message.old else u for u in self.users]
        elif isinstance(message, UserJoin):
            self.users.append(message.name)
        elif isinstance(message, Starting):
            self.players, self.scores, self.winners = [], {}, []
            self.board, self.rack = Board(), ""
        elif isinstance(message, Score):
            if message.name not in self.scores:
                self.players.append(message.name)
            self.scores[message.name] = message.score
        elif isinstance(message, BoardPush):
            self.board = message.to_board()
        elif isinstance(message, Tiles):
            self.rack = message.tiles
        elif isinstance(message, Turn):
            self.turn = message.name
        elif isinstance(message, Winner):
            self.winners.append(message)
            self.turn = None
            self.users = []
        elif isinstance(message, Nok):
            self.last_nok = message

    async def _send(self, message: ClientMessage) -> None:
        if isinstance(message, UserSet):
            self._asked = message.name
        self._writer.write(self.session.send(message))
        await self._writer.drain()


# Attempts to claim the bot's name again for a next game (see _connect).
NAME_RETRIES = 6


async def play_clarkson(
    host: str,
    port: int,
    name: str,
    lexicon: Lexicon,
    *,
    players: int = 1,
    games: int = 1,
) -> list[BotResult]:
    """Play ``games`` games of ``players``, one connection each, one after the other.

    The RFC starts a game once everyone at the table is ready (§3.8), so the bot says
    READY only when it has seen ``players - 1`` others join (USERJOIN). After WINNER a
    client SHOULD QUIT and close (§3.17), and the bot does: READY again at once would sit
    it at a fresh table before the others are back, and being alone and ready it would
    start a game by itself (§3.8: one client alone plays at once).
    """
    results: list[BotResult] = []
    for _ in range(games):
        client = await _connect(host, port, name)
        try:
            result = await _play_one(client, lexicon, players)
        finally:
            await client.quit()
            await client.close()
        if result is None:
            break  # the server closed the connection mid-game
        results.append(result)
    return results


async def _connect(host: str, port: int, name: str) -> ClarksonClient:
    # Back for a next game, the name may still be held for a moment by the connection
    # that just closed: try again briefly before giving up.
    for attempt in range(NAME_RETRIES):
        try:
            return await ClarksonClient.connect(host, port, name)
        except NameRefused:
            if attempt == NAME_RETRIES - 1:
                raise
            await asyncio.sleep(0.05 * 2**attempt)
    raise AssertionError("unreachable")


async def _play_one(client: ClarksonClient, lexicon: Lexicon, players: int) -> BotResult | None:
    refused = 0
    skip = 0
    said_ready = False
    if len(client.users) + 1 >= players:  # USERJOINs may come before our USERCHANGE
        await client.ready()
        said_ready = True
    async for message in client:
        if isinstance(message, UserJoin) and not said_ready:
            if len(client.users) + 1 >= players:
                await client.ready()
                said_ready = True
        elif isinstance(message, Turn):
            skip = 0
            if client.my_turn:
                await _move(client, lexicon, skip)
        elif isinstance(message, Nok) and client.my_turn:
            logger.info("%s: move refused (%s)", client.name, message.description)
            refused += 1
            skip += 1
            await _move(client, lexicon, skip)
        elif isinstance(message, Winner) and len(client.winners) == 1:
            return BotResult(tuple(client.players), dict(client.scores), "WIN", refused)
    return None


async def _move(client: ClarksonClient, lexicon: Lexicon, skip: int) -> None:
    if skip > MAX_RETRIES:
        # The server keeps refusing (another lexicon, say): passing is always allowed.
        await client.pass_turn()
        return
    choice = choose(
        client.board,
        client.rack,
        lexicon,
        tile_set=CLARKSON,
        bag_count=client.bag_count,
        skip=skip,
        exchange_minimum=1,
    )
    if isinstance(choice, PassChoice):
        await client.pass_turn()
    elif isinstance(choice, ExchangeChoice):
        # §3.16 swaps one tile or the whole hand.
        whole = len(choice.tiles) >= len(client.rack) or client.bag_count >= len(client.rack)
        await client.exchange(None if whole else choice.tiles[0])
    else:
        await client.place(choice.tiles)


def run_bot(host: str, port: int, name: str, lexicon: Lexicon, players: int, games: int) -> int:
    """``meeple bot scrabble --protocol clarkson``: play, print each result, exit status."""
    try:
        results = asyncio.run(
            play_clarkson(host, port, name, lexicon, players=players, games=games)
        )
    except (OSError, ClarksonClientError) as e:
        print(f"meeple bot: {e}", file=sys.stderr)
        return 1
    for r in results:
        scores = "  ".join(f"{n} {s}" for n, s in r.scores.items())
        print(f"{r.reason}: {scores}")
    return 0

"""An async client for the Twente v2 protocol, for anyone writing a Scrabble bot or UI.

::

    client = await TwenteClient.connect("127.0.0.1", 7777, "Alice")
    await client.request_game(2)
    async for message in client:           # every server message, in order
        if isinstance(message, NotifyTurn) and message.your_turn:
            await client.play_word(7, 7, Direction.ACROSS, "CAT")

Besides handing on messages, the client keeps what a player can know: the board
(every INFORMMOVE word laid on it), its own rack (NEWTILES in, played or swapped
tiles out), the players, the scores at the end, and whose turn it is.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator

from meeple.games.scrabble.board import Board, Direction
from meeple.games.scrabble.moves import tiles_from_word
from meeple.games.scrabble.tiles import BLANK
from meeple.protocols.twente.events import ConnectionClosed, Ignored, PeerError, Rejected
from meeple.protocols.twente.messages import (
    BLANK_ON_RACK,
    Announce,
    Error,
    Flag,
    GameOver,
    InformSwap,
    InformWord,
    MakeSwap,
    MakeWord,
    NewTiles,
    NotifyTurn,
    RequestGame,
    SendChat,
    ServerMessage,
    StartGame,
    Welcome,
)
from meeple.protocols.twente.session import ClientSession

__all__ = ["Received", "TwenteClient", "TwenteClientError"]

READ_SIZE = 65536

# What :meth:`TwenteClient.receive` hands out: the server's messages, and an ERROR the
# session could not read (a refusal all the same, never answered).
Received = ServerMessage | PeerError


class TwenteClientError(Exception):
    """The server refused to let us in (name taken) or the connection ended early."""


class TwenteClient:
    """One connection to a Twente server. Create it with :meth:`connect`."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self.session = ClientSession()
        self._pending: list[Received] = []
        self.name = ""
        self.server_flags: frozenset[Flag] = frozenset()
        self.players: tuple[str, ...] = ()
        self.board = Board()
        self.rack = ""
        self.my_turn = False
        self.turn: str | None = None
        self.game_over: GameOver | None = None
        self.last_error: Error | None = None
        self._played: str | None = None  # rack tiles of our last move, until INFORMMOVE

    @classmethod
    async def connect(cls, host: str, port: int, name: str, *, chat: bool = False) -> TwenteClient:
        """Connect and ANNOUNCE; returns once WELCOME arrives (TwenteClientError on ERROR)."""
        reader, writer = await asyncio.open_connection(host, port)
        client = cls(reader, writer)
        flags = frozenset({Flag.CHAT}) if chat else frozenset()
        await client._send(Announce(name, flags))
        reply = await client.receive()
        if not isinstance(reply, Welcome):
            await client.close()
            raise TwenteClientError(f"not welcomed: {reply}")
        client.name = reply.name
        client.server_flags = reply.flags
        return client

    # --- actions ------------------------------------------------------------------------

    async def request_game(self, players: int = 2) -> None:
        await self._send(RequestGame(players))

    async def play_word(self, x: int, y: int, direction: Direction, word: str) -> None:
        """Play ``word`` (the whole word, blanks lower-case) from ``(x, y)``."""
        new = tiles_from_word(self.board, x, y, direction, word)
        self._played = "".join(p.rack_tile for p in new)
        await self._send(MakeWord(x, y, direction, word))

    async def swap(self, tiles: str) -> None:
        """Exchange rack tiles (``?`` or ``!`` for a blank); an empty string passes."""
        wire = tiles.replace(BLANK, BLANK_ON_RACK)
        self._played = wire.replace(BLANK_ON_RACK, BLANK)
        await self._send(MakeSwap(wire))

    async def pass_turn(self) -> None:
        await self.swap("")

    async def chat(self, text: str) -> None:
        await self._send(SendChat(text))

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()
            await self._writer.wait_closed()

    # --- receiving ----------------------------------------------------------------------

    @property
    def move_due(self) -> bool:
        """Whether to move now: every message already read is handed out, and after them
        it is our turn in a game with no move of ours awaiting its verdict.

        A bot acts on this, not on the message in hand: the same read may hold, behind an
        ERROR, the NOTIFYTURN or GAMEOVER that ends the turn (issue 22). Check it and
        send with no ``await`` between, and no message of the server's can slip in.
        """
        return not self._pending and self.session.may_move()

    async def receive(self) -> Received:
        """The next server message (state updated first); TwenteClientError at the end."""
        while not self._pending:
            data = await self._reader.read(READ_SIZE)
            events = self.session.receive_data(data) if data else self.session.receive_eof()
            for event in events:
                if isinstance(event, ConnectionClosed):
                    if not self._pending:
                        raise TwenteClientError("connection closed by the server")
                elif isinstance(event, Rejected):
                    self._writer.write(event.data)
                elif isinstance(event, Ignored):
                    continue
                else:
                    self._pending.append(event)
            if not data and not self._pending:
                raise TwenteClientError("connection closed by the server")
        # What the client knows is as of the message handed out, not of everything in
        # the same read: a bot acting on a turn must not see the moves after it.
        message = self._pending.pop(0)
        self._track(message)
        return message

    def __aiter__(self) -> AsyncIterator[Received]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Received]:
        while True:
            try:
                yield await self.receive()
            except TwenteClientError:
                return

    def _track(self, message: Received) -> None:
        if isinstance(message, StartGame):
            self.players = message.players
            self.board = Board()
            self.rack = ""
            self.game_over = None
        elif isinstance(message, NewTiles):
            self.rack += message.tiles.replace(BLANK_ON_RACK, BLANK)
        elif isinstance(message, NotifyTurn):
            self.my_turn = message.your_turn
            self.turn = message.player
        elif isinstance(message, InformWord):
            for p in tiles_from_word(
                self.board, message.x, message.y, message.direction, message.word
            ):
                self.board.place(p.x, p.y, p.tile)
            self._moved(message.player)
        elif isinstance(message, InformSwap):
            self._moved(message.player)
        elif isinstance(message, GameOver):
            self.game_over = message
            self.my_turn = False
            self.turn = None
        elif isinstance(message, Error):
            self.last_error = message
            self._played = None
        elif isinstance(message, PeerError):
            self._played = None

    def _moved(self, player: str) -> None:
        if player == self.name and self._played is not None:
            left = Counter(self.rack)
            left.subtract(self._played)
            self.rack = "".join(sorted(left.elements()))
            self._played = None
        self.my_turn = False

    @property
    def bag_count(self) -> int:
        """Tiles left in the bag: while it holds any, every rack holds seven (100 tiles)."""
        on_board = sum(1 for _ in self.board.tiles())
        return max(0, 100 - on_board - 7 * max(1, len(self.players)))

    async def _send(self, message: Announce | RequestGame | MakeWord | MakeSwap | SendChat) -> None:
        self._writer.write(self.session.send(message))
        await self._writer.drain()

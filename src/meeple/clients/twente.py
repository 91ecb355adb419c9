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

A server's message the client cannot take (unreadable, or out of place) never raises:
the first of each kind is logged with its bytes and the rest counted
(:attr:`TwenteClient.unreadable`). While the server owes an answer (WELCOME to
ANNOUNCE, the verdict on a move) the client says when it waits longer than its
:class:`~meeple.clients.watch.Patience` allows, and gives up with
:class:`TwenteClientError` (issue 31).
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter

from meeple.clients.connection import SessionClient, WelcomedClient
from meeple.clients.watch import (
    Expected,
)
from meeple.games.scrabble.board import Board, Direction
from meeple.games.scrabble.errors import ScrabbleError
from meeple.games.scrabble.moves import tiles_from_word
from meeple.games.scrabble.tiles import BLANK
from meeple.protocols.twente import messages
from meeple.protocols.twente.events import ConnectionClosed, Ignored, PeerError, Rejected
from meeple.protocols.twente.session import ClientEvent, ClientSession, State

__all__ = ["Received", "TwenteClient", "TwenteClientError"]

logger = logging.getLogger(__name__)


# What :meth:`TwenteClient.receive` hands out: the server's messages, and an ERROR the
# session could not read (a refusal all the same, never answered).
Received = messages.ServerMessage | PeerError


class TwenteClientError(Exception):
    """The server refused to let us in (name taken) or the connection ended early."""


class TwenteClient(SessionClient[ClientEvent, Received], WelcomedClient[Received]):
    """One connection to a Twente server. Create it with :meth:`connect`."""

    ERROR = TwenteClientError
    LOGGER = logger
    session: ClientSession

    def _setup(self) -> None:
        self.session = ClientSession()
        self._pending = []
        self.name = ""
        self.server_flags: frozenset[messages.Flag] = frozenset()
        self.players: tuple[str, ...] = ()
        self.board = Board()
        self.rack = ""
        self.my_turn = False
        self.turn: str | None = None
        self.game_over: messages.GameOver | None = None
        self.last_error: messages.Error | None = None
        self._played: str | None = None  # rack tiles of our last move, until INFORMMOVE
        self._verdict_due = False  # a move sent, its INFORMMOVE or ERROR not handed out

    async def _greet(self, name: str, chat: bool) -> None:
        flags = frozenset({messages.Flag.CHAT}) if chat else frozenset()
        await self._send(messages.Announce(name, flags))

    def _welcomed(self, name: str, reply: Received) -> str | None:
        if not isinstance(reply, messages.Welcome):
            return f"not welcomed: {reply}"
        self.name = reply.name
        self.server_flags = reply.flags
        return None

    # --- actions ------------------------------------------------------------------------

    async def request_game(self, players: int = 2) -> None:
        await self._send(messages.RequestGame(players))

    async def play_word(self, x: int, y: int, direction: Direction, word: str) -> None:
        """Play ``word`` (the whole word, blanks lower-case) from ``(x, y)``."""
        new = tiles_from_word(self.board, x, y, direction, word)
        self._played = "".join(p.rack_tile for p in new)
        await self._send(messages.MakeWord(x, y, direction, word))

    async def swap(self, tiles: str) -> None:
        """Exchange rack tiles (``?`` or ``!`` for a blank); an empty string passes."""
        wire = tiles.replace(BLANK, messages.BLANK_ON_RACK)
        self._played = wire.replace(messages.BLANK_ON_RACK, BLANK)
        await self._send(messages.MakeSwap(wire))

    async def pass_turn(self) -> None:
        await self.swap("")

    async def chat(self, text: str) -> None:
        await self._send(messages.SendChat(text))

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

    @property
    def expected(self) -> Expected | None:
        """What the server owes us now, if anything: WELCOME to our ANNOUNCE, or the
        verdict (INFORMMOVE or ERROR) on our move."""
        if self.session.state is State.ANNOUNCING:
            return Expected("WELCOME to our ANNOUNCE")
        if self._verdict_due:
            return Expected("the server's answer to our MAKEMOVE")
        return None

    def _take(self, event: ClientEvent, data: bytes) -> Received | None:
        if isinstance(event, ConnectionClosed):
            if not self._pending:
                raise TwenteClientError("connection closed by the server")
        elif isinstance(event, Rejected):
            kind = f"message ({event.code.value} {event.reason.split(':')[0]})"
            self._note(kind, event.reason, data)
            with contextlib.suppress(ConnectionError):
                self._writer.write(event.data)
        elif isinstance(event, Ignored):
            self._note(event.message.command.value, event.reason, data)
        else:
            return event
        return None

    def _who(self) -> str:
        return self.name

    def _handed(self, message: Received) -> None:
        if isinstance(
            message,
            messages.Error
            | PeerError
            | messages.NotifyTurn
            | messages.GameOver
            | messages.StartGame,
        ) or (
            isinstance(message, messages.InformWord | messages.InformSwap)
            and message.player == self.name
        ):
            self._verdict_due = False
        if isinstance(message, messages.StartGame):
            self.players = message.players
            self.board = Board()
            self.rack = ""
            self.game_over = None
        elif isinstance(message, messages.NewTiles):
            # NEWTILES to the mover means our move was taken (ERRATA: it comes before
            # INFORMMOVE): the played tiles leave the rack now, so a server whose
            # INFORMMOVE we cannot read does not leave them on it (issue 31).
            self._take_played()
            self.rack += message.tiles.replace(messages.BLANK_ON_RACK, BLANK)
        elif isinstance(message, messages.NotifyTurn):
            self.my_turn = message.your_turn
            self.turn = message.player
        elif isinstance(message, messages.InformWord):
            try:
                placed = tiles_from_word(
                    self.board, message.x, message.y, message.direction, message.word
                )
            except ScrabbleError as e:
                # A word that clashes with the board as we know it: keep our board (the
                # bot's next move may then be refused, and it retries) rather than die.
                self._note("INFORMMOVE WORD off our board", str(e), repr(message).encode())
                placed = ()
            for p in placed:
                self.board.place(p.x, p.y, p.tile)
            self._moved(message.player)
        elif isinstance(message, messages.InformSwap):
            self._moved(message.player)
        elif isinstance(message, messages.GameOver):
            self.game_over = message
            self.my_turn = False
            self.turn = None
        elif isinstance(message, messages.Error):
            self.last_error = message
            self._played = None
        elif isinstance(message, PeerError):
            self._played = None

    def _moved(self, player: str) -> None:
        if player == self.name:
            self._take_played()
        self.my_turn = False

    def _take_played(self) -> None:
        if self._played is not None:
            left = Counter(self.rack)
            left.subtract(self._played)
            self.rack = "".join(sorted(left.elements()))
            self._played = None

    @property
    def bag_count(self) -> int:
        """Tiles left in the bag: while it holds any, every rack holds seven (100 tiles)."""
        on_board = sum(1 for _ in self.board.tiles())
        return max(0, 100 - on_board - 7 * max(1, len(self.players)))

    async def _send(
        self,
        message: messages.Announce
        | messages.RequestGame
        | messages.MakeWord
        | messages.MakeSwap
        | messages.SendChat,
    ) -> None:
        self._put(self.session.send(message))
        if isinstance(message, messages.MakeWord | messages.MakeSwap):
            self._verdict_due = True
        await self._writer.drain()

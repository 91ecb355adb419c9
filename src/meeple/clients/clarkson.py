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

A line the client cannot take is logged once per kind with its bytes (never raised:
:attr:`ClarksonClient.unreadable`); while the server owes an answer (OK to HELLO or
READY, the verdict on a move) the client says when it waits longer than its
:class:`~meeple.clients.watch.Patience` allows and then gives up with
:class:`~meeple.clients.watch.NoAnswer`; waiting for the others' READY it only says so
(issue 31).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import platform
import sys
from collections.abc import Callable, Iterable

from meeple.ai.scrabble import ExchangeChoice, PassChoice
from meeple.clients.connection import SessionClient
from meeple.clients.scrabble_bot import MAX_RETRIES, BotResult, choose_or_pass
from meeple.clients.watch import (
    Expected,
    NoAnswer,
    Patience,
)
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.errors import ScrabbleError
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Placement
from meeple.games.scrabble.tiles import CLARKSON
from meeple.protocols.clarkson import messages
from meeple.protocols.clarkson import session as protocol
from meeple.protocols.clarkson.session import CLIENT_SENDS, ClientSession, Ignored, State

__all__ = ["ClarksonClient", "ClarksonClientError", "NameRefused", "play_clarkson", "run_bot"]

logger = logging.getLogger(__name__)

BAG_SIZE = 100  # RFC §4: 98 letters and 2 random ones


class ClarksonClientError(Exception):
    """The server refused us (version, name) or the connection ended early."""


class NameRefused(ClarksonClientError):
    """The server answered USERSET with NOK (§3.5): the name is taken or not allowed."""


class ClarksonClient(SessionClient[protocol.ClientEvent, messages.ServerMessage]):
    """One connection to a Clarkson server. Create it with :meth:`connect`."""

    ERROR = ClarksonClientError
    LOGGER = logger
    session: ClientSession

    def _setup(self) -> None:
        self.session = ClientSession()
        self._pending = []
        self._ready_answered = True  # no READY of ours awaits its OK
        self._move_sent: str | None = None  # our turn command awaiting its answer
        self.server_hello: messages.Hello | None = None
        self.name = ""
        self.users: list[str] = []  # the others at the table, as USERJOIN named them
        # The players a caller waits for before its READY (the bot's --players): while
        # fewer are at the table, the wait is said (not owed: a table fills when it fills).
        self.table_size = 0
        self.players: list[str] = []  # the game's players, from the opening SCOREs
        self.scores: dict[str, int] = {}
        self.board = Board()
        self.rack = ""
        self.turn: str | None = None
        self.winners: list[messages.Winner] = []
        self.last_nok: messages.Nok | None = None
        self._asked: str | None = None  # the name of a USERSET awaiting its USERCHANGE

    @classmethod
    async def connect(
        cls,
        host: str,
        port: int,
        name: str | None = None,
        *,
        patience: Patience | None = None,
        say: Callable[[str], None] | None = None,
    ) -> ClarksonClient:
        """Connect, exchange HELLO (§3.1) and, if ``name`` is given, USERSET it (§3.5).

        ClarksonClientError when refused, or when an answer does not come in time."""
        reader, writer = await asyncio.open_connection(host, port)
        client = cls(reader, writer, patience=patience, say=say)
        client.unreadable.who = name or ""
        async with client._opening():
            hello = await client.receive()
            if not isinstance(hello, messages.Hello):
                raise ClarksonClientError(f"the server did not say HELLO: {hello}")
            client.server_hello = hello
            await client._send(messages.meeple_hello(platform.platform()))
            reply = await client.receive()
            if not isinstance(reply, messages.Ok):
                raise ClarksonClientError(f"not welcomed: {reply}")
            if name is not None:
                await client._send(messages.UserSet(name))
                while True:
                    reply = await client.receive()
                    if isinstance(reply, messages.UserChange) and reply.new == name:
                        break
                    if isinstance(reply, messages.Nok):
                        raise NameRefused(f"name refused: {reply.description}")
        return client

    # --- actions ------------------------------------------------------------------------

    @property
    def my_turn(self) -> bool:
        """Whether the last TURN handed out named this client (and the game is on)."""
        return self.turn is not None and self.turn == self.name

    async def ready(self) -> None:
        await self._send(messages.Ready())

    async def place(self, placements: Iterable[Placement]) -> None:
        await self._send(messages.Place(tuple(placements)))

    async def pass_turn(self) -> None:
        await self._send(messages.Pass())

    async def exchange(self, tile: str | None = None) -> None:
        """Swap one tile, or the whole hand when ``tile`` is None (§3.16)."""
        await self._send(messages.Exchange(tile))

    async def quit(self) -> None:
        """QUIT (§3.2); the server answers GOODBYE and closes."""
        if not self.session.closed:
            with contextlib.suppress(Exception):
                await self._send(messages.Quit())

    @property
    def bag_count(self) -> int:
        """Tiles left in the bag, as far as a player can tell (others hold 7 while it lasts)."""
        on_board = sum(1 for _ in self.board.tiles())
        return max(0, BAG_SIZE - on_board - 7 * max(1, len(self.players)))

    # --- receiving ----------------------------------------------------------------------

    @property
    def move_due(self) -> bool:
        """Whether a turn command is allowed now: every line already read is handed out
        and the session (which has read them all) says it is our turn in a game."""
        return not self._pending and self.session.state is State.GAME and self.session.your_turn

    @property
    def may_ready(self) -> bool:
        """Whether READY is allowed now (greeted, not in a game, not leaving)."""
        return messages.Ready in CLIENT_SENDS[self.session.state]

    @property
    def expected(self) -> Expected | None:
        """What the server owes us now (HELLO, OK, the verdict on a move), or the
        STARTING that waits on the others' READY; None when nothing is awaited."""
        state = self.session.state
        if self._pending:
            return None
        if state is State.CONNECTED:
            return Expected("the server's HELLO")
        if state is State.WELCOMING:
            return Expected("OK to our HELLO")
        if self._asked is not None:
            return Expected("USERCHANGE or NOK to our USERSET")
        missing = self.table_size - 1 - len(self.users)
        if missing > 0 and self.may_ready:
            others = "another player" if missing == 1 else f"{missing} more players"
            return Expected(f"{others} to join the table (USERJOIN)", owed=False)
        if state is State.READY:
            if not self._ready_answered:
                return Expected("OK to our READY")
            return Expected("STARTING (everyone at the table READY)", owed=False)
        if state is State.QUITTING:
            return Expected("GOODBYE to our QUIT")
        if self._move_sent is not None:
            return Expected(f"the server's answer to our {self._move_sent}")
        return None

    def _take(self, event: protocol.ClientEvent, data: bytes) -> messages.ServerMessage | None:
        if isinstance(event, messages.ServerMessage):
            return event
        if isinstance(event, messages.Malformed):
            kind = f"line ({event.description.split(':')[0]})"
            self._note(kind, event.description, event.line.encode(errors="replace"))
        elif isinstance(event, Ignored):
            self._note(event.message.command, event.reason, data)
        return None

    def _ends_stream(self, message: messages.ServerMessage) -> bool:
        return isinstance(message, messages.Goodbye)

    def _who(self) -> str:
        return self.name

    def _handed(self, message: messages.ServerMessage) -> None:
        if isinstance(
            message, messages.Ok | messages.Nok | messages.Starting
        ) and self.session.state in (
            State.READY,
            State.GAME,
        ):
            self._ready_answered = True
        if not isinstance(message, messages.UserJoin | messages.UserChange):
            self._move_sent = None
        if isinstance(message, messages.UserChange):
            if message.new == self._asked and (not self.name or message.old == self.name):
                # Our own USERSET went through (§3.5): from now on we are this name.
                self.name = self.session.name = message.new
                self._asked = None
            self.users = [message.new if u == message.old else u for u in self.users]
        elif isinstance(message, messages.UserJoin):
            self.users.append(message.name)
        elif isinstance(message, messages.Starting):
            self.players, self.scores, self.winners = [], {}, []
            self.board, self.rack = Board(), ""
        elif isinstance(message, messages.Score):
            if message.name not in self.scores:
                self.players.append(message.name)
            self.scores[message.name] = message.score
        elif isinstance(message, messages.BoardPush):
            try:
                self.board = message.to_board()
            except (ScrabbleError, ValueError) as e:
                self._note("BOARDPUSH", str(e), repr(message).encode())
        elif isinstance(message, messages.Tiles):
            self.rack = message.tiles
        elif isinstance(message, messages.Turn):
            self.turn = message.name
        elif isinstance(message, messages.Winner):
            self.winners.append(message)
            self.turn = None
            self.users = []
        elif isinstance(message, messages.Nok):
            self.last_nok = message

    async def _send(self, message: messages.ClientMessage) -> None:
        if isinstance(message, messages.UserSet):
            self._asked = message.name
        self._put(self.session.send(message))
        if isinstance(message, messages.Ready):
            self._ready_answered = False
        elif isinstance(message, messages.Place | messages.Pass | messages.Exchange):
            self._move_sent = message.command
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
    patience: Patience | None = None,
) -> list[BotResult]:
    """Play ``games`` games of ``players``, one connection each, one after the other.

    A line the bot cannot take is logged once per kind and skipped; an answer the
    server owes that does not come within ``patience`` (OK to READY, say) is said in
    the log as the wait goes on, then :class:`~meeple.clients.watch.NoAnswer` ends
    the bot (issue 31).

    The RFC starts a game once everyone at the table is ready (§3.8), so the bot says
    READY only when it has seen ``players - 1`` others join (USERJOIN). After WINNER a
    client SHOULD QUIT and close (§3.17), and the bot does: READY again at once would sit
    it at a fresh table before the others are back, and being alone and ready it would
    start a game by itself (§3.8: one client alone plays at once).
    """
    results: list[BotResult] = []
    for _ in range(games):
        client = await _connect(host, port, name, patience)
        try:
            result = await _play_one(client, lexicon, players)
        finally:
            await client.quit()
            await client.close()
            if summary := client.unreadable.summary():
                logger.warning("%s: %s", name, summary)
        if result is None:
            break  # the server closed the connection mid-game
        results.append(result)
    return results


async def _connect(host: str, port: int, name: str, patience: Patience | None) -> ClarksonClient:
    # Back for a next game, the name may still be held for a moment by the connection
    # that just closed: try again briefly before giving up.
    for attempt in range(NAME_RETRIES):
        try:
            return await ClarksonClient.connect(host, port, name, patience=patience)
        except NameRefused:
            if attempt == NAME_RETRIES - 1:
                raise
            await asyncio.sleep(0.05 * 2**attempt)
    raise AssertionError("unreachable")


async def _play_one(client: ClarksonClient, lexicon: Lexicon, players: int) -> BotResult | None:
    refused = 0
    skip = 0
    said_ready = False
    owe_move = False  # a TURN named us (or our move was refused) and we have not moved
    client.table_size = players  # READY once they are here; the wait for them is said
    if len(client.users) + 1 >= players and client.may_ready:  # USERJOINs may come first
        await client.ready()
        said_ready = True
    async for message in client:
        if isinstance(message, messages.UserJoin) and not said_ready:
            if len(client.users) + 1 >= players and client.may_ready:
                await client.ready()
                said_ready = True
        elif isinstance(message, messages.Turn):
            skip = 0
            owe_move = client.my_turn
        elif isinstance(message, messages.Nok) and client.my_turn:
            logger.info("%s: move refused (%s)", client.name, message.description)
            refused += 1
            skip += 1
            owe_move = True
        elif isinstance(message, messages.Winner) and len(client.winners) == 1:
            return BotResult(tuple(client.players), dict(client.scores), "WIN", refused)
        # Act on the newest state only (as the Twente bot does, issue 22): once every
        # line already read is handed out, and only if the session, which has read
        # them all, still says it is our turn in a game (a WINNER or GOODBYE in the
        # same read ends it; issue 31: a PLACE there raised LocalProtocolError).
        if owe_move and client.move_due:
            owe_move = False
            await _move(client, lexicon, skip)
    return None


async def _move(client: ClarksonClient, lexicon: Lexicon, skip: int) -> None:
    if skip > MAX_RETRIES:
        # The server keeps refusing (another lexicon, say): passing is always allowed.
        await client.pass_turn()
        return
    # The server's TILES and BOARDPUSH may not add up to a position: then it passes.
    # Against one opponent the SCOREs (§3.10) let the strong player play for the win.
    others = [s for n, s in client.scores.items() if n != client.name]
    mine = client.scores.get(client.name)
    scores = (mine, others[0]) if mine is not None and len(others) == 1 else None
    choice = choose_or_pass(
        client.name,
        client.board,
        client.rack,
        lexicon,
        client.bag_count,
        skip,
        tile_set=CLARKSON,
        scores=scores,
    )
    if isinstance(choice, PassChoice):
        await client.pass_turn()
    elif isinstance(choice, ExchangeChoice):
        # §3.16 swaps one tile or the whole hand.
        whole = len(choice.tiles) >= len(client.rack) or client.bag_count >= len(client.rack)
        await client.exchange(None if whole else choice.tiles[0])
    else:
        await client.place(choice.tiles)


def run_bot(
    host: str,
    port: int,
    name: str,
    lexicon: Lexicon,
    players: int,
    games: int,
    *,
    patience: Patience | None = None,
) -> int:
    """``meeple bot scrabble --protocol clarkson``: play, print each result, exit status."""
    try:
        results = asyncio.run(
            play_clarkson(
                host, port, name, lexicon, players=players, games=games, patience=patience
            )
        )
    except (OSError, ClarksonClientError, NoAnswer) as e:
        print(f"meeple bot: {e}", file=sys.stderr)
        return 1
    for r in results:
        print(r.line())
    return 0

"""An async Spectrangle 1.4 client and the greedy bot built on it.

::

    client = await SpectrangleClient.connect("127.0.0.1", 4000, "alice", chat=True)
    await client.request_game(2)
    async for message in client:            # every server line, as a typed message
        if client.my_turn:
            await client.place(Tile.parse("RGB4"), 11)

Besides handing on messages, the client keeps what a player can know: the players
and the turn order, every hand (hands are public in the tiles line), the board (each
``move`` put on it), the points announced per player, whose turn it is and whether
that player must skip, the bag's size, and the leaderboard at the end. It reads the
1.3 stand-alone ``skip <name>`` too, so it also plays against older servers such as
the one in the shared transcript.

:func:`play_spectrangle` is ``meeple bot spectrangle``: it plays whole games with
:func:`meeple.ai.spectrangle.turn_options` (the greedy placement first).

A line the client cannot take is logged once per kind with its bytes, never raised
(:attr:`SpectrangleClient.unreadable`); while the server owes an answer (``welcome``,
the verdict on a turn command) the client says when it waits longer than its
:class:`~meeple.clients.watch.Patience` allows, then gives up with
:class:`~meeple.clients.watch.NoAnswer` (issue 31).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from meeple.ai.spectrangle import turn_options
from meeple.clients.connection import WelcomedClient
from meeple.clients.watch import (
    Expected,
    Patience,
)
from meeple.games.spectrangle import TILE_SET, Action, Board, Tile
from meeple.games.spectrangle import Exchange as ExchangeAction
from meeple.games.spectrangle import Place as PlaceAction
from meeple.games.spectrangle.errors import SpectrangleError
from meeple.protocols.spectrangle import (
    Chat,
    ClientMessage,
    ClientSession,
    Connect,
    ErrorReply,
    ErrorWord,
    Exchange,
    GameFinished,
    Move,
    Order,
    Place,
    PlayerLeft,
    ProtocolViolation,
    Replace,
    Request,
    ServerMessage,
    Skip,
    SkipNotice,
    StartWith,
    State,
    Tiles,
    Welcome,
)

__all__ = [
    "BotResult",
    "SpectrangleClient",
    "SpectrangleClientError",
    "drop_tile",
    "play_spectrangle",
    "swap_tile",
    "take_turn",
]

logger = logging.getLogger(__name__)

# After this many refused turn commands in one turn the bot gives up on the game
# rather than loop on a disagreement with the server about the rules.
MAX_REFUSALS = 5


class SpectrangleClientError(Exception):
    """The server refused the name, or the connection ended."""


class SpectrangleClient(WelcomedClient[ServerMessage]):
    """One connection to a Spectrangle server. Create it with :meth:`connect`."""

    ERROR = SpectrangleClientError
    LOGGER = logger

    def _setup(self) -> None:
        self.session = ClientSession()
        # Each message with the session state right after it: a 1.3 "skip <name>" means
        # "you must skip" or "your skip was taken" depending on where it found us.
        self._pending: deque[tuple[ServerMessage, State]] = deque()
        self.state_after: State = self.session.state  # for the message receive() returned
        self.name = ""
        self.extensions: frozenset[str] = frozenset()
        self.players: tuple[str, ...] = ()
        self.order: tuple[str, ...] = ()
        self.hands: dict[str, tuple[Tile, ...]] = {}
        self.board = Board()
        self.points: dict[str, int] = {}
        self.turn: str | None = None
        self.must_skip = False
        self.exchanged = 0
        self.leaderboard: tuple[tuple[str, int], ...] | None = None
        self.left: str | None = None
        self.last_error: ErrorWord | None = None
        self.violations = 0

    async def _greet(self, name: str, chat: bool) -> None:
        await self._send(Connect(name, ("chat",) if chat else ()))

    def _welcomed(self, name: str, reply: ServerMessage) -> str | None:
        if not isinstance(reply, Welcome):
            return f"not welcomed as {name!r}: {reply.to_line()}"
        self.name = name
        self.extensions = self.session.extensions
        return None

    # --- what the player knows -----------------------------------------------------------

    @property
    def my_turn(self) -> bool:
        """True when the server waits for this player's place, skip or exchange."""
        return self.session.state in (State.MY_TURN, State.MUST_SKIP)

    @property
    def hand(self) -> tuple[Tile, ...]:
        return self.hands.get(self.name, ())

    @property
    def bag_size(self) -> int:
        """Tiles still in the bag: all 36, less those on the board, in hands and set aside."""
        on_board = sum(1 for _ in self.board.tiles())
        in_hands = sum(len(h) for h in self.hands.values())
        return max(0, len(TILE_SET) - on_board - in_hands - self.exchanged)

    # --- actions ------------------------------------------------------------------------

    async def request_game(self, players: int = 2) -> None:
        await self._send(Request(players))

    async def place(self, tile: Tile, index: int) -> None:
        """Place ``tile`` (in the rotation given) on field ``index``."""
        await self._send(Place(tile, index))

    async def skip(self) -> None:
        await self._send(Skip())

    async def exchange(self, tile: Tile) -> None:
        await self._send(Exchange(tile))

    async def chat(self, text: str) -> None:
        await self._send(Chat(text))

    async def _send(self, message: ClientMessage) -> None:
        self._put(self.session.send(message))
        await self._writer.drain()

    # --- receiving ----------------------------------------------------------------------

    @property
    def expected(self) -> Expected | None:
        """What the server owes us now: ``welcome`` to our ``connect``, the verdict on
        our turn command; the game after ``request`` waits on other players."""
        if self._pending:
            return None
        state = self.session.state
        if state is State.NAMING:
            return Expected("welcome to our connect")
        if state in (State.DECIDING_TURN, State.DECIDING_SKIP):
            return Expected("the server's answer to our turn command")
        if state in (State.REQUESTED, State.QUEUED):
            return Expected("a game after our request", owed=False)
        return None

    def _who(self) -> str:
        return self.name

    async def receive(self) -> ServerMessage:
        """The next server message (state updated first); SpectrangleClientError at the
        end, :class:`~meeple.clients.watch.NoAnswer` when an answer the server owes does
        not come within :attr:`patience` (said through :attr:`say` as the wait goes on).

        :attr:`state_after` is then the session state right after that message."""
        while not self._pending:
            data = await self._read()
            if not data:
                raise SpectrangleClientError("connection closed by the server")
            # One line at a time, so the state after each message is known.
            for piece in _lines(data):
                for event in self.session.receive_data(piece):
                    if isinstance(event, ProtocolViolation):
                        self.violations += 1
                        reason = event.error.reason
                        self._note(f"line ({reason.split(':')[0]})", reason, piece)
                        continue
                    self._track(event, self.session.state)
                    self._pending.append((event, self.session.state))
        message, self.state_after = self._pending.popleft()
        return message

    def _next_in_order(self, name: str) -> str | None:
        if name not in self.order:
            return None
        return self.order[(self.order.index(name) + 1) % len(self.order)]

    def _track(self, message: ServerMessage, state: State) -> None:
        if isinstance(message, StartWith):
            self.players = message.names
            self.order = message.names
            self.hands = {}
            self.board = Board()
            self.points = dict.fromkeys(message.names, 0)
            self.turn = None
            self.must_skip = False
            self.exchanged = 0
            self.leaderboard = None
            self.left = None
        elif isinstance(message, Order):
            self.order = message.names
        elif isinstance(message, Tiles):
            self.hands = {hand.name: hand.held for hand in message.hands}
            self.turn = message.player
            self.must_skip = message.must_skip
        elif isinstance(message, SkipNotice):
            if message.name == self.name and state is not State.MUST_SKIP:
                # The 1.3 echo of the skip we chose: the turn moves on.
                self.turn, self.must_skip = self._next_in_order(message.name), False
            else:
                self.turn, self.must_skip = message.name, True
        elif isinstance(message, Move):
            try:
                self.board.put(message.tile, message.index)
            except SpectrangleError as e:  # no such field: keep the board we know
                self._note("move off the board", str(e), message.to_line().encode())
            self.points[message.name] = self.points.get(message.name, 0) + message.points
            # The placed tile has left the hand. A 1.4 server's next tiles line says so
            # anyway; a 1.3 server may send none before the next move is due (issue 22).
            if message.name in self.hands:
                self.hands[message.name] = drop_tile(self.hands[message.name], message.tile)
        elif isinstance(message, Replace):
            self.exchanged += 1
            # A server may send no tiles line after it (1.3): the hand is known anyway.
            self.hands[message.name] = swap_tile(
                self.hands.get(message.name, ()), message.tile, message.new_tile
            )
            self.turn, self.must_skip = self._next_in_order(message.name), False
        elif isinstance(message, GameFinished):
            self.leaderboard = message.leaderboard
            self.turn = None
        elif isinstance(message, PlayerLeft):
            self.left = message.name
            self.turn = None
        elif isinstance(message, ErrorReply):
            self.last_error = message.word


def _lines(data: bytes) -> list[bytes]:
    """``data`` cut after each ``\n``: every piece holds at most one whole line."""
    pieces = data.split(b"\n")
    return [p + b"\n" for p in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])


def drop_tile(hand: tuple[Tile, ...], placed: Tile) -> tuple[Tile, ...]:
    """``hand`` without ``placed`` (in any rotation); unchanged if it does not hold it."""
    for i, tile in enumerate(hand):
        if tile.same_piece(placed):
            return (*hand[:i], *hand[i + 1 :])
    return hand


def swap_tile(hand: tuple[Tile, ...], old: Tile, new: Tile) -> tuple[Tile, ...]:
    """``hand`` with ``old`` (in any rotation) replaced by ``new``; appended if absent."""
    for i, tile in enumerate(hand):
        if tile.same_piece(old):
            return (*hand[:i], new, *hand[i + 1 :])
    return (*hand, new)


# --- the bot -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BotResult:
    """One game as the bot saw it end: the leaderboard, or who left (no points then)."""

    players: tuple[str, ...]
    leaderboard: tuple[tuple[str, int], ...] | None
    left: str | None
    refused: int


async def play_spectrangle(
    host: str,
    port: int,
    name: str,
    *,
    players: int = 2,
    games: int = 1,
    chat: bool = False,
    pace: float | Callable[[], float] = 0.0,
    patience: Patience | None = None,
) -> list[BotResult]:
    """Connect, queue for ``games`` games of ``players`` one after another, play them.

    ``pace``: seconds the bot waits before each turn command, or a function that says how
    many each time (a game that must last until a test has killed its server), without
    using the CPU meanwhile."""
    client = await SpectrangleClient.connect(host, port, name, chat=chat, patience=patience)
    results: list[BotResult] = []
    refused = 0  # in the whole game
    in_turn = 0  # in the current turn
    # An exchange sent while our own count says the bag is empty is a probe: only the
    # server knows. Refused, the bag is empty indeed, and stays so (an exchange needs a
    # tile in the bag), so the bot skips without probing again for the rest of the game.
    probe = bag_empty = False
    try:
        await client.request_game(players)
        async for message in client:
            if isinstance(message, GameFinished | PlayerLeft):
                results.append(BotResult(client.players, client.leaderboard, client.left, refused))
                refused = in_turn = 0
                probe = bag_empty = False
                if len(results) >= games:
                    break
                await client.request_game(players)
                continue
            if isinstance(message, ErrorReply) and client.my_turn:
                in_turn += 1
                if probe:
                    bag_empty = True
                    logger.info("%s: no exchange: the server's bag is empty too", name)
                else:
                    refused += 1
                    logger.info("%s: turn command refused (%s)", name, message.word.value)
                if in_turn > MAX_REFUSALS:
                    raise SpectrangleClientError(f"{in_turn} turn commands refused in a row")
            elif isinstance(message, Tiles | SkipNotice):
                in_turn = 0
            if client.my_turn and not client._pending:
                wait = pace() if callable(pace) else pace
                if wait:
                    await asyncio.sleep(wait)
                action = await take_turn(client, in_turn, exchange=not bag_empty)
                probe = isinstance(action, ExchangeAction) and client.bag_size == 0
    finally:
        await client.close()
        if summary := client.unreadable.summary():
            logger.warning("%s: %s", name, summary)
    return results


async def take_turn(client: SpectrangleClient, refusals: int, *, exchange: bool) -> Action:
    """Play our turn (the bot's, the client kit's opponent's): the greedy choice; after
    each refusal the next option: the next-best placement, then an exchange, then a skip
    (:func:`meeple.ai.spectrangle.turn_options`)."""
    # Options in order: when we cannot place (or the server refused what we tried) an
    # exchange comes next, then a skip, whatever our own count of the bag says (issue
    # 16: a server that kept a placed tile in a hand still had tiles to give).
    options = turn_options(client.board, client.hand, must_skip=client.must_skip, exchange=exchange)
    action = options[min(refusals, len(options) - 1)]
    if isinstance(action, PlaceAction):
        await client.place(action.tile, action.index)
    elif isinstance(action, ExchangeAction):
        await client.exchange(action.tile)
    else:
        await client.skip()
    return action

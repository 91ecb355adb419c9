"""An async CMPN402 client: the spec's client state machine driving an agent object.

Writing a contest agent takes a class with two methods and one call::

    class Agent:
        def choose_move(self, view: View) -> PlayMove | ExchangeMove | PassMove:
            return PassMove()
        def want_challenge(self, view: View, play: PlayNotice) -> bool:
            return False

    results = await play("ws://127.0.0.1:8765", "my-team", Agent(), games=1)

Either method may also be ``async``. A plain method runs in a worker thread, so the
connection answers the referee's pings while the agent thinks (a referee with a 1 s
heartbeat drops an agent whose pong waits for a 1 s think); an ``async`` one runs on
the event loop and must not block it. :class:`View` is what the agent knows: board,
rack, scores, times, and ``refused`` (how many moves the server has answered INVALID
this turn, so an agent can try its next-best move). :class:`BuiltinAgent` is
meeple's own: the best-scoring legal move (:mod:`meeple.ai.scrabble`), and it
challenges a play that forms a word not in its lexicon.

The client follows the spec's "Client State Machine" (``ClientSession``): after END
it stays connected and READY for the next START (a series, or a resume after the
other agent's disconnect, or the next pairing of a contest); if the server goes away it
reconnects with a bounded backoff (60 s) and sends its NAME again, and the referee
resumes the game from its log.

A message the client cannot take (unreadable, out of place, a play that does not fit
the board as it knows it) is logged once per kind with its bytes and never raised; while
the referee owes an answer (its NAME request, the verdict on our move) the client
says when it waits longer than its :class:`~meeple.clients.watch.Patience` allows,
then gives up with :class:`~meeple.clients.watch.NoAnswer` (issue 31).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar, cast

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK, InvalidHandshake

from meeple.ai.scrabble import ExchangeChoice, PassChoice, choose
from meeple.clients.watch import Expected, NoAnswer, Patience, Stopwatch, Unreadable, answered
from meeple.games.scrabble.board import Board, Direction
from meeple.games.scrabble.errors import ScrabbleError, WordsNotInLexicon
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import tiles_from_new_tiles
from meeple.games.scrabble.rules import validate_play
from meeple.games.scrabble.tiles import ENGLISH
from meeple.protocols.cmpn402 import messages
from meeple.protocols.cmpn402.errors import ProtocolError
from meeple.protocols.cmpn402.session import ClientSession, ClientState

__all__ = ["Agent", "BuiltinAgent", "GameResult", "Move", "View", "play", "run_builtin"]

T = TypeVar("T")

logger = logging.getLogger(__name__)

Move = messages.PlayMove | messages.ExchangeMove | messages.PassMove
TILES_IN_GAME = 100  # the English tile set


@dataclass
class View:
    """What an agent knows of the game, kept up to date by the client."""

    order: int = 0
    board: Board = field(default_factory=Board)
    rack: str = ""
    score: int = 0
    opponent_score: int = 0
    player_time: int = 0
    total_time: int = 0
    refused: int = 0
    pending: messages.PlayMove | None = None  # our play awaiting its challenge verdict
    exchanging: str = ""  # tiles we gave back, until the new ones arrive
    opponent_play: messages.PlayNotice | None = None

    @property
    def bag_count(self) -> int:
        """Tiles in the bag, assuming the opponent holds 7 (exact until the bag runs low)."""
        on_board = sum(1 for _ in self.board.tiles())
        return max(0, TILES_IN_GAME - on_board - len(self.rack) - 7)


class Agent(Protocol):
    """A contest agent: picks moves and decides on challenges."""

    def choose_move(self, view: View) -> Move | Awaitable[Move]: ...

    def want_challenge(self, view: View, play: messages.PlayNotice) -> bool | Awaitable[bool]: ...


@dataclass(frozen=True, slots=True)
class GameResult:
    """One END as the client saw it."""

    reason: messages.EndReason
    score: int
    opponent_score: int


def _place(board: Board, play: messages.PlayMove | messages.PlayNotice) -> list[tuple[int, int]]:
    direction = Direction.ACROSS if play.direction == 0 else Direction.DOWN
    tiles = tiles_from_new_tiles(board, play.column - 1, play.row - 1, direction, play.tiles)
    for t in tiles:
        board.place(t.x, t.y, t.tile)
    return [(t.x, t.y) for t in tiles]


def _take(rack: str, tiles: str) -> str:
    for t in tiles:
        t = "?" if t.islower() else t
        rack = rack.replace(t, "", 1)
    return rack


class BuiltinAgent:
    """meeple's agent: the move of the installed bot settings' player
    (:func:`meeple.ai.scrabble.choose`: the strong player under ``meeple bot``, the
    best-scoring play otherwise), within the referee's clock; it challenges plays that
    form a word its lexicon does not have."""

    def __init__(self, lexicon: Lexicon) -> None:
        self.lexicon = lexicon

    def choose_move(self, view: View) -> Move:
        # After more refusals than sensible, give up the turn rather than loop.
        skip = view.refused if view.refused <= 5 else 10**6
        # The referee's clock (ms) bounds the thinking time (issue 14).
        time_left = view.player_time / 1000 if view.player_time > 0 else None
        try:
            choice = choose(
                view.board,
                view.rack,
                self.lexicon,
                bag_count=view.bag_count,
                skip=skip,
                time_left=time_left,
                # Both scores (the referee's): the strong player plays for the win near
                # the end of a close game, not for spread.
                scores=(view.score, view.opponent_score),
            )
        except ScrabbleError as e:
            # What the referee told us adds up to no position (a rack of more than seven
            # tiles): pass rather than die (issue 31).
            logger.warning("no move from rack %r: %s; passing", view.rack, e)
            return messages.PassMove()
        if isinstance(choice, PassChoice):
            return messages.PassMove()
        if isinstance(choice, ExchangeChoice):
            return messages.ExchangeMove(choice.tiles)
        tiles = sorted(choice.tiles, key=lambda p: (p.y, p.x))
        first = tiles[0]
        return messages.PlayMove(
            first.x + 1,
            first.y + 1,
            0 if choice.direction is Direction.ACROSS else 1,
            "".join(p.tile for p in tiles),
            choice.score,
        )

    def want_challenge(self, view: View, play: messages.PlayNotice) -> bool:
        board = view.board.copy()
        direction = Direction.ACROSS if play.direction == 0 else Direction.DOWN
        try:
            tiles = tiles_from_new_tiles(
                board, play.column - 1, play.row - 1, direction, play.tiles
            )
            validate_play(board, tiles, tile_set=ENGLISH, lexicon=self.lexicon)
        except WordsNotInLexicon:
            return True
        except ScrabbleError:
            return False
        return False


async def _call(value: T | Awaitable[T]) -> T:
    if inspect.isawaitable(value):
        return await value
    return value


async def _consult(method: Callable[..., T | Awaitable[T]], *args: object) -> T:
    """Ask the agent: an ``async`` method on the loop, a plain one in a worker thread.

    The thread keeps the event loop free while the agent thinks, so the websockets
    connection answers the referee's pings (issue 22: a 1 s think on the loop blocked
    the pong, and a referee with a 1 s heartbeat dropped the agent). The runner reads
    no message until the answer is back, so the view does not change meanwhile.
    """
    if inspect.iscoroutinefunction(method):
        return await _call(method(*args))
    return await _call(await asyncio.to_thread(method, *args))


class _Runner:
    """The client state machine on one connection, with the agent and its view."""

    def __init__(
        self, ws: ClientConnection, name: str, agent: Agent, patience: Patience | None = None
    ) -> None:
        self.ws = ws
        self.name = name
        self.agent = agent
        self.session = ClientSession()
        self.view = View()
        self.patience = patience or Patience()
        self.unreadable = Unreadable(name, logger)
        self._stopwatch = Stopwatch(self.patience.clock)

    def say(self, text: str) -> None:
        logger.warning("%s: %s", self.name, text)

    @property
    def expected(self) -> Expected | None:
        """What the referee owes us now: its NAME request, the verdict on our move; a
        START waits on the pairing (notices only)."""
        state = self.session.state
        if state is ClientState.INIT:
            return Expected("the referee's NAME request")
        if state is ClientState.READY:
            return Expected("START (the referee pairs the agents)", owed=False)
        if state in (
            ClientState.AWAIT_PLAY_RESPONSE,
            ClientState.AWAIT_EXCHANGE_RESPONSE,
            ClientState.AWAIT_CHALLENGE_RESPONSE,
        ):
            return Expected(f"the referee's answer in {state.value}")
        return None

    async def send(
        self, message: messages.Name | Move | messages.NoChallenge | messages.ChallengeMove
    ) -> None:
        self._stopwatch.restart()
        await self.ws.send(self.session.send(message))

    async def think(self) -> None:
        view = self.view
        move = cast(Move, await _consult(self.agent.choose_move, view))
        if isinstance(move, messages.PlayMove):
            view.pending = move
        elif isinstance(move, messages.ExchangeMove):
            view.exchanging = move.tiles
        await self.send(move)

    async def run(self, games: int, results: list[GameResult]) -> bool:
        """Play until ``games`` games have ended (True) or the connection closes (False).

        :class:`~meeple.clients.watch.NoAnswer` if the referee owes an answer that does
        not come within :attr:`patience`."""
        try:
            return await self._run(games, results)
        finally:
            if summary := self.unreadable.summary():
                logger.warning("%s: %s", self.name, summary)

    async def _run(self, games: int, results: list[GameResult]) -> bool:
        while True:
            try:
                expected = self.expected
                since = self._stopwatch.since(expected)
                data = await answered(self.ws.recv, expected, self.patience, self.say, since=since)
            except ConnectionClosedOK:
                return False
            if isinstance(data, str):
                self.unreadable.note(
                    "text message", "the spec's messages are binary", data.encode()
                )
                continue
            try:
                message = self.session.receive(data)
            except ProtocolError as e:
                kind = f"message ({e.reason.split(':')[0]})"
                self.unreadable.note(kind, e.reason, data)
                continue
            if isinstance(message, messages.EndMessage):
                if message.reason is not messages.EndReason.CONNECTION_ERROR:
                    results.append(
                        GameResult(message.reason, message.score, message.opponent_score)
                    )
                    if len(results) >= games:
                        return True
                continue
            await self.follow(message)

    async def follow(self, message: messages.ServerMessage) -> None:
        """Keep the view in step with one message, and act when it is our turn."""
        view = self.view
        if isinstance(message, messages.NameRequest):
            await self.send(messages.Name(self.name))
            return
        if isinstance(message, messages.Start):
            self.view = view = View(
                message.order,
                Board.from_rows(message.board),
                message.tiles,
                message.score,
                message.opponent_score,
                message.player_time,
                message.total_time,
            )
        elif isinstance(
            message,
            messages.PassNotice
            | messages.ExchangeNotice
            | messages.Invalid
            | messages.NoChallengeTimes,
        ):
            view.player_time, view.total_time = message.player_time, message.total_time
        if isinstance(message, messages.Invalid):
            view.refused += 1
            view.pending = None
        elif isinstance(message, messages.ExchangeTiles):
            view.rack = _take(view.rack, view.exchanging) + message.tiles
            view.exchanging = ""
        elif isinstance(message, messages.NoChallengeTiles | messages.ChallengeRejectedTiles):
            if view.pending is not None:
                self._place(view.pending)
                view.rack = _take(view.rack, view.pending.tiles) + message.tiles
                view.score += view.pending.score
                view.pending = None
            if isinstance(message, messages.ChallengeRejectedTiles):
                view.player_time, view.total_time = message.player_time, message.total_time
        elif isinstance(message, messages.ChallengeAccepted):
            view.pending = None  # our play was withdrawn; the rack is as before
        elif isinstance(message, messages.PlayNotice):
            view.player_time, view.total_time = message.player_time, message.total_time
            view.opponent_play = message
            if await _consult(self.agent.want_challenge, view, message):
                await self.send(messages.ChallengeMove())
                return
            self._opponent_play_stands()
            await self.send(messages.NoChallenge())
        elif isinstance(message, messages.ChallengeAcceptedTimes):
            view.player_time, view.total_time = message.player_time, message.total_time
            view.opponent_play = None  # the phony is off the board
        elif isinstance(message, messages.ChallengeRejected | messages.NoChallengeTimes):
            self._opponent_play_stands()
        if self.session.state is ClientState.THINKING:
            if not isinstance(message, messages.Invalid):
                view.refused = 0
            await self.think()

    def _place(self, play: messages.PlayMove | messages.PlayNotice) -> None:
        """Put a play that stands on our board; one that does not fit the board as we
        know it is logged (once per kind) and left off, never raised (issue 31)."""
        try:
            _place(self.view.board, play)
        except ScrabbleError as e:
            self.unreadable.note("play that does not fit the board", str(e), repr(play).encode())

    def _opponent_play_stands(self) -> None:
        view = self.view
        if view.opponent_play is not None:
            self._place(view.opponent_play)
            view.opponent_score += view.opponent_play.score
            view.opponent_play = None


# Close codes that end the client instead of a reconnect: the contest is over for
# everyone (1000), or this agent may not play (1008: withdrawn, not in the contest).
_DONE, _REFUSED = 1000, 1008
RECONNECT_FOR = 60.0  # seconds of bounded backoff after a drop (issue 16, bug 5)
MAX_RETRY_DELAY = 5.0


async def play(
    uri: str,
    name: str,
    agent: Agent,
    *,
    games: int = 1,
    reconnect_for: float = RECONNECT_FOR,
    retry_delay: float = 0.25,
    patience: Patience | None = None,
) -> list[GameResult]:
    """Connect to a referee, play until ``games`` games have ended, and return their ENDs.

    END reason 2 (the other agent dropped) is not a finished game: the client waits
    for the START that resumes it. If the connection is lost it reconnects (spec,
    client State: * ANY, "Request new connection"), with a backoff from
    ``retry_delay`` doubling up to 5 s, for ``reconnect_for`` seconds after the drop,
    then sends NAME again; the referee resumes the game from its log. A contest
    that closes the connection with 1000 is over: the results so far are returned. If
    the first connection fails, or the server refuses the agent (1008), it raises
    ConnectionError.
    """
    results: list[GameResult] = []
    connected = False
    lost_at: float | None = None
    delay = retry_delay
    loop = asyncio.get_running_loop()
    while True:
        code: int | None = None
        reason = ""
        try:
            async with connect(uri, max_size=2**16, compression=None) as ws:
                connected, lost_at, delay = True, None, retry_delay
                if await _Runner(ws, name, agent, patience).run(games, results):
                    return results
                code, reason = ws.close_code, ws.close_reason or ""
        except ConnectionClosed as e:
            if e.rcvd is not None:
                code, reason = e.rcvd.code, e.rcvd.reason
            logger.info("%s: connection lost (%s)", name, e)
        except (OSError, InvalidHandshake, TimeoutError) as e:
            if not connected:  # no server there at all: say so now
                raise ConnectionError(f"{name}: cannot reach {uri}: {e}") from e
            logger.info("%s: cannot reconnect yet (%s)", name, e)
        if code == _DONE:
            logger.info("%s: the server is done (%s) after %d games", name, reason, len(results))
            return results
        if code == _REFUSED:
            raise ConnectionError(f"{name}: refused by the server: {reason or code}")
        now = loop.time()
        if lost_at is None:
            lost_at = now
        if now - lost_at > reconnect_for:
            raise ConnectionError(
                f"{name}: lost the server after {len(results)} games "
                f"(no reconnect in {reconnect_for:g} s)"
            )
        await asyncio.sleep(delay)
        delay = min(delay * 2, MAX_RETRY_DELAY)


def run_builtin(
    host: str,
    port: int,
    name: str,
    lexicon: Lexicon,
    *,
    games: int = 1,
    patience: Patience | None = None,
) -> int:
    """``meeple bot scrabble --protocol cmpn402``: the built-in agent plays ``games`` games
    (in a contest: as it is paired, reconnecting after a drop)."""
    uri = f"ws://{host}:{port}"
    try:
        results = asyncio.run(
            play(uri, name, BuiltinAgent(lexicon), games=games, patience=patience)
        )
    except (ConnectionError, NoAnswer) as e:
        print(f"meeple bot: {e}", file=sys.stderr)
        return 1
    for r in results:
        print(f"{r.reason.name.lower()}: {name} {r.score}  opponent {r.opponent_score}")
    if len(results) < games:
        print(
            f"meeple bot: the contest ended after {len(results)} of {games} games", file=sys.stderr
        )
    return 0

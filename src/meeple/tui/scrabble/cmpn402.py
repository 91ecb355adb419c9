"""Scrabble over CMPN402 for the terminal app: a human at the keyboard as one of the two
contest agents.

The referee (``meeple serve``'s cmpn402 listener, or any CMPN402 server) seats two
agents; this adapter is one of them. What the agent would decide in code, the player
decides on the screen: the move on its turn (``choose_move``), and during the
challenge window whether to challenge the other agent's play (``want_challenge``),
with the window's remaining time shown. Both clocks the protocol reports, our own
time and the game's total time, are sent to the app as :class:`Clocks` events with
the values of the moment and which of them is running; the app counts them down.

Why not :func:`meeple.clients.cmpn402.play` with an agent object: its loop reads the
next message only after the agent has answered, which suits a program but not a
person. While a human thinks, END (a clock ran out, the admin pressed Stop) and the
end of the challenge window must still reach the screen; and an answer that comes
after the window closed must not be sent as if it were still open (the library's
session would then be a message out of step and never ask for a move again). So
this adapter reads all the time and runs the same sans-I/O
:class:`~meeple.protocols.cmpn402.session.ClientSession` the library does, which
refuses a move the state does not allow before any byte goes out; the message
classes and the engine's rules (the claimed score is the engine's score of the play)
are shared with the library and the referee.

Decisions where the protocol says nothing a player needs:

- START does not carry the other agent's name, so the other seat is ``opponent``.
- Times in a message are always the receiver's own time and the total time; the
  other agent's time is never sent, so only ours is shown.
- The bag count assumes the other rack holds 7 (exact until the bag runs low), as
  :class:`meeple.clients.cmpn402.View` does.
- CMPN402 has no chat: ``say`` is refused locally with a sentence.
- A table of 2 only; ``--players`` is ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from meeple.clients.watch import Unreadable
from meeple.games.scrabble.board import Board, Direction
from meeple.games.scrabble.errors import ScrabbleError
from meeple.games.scrabble.moves import Placement, tiles_from_new_tiles, tiles_from_word
from meeple.games.scrabble.rules import PlayResult, validate_play
from meeple.games.scrabble.tiles import BLANK
from meeple.protocols.cmpn402 import messages
from meeple.protocols.cmpn402.errors import ProtocolError
from meeple.protocols.cmpn402.session import ClientSession, ClientState
from meeple.tui.connection import (
    HANDSHAKE_TIMEOUT,
    ConnectFailed,
    ConnectOptions,
    MoveError,
    ServerNotice,
)
from meeple.tui.scrabble import events as ui

__all__ = ["END_REASONS", "INVALID_TEXT", "OPPONENT", "Cmpn402Scrabble", "connect"]

logger = logging.getLogger(__name__)

OPPONENT = "opponent"
TILES_IN_GAME = 100  # the English tile set
RACK_SIZE = 7
MAX_MESSAGE_SIZE = 2**16

INVALID_TEXT = (
    "INVALID: the referee refused the move (tiles not in one line or not touching, a "
    "square taken, tiles you do not hold, or an exchange with fewer than 7 tiles in the bag)"
)
END_REASONS: dict[messages.EndReason, str] = {
    messages.EndReason.ALL_TILES_USED: "the game is over",
    messages.EndReason.TIME_ENDED: "the game ended: a clock ran out",
    messages.EndReason.CONNECTION_ERROR: "the game stopped: the other agent lost its connection "
    "(it resumes when the agent is back)",
    messages.EndReason.STOPPED: "the game was stopped by the referee's admin",
}


def _direction(code: int) -> Direction:
    return Direction.ACROSS if code == 0 else Direction.DOWN


def _take(rack: str, tiles: str) -> str:
    """``rack`` less ``tiles`` (a blank on the board, lower case, is a ``?`` on the rack)."""
    left = Counter(rack)
    left.subtract(BLANK if t.islower() else t for t in tiles)
    return "".join(sorted(left.elements()))


class Cmpn402Scrabble:
    """A :class:`~meeple.tui.connection.Connection` for Scrabble as a CMPN402 agent."""

    def __init__(
        self,
        ws: ClientConnection,
        name: str,
        session: ClientSession,
        *,
        now: Callable[[], float] | None = None,
    ) -> None:
        self._ws = ws
        self.name = name
        self.session = session
        self._now = now or asyncio.get_running_loop().time
        self._events: asyncio.Queue[ui.ScrabbleEvent] = asyncio.Queue()
        self.unreadable = Unreadable(name, logger)
        self._reader: asyncio.Task[None] | None = None
        self._board = Board()
        self._rack = ""
        self._scores: dict[str, int] = {}
        self._pending: tuple[messages.PlayMove, PlayResult] | None = (
            None  # our play, awaiting verdict
        )
        self._exchanging = ""
        self._offered: (
            tuple[messages.PlayNotice, tuple[Placement, ...], PlayResult | None] | None
        ) = None
        self._player_ms = self._total_ms = 0
        self._player_running = self._total_running = False
        self._anchor = 0.0

    # --- events ---------------------------------------------------------------------------

    async def events(self) -> AsyncIterator[ui.ScrabbleEvent]:
        yield ui.Welcomed(self.name, False)
        if self._reader is None:
            self._reader = asyncio.create_task(self._read(), name=f"cmpn402-{self.name}")
        while True:
            event = await self._events.get()
            yield event
            if isinstance(event, ui.ConnectionLost):
                return

    async def _read(self) -> None:
        reason = "connection closed by the referee"
        try:
            async for data in self._ws:
                if isinstance(data, str):
                    why = "the spec's messages are binary"
                    self._note("text message", why, data.encode())
                    continue
                try:
                    message = self.session.receive(data)
                except ProtocolError as e:
                    self._note(f"message ({e.reason.split(':')[0]})", e.reason, data)
                    continue
                if isinstance(message, messages.NameRequest):  # asked again (a reconnect): answer
                    await self._ws.send(self.session.send(messages.Name(self.name)))
                    continue
                try:
                    events = self._translate(message)
                except ScrabbleError as e:  # a play that does not fit the board we know
                    self._note(type(message).__name__, str(e), data)
                    continue
                self._emit(*events)
        except ConnectionClosed as e:
            reason = (
                f"connection closed by the referee ({e.rcvd.reason or e.rcvd.code})"
                if (e.rcvd)
                else "connection lost"
            )
        except OSError as e:
            reason = f"connection lost ({e})"
        except Exception:  # a bug here must end the game on screen, not hang it
            logger.exception("%s: reading the referee failed", self.name)
            reason = "internal error reading the referee (see the log)"
        self._emit(ui.ConnectionLost(reason))

    def _note(self, kind: str, reason: str, data: bytes) -> None:
        """A referee message we cannot take: on the status line once per kind (issue 31)."""
        text = self.unreadable.note(kind, reason, data)
        if text is not None:
            self._emit(ServerNotice(text))

    def _emit(self, *events: ui.ScrabbleEvent) -> None:
        for event in events:
            self._events.put_nowait(event)

    def _translate(self, message: messages.ServerMessage) -> list[ui.ScrabbleEvent]:
        me = self.name
        if isinstance(message, messages.Start):
            self._board = Board.from_rows(message.board)
            self._rack = message.tiles
            self._pending, self._offered, self._exchanging = None, None, ""
            self._scores = {me: message.score, OPPONENT: message.opponent_score}
            players = (me, OPPONENT) if message.order == 1 else (OPPONENT, me)
            mine = message.order == 1
            started = ui.Started(
                players,
                board=tuple(message.board),
                scores=tuple(self._scores.items()),
            )
            return [
                started,
                ui.RackChanged(self._rack),
                self._bag(),
                ui.TurnChanged(me if mine else OPPONENT, mine),
                self._clocks(message.player_time, message.total_time, mine, True),
            ]
        if isinstance(message, messages.Invalid):
            self._pending, self._exchanging = None, ""
            return [
                ui.Refused("INVALID", INVALID_TEXT),
                self._clocks(message.player_time, message.total_time, True, True),
            ]
        if isinstance(message, messages.ExchangeTiles):
            count = len(self._exchanging)
            self._rack = _take(self._rack, self._exchanging) + message.tiles
            self._exchanging = ""
            return [
                ui.Swapped(me, count),
                ui.RackChanged(self._rack),
                ui.TurnChanged(OPPONENT, False),
                self._clocks(None, None, False, True),
            ]
        if isinstance(message, messages.NoChallengeTiles | messages.ChallengeRejectedTiles):
            events = self._our_play_stands(message.tiles)
            if isinstance(message, messages.NoChallengeTiles):
                return [
                    *events,
                    ui.TurnChanged(OPPONENT, False),
                    self._clocks(None, None, False, True),
                ]
            return [
                *events,
                ui.Noted(f"{OPPONENT} challenged and lost: every word is good; your turn again"),
                ui.TurnChanged(me, True),
                self._clocks(message.player_time, message.total_time, True, True),
            ]
        if isinstance(message, messages.ChallengeAccepted):
            words = ", ".join(w.text for w in self._pending[1].words) if self._pending else ""
            self._pending = None
            return [
                ui.Noted(f"{OPPONENT} challenged {words}: not all in the lexicon; play withdrawn"),
                ui.TurnChanged(OPPONENT, False),
                self._clocks(None, None, False, True),
            ]
        if isinstance(message, messages.PassNotice | messages.ExchangeNotice):
            count = message.count if isinstance(message, messages.ExchangeNotice) else 0
            return [
                ui.Swapped(OPPONENT, count),
                ui.TurnChanged(me, True),
                self._clocks(message.player_time, message.total_time, True, True),
            ]
        if isinstance(message, messages.PlayNotice):
            return self._offer(message)
        if isinstance(message, messages.NoChallengeTimes):  # the window ran out: the play stands
            return [
                ui.ChallengeClosed(),
                *self._their_play_stands(),
                ui.Noted("the challenge time ran out: the play stands"),
                ui.TurnChanged(me, True),
                self._clocks(message.player_time, message.total_time, True, True),
            ]
        if isinstance(message, messages.ChallengeAcceptedTimes):
            words = self._offered_words()
            self._offered = None
            return [
                ui.Noted(f"challenge upheld: {words} withdrawn; your turn"),
                ui.TurnChanged(me, True),
                self._clocks(message.player_time, message.total_time, True, True),
            ]
        if isinstance(message, messages.ChallengeRejected):
            return [
                *self._their_play_stands(),
                ui.Noted("challenge lost: every word is good; you lose your turn"),
                ui.TurnChanged(OPPONENT, False),
                self._clocks(None, None, False, True),
            ]
        if isinstance(message, messages.EndMessage):
            self._scores = {me: message.score, OPPONENT: message.opponent_score}
            scores = tuple(sorted(self._scores.items(), key=lambda s: -s[1]))
            self._offered = self._pending = None
            return [
                ui.ChallengeClosed(),
                self._clocks(None, None, False, False),
                ui.GameEnded(END_REASONS.get(message.reason, "the game ended"), scores),
            ]
        return []

    def _offer(self, message: messages.PlayNotice) -> list[ui.ScrabbleEvent]:
        """The other agent's play, for our verdict: its words, worked out on our board."""
        direction = _direction(message.direction)
        placed: tuple[Placement, ...] = ()
        result: PlayResult | None = None
        with contextlib.suppress(ScrabbleError):
            placed = tiles_from_new_tiles(
                self._board, message.column - 1, message.row - 1, direction, message.tiles
            )
            result = validate_play(self._board, placed)
        self._offered = (message, placed, result)
        x, y = message.column - 1, message.row - 1
        words: tuple[str, ...] = (message.tiles,)
        if result is not None:
            main = result.main_word
            x, y, direction = main.x, main.y, main.direction
            words = tuple(w.text for w in result.words)
        return [
            self._clocks(message.player_time, message.total_time, False, False),
            ui.ChallengeOffered(
                OPPONENT, x, y, direction, words, message.score, message.challenge_time
            ),
        ]

    def _offered_words(self) -> str:
        if self._offered is None:
            return "the play"
        _, _, result = self._offered
        return ", ".join(w.text for w in result.words) if result else self._offered[0].tiles

    def _their_play_stands(self) -> list[ui.ScrabbleEvent]:
        if self._offered is None:
            return []
        message, placed, result = self._offered
        self._offered = None
        for p in placed:
            self._board.place(p.x, p.y, p.tile)
        self._scores[OPPONENT] = self._scores.get(OPPONENT, 0) + message.score
        if result is None:  # the referee took it, so this cannot happen with a true board
            logger.warning("%s: a play we cannot place: %s", self.name, message)
            return [ui.Noted(f"{OPPONENT} played {message.tiles} for {message.score}")]
        main = result.main_word
        played = ui.WordPlayed(OPPONENT, main.x, main.y, main.direction, main.text, message.score)
        return [played, self._bag()]

    def _our_play_stands(self, new_tiles: str) -> list[ui.ScrabbleEvent]:
        if self._pending is None:
            return [ui.RackChanged(self._rack)]
        move, result = self._pending
        self._pending = None
        for p in result.tiles:
            self._board.place(p.x, p.y, p.tile)
        self._rack = _take(self._rack, move.tiles) + new_tiles
        self._scores[self.name] = self._scores.get(self.name, 0) + move.score
        main = result.main_word
        played = ui.WordPlayed(self.name, main.x, main.y, main.direction, main.text, move.score)
        return [played, ui.RackChanged(self._rack), self._bag()]

    def _bag(self) -> ui.BagCount:
        on_board = sum(1 for _ in self._board.tiles())
        return ui.BagCount(max(0, TILES_IN_GAME - on_board - len(self._rack) - RACK_SIZE))

    def _clocks(
        self, player_ms: int | None, total_ms: int | None, player: bool, total: bool
    ) -> ui.Clocks:
        """The clocks now: from a message's times, or run on from the last ones we had."""
        now = self._now()
        elapsed = round((now - self._anchor) * 1000)
        if player_ms is None:
            player_ms = max(0, self._player_ms - (elapsed if self._player_running else 0))
        if total_ms is None:
            total_ms = max(0, self._total_ms - (elapsed if self._total_running else 0))
        self._player_ms, self._total_ms, self._anchor = player_ms, total_ms, now
        self._player_running, self._total_running = player, total
        return ui.Clocks(player_ms, total_ms, player, total)

    # --- moves ----------------------------------------------------------------------------

    async def send(self, move: ui.ScrabbleMove) -> None:
        if isinstance(move, ui.Say):
            raise MoveError("CMPN402 has no chat")
        message: messages.ClientMessage
        local: list[ui.ScrabbleEvent] = []
        after: Callable[[], list[ui.ScrabbleEvent]] | None = None  # events once it is sent
        if isinstance(move, ui.AnswerChallenge):
            if self.session.state is not ClientState.AWAIT_AGENT_CHALLENGE:
                raise MoveError("there is no play to challenge now")
            if move.challenge:
                message = messages.ChallengeMove()
                words = self._offered_words()
                local = [
                    ui.ChallengeClosed(),
                    ui.Noted(f"you challenge {words}; the referee looks"),
                ]
            else:
                message = messages.NoChallenge()
                after = self._accepted
        elif self.session.state is not ClientState.THINKING:
            raise MoveError("not now: wait for your turn")
        elif isinstance(move, ui.PlayWord):
            message = self._play(move)
            local = [self._clocks(None, None, False, False)]  # paused if the referee takes it
        elif isinstance(move, ui.Swap):
            message = messages.ExchangeMove(move.tiles)
            self._exchanging = move.tiles
        else:
            assert isinstance(move, ui.Pass)
            message = messages.PassMove()
            local = [
                ui.Swapped(self.name, 0),
                ui.TurnChanged(OPPONENT, False),
                self._clocks(None, None, False, True),
            ]
        try:
            data = self.session.send(message)
        except ProtocolError as e:
            self._pending, self._exchanging = None, ""
            raise MoveError(f"not now ({e.reason})") from None
        # The session took it: what follows locally goes out before the referee's answer
        # can come in (the reader runs while we wait on the socket).
        self._emit(*local)
        if after is not None:
            self._emit(*after())
        try:
            await self._ws.send(data)
        except (ConnectionClosed, OSError) as e:
            raise MoveError(f"could not send: {e}") from None

    def _accepted(self) -> list[ui.ScrabbleEvent]:
        """We let the other agent's play stand: it goes on the board and we move."""
        return [
            ui.ChallengeClosed(),
            *self._their_play_stands(),
            ui.TurnChanged(self.name, True),
            self._clocks(None, None, True, True),
        ]

    def _play(self, move: ui.PlayWord) -> messages.PlayMove:
        """The word as CMPN402 carries it: the new tiles from the first, and their score."""
        try:
            placed = tiles_from_word(self._board, move.x, move.y, move.direction, move.word)
            result = validate_play(self._board, placed, rack=self._rack)
        except ScrabbleError as e:
            raise MoveError(str(e)) from None
        tiles = sorted(result.tiles, key=lambda p: (p.y, p.x))
        first = tiles[0]
        play = messages.PlayMove(
            first.x + 1,
            first.y + 1,
            0 if move.direction is Direction.ACROSS else 1,
            "".join(p.tile for p in tiles),
            result.score,
        )
        self._pending = (play, result)
        return play

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        with contextlib.suppress(Exception):
            await self._ws.close()


async def connect(options: ConnectOptions) -> Cmpn402Scrabble:
    """Open the WebSocket, answer the referee's NAME request with our name."""
    uri = f"ws://{options.host}:{options.port}"
    try:
        ws = await ws_connect(
            uri, max_size=MAX_MESSAGE_SIZE, compression=None, open_timeout=HANDSHAKE_TIMEOUT
        )
    except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as e:
        raise ConnectFailed(f"cannot reach a CMPN402 referee at {uri} ({e})") from None
    session = ClientSession()
    try:
        async with asyncio.timeout(HANDSHAKE_TIMEOUT):
            while session.state is ClientState.INIT:
                data = await ws.recv()
                if isinstance(data, bytes) and isinstance(
                    session.receive(data), messages.NameRequest
                ):
                    await ws.send(session.send(messages.Name(options.name)))
    except ConnectionClosed as e:
        why = e.rcvd.reason if e.rcvd and e.rcvd.reason else "closed"
        raise ConnectFailed(f"the referee did not seat us: {why}") from None
    except TimeoutError:
        await ws.close()
        raise ConnectFailed("the referee did not ask for our name (timed out)") from None
    except ProtocolError as e:
        await ws.close()
        raise ConnectFailed(f"not let in: {e.reason}") from None
    return Cmpn402Scrabble(ws, options.name, session)

"""Scrabble over Clarkson for the terminal app: :class:`~meeple.clients.clarkson.ClarksonClient`
turned into :mod:`~meeple.tui.scrabble.events`.

Clarkson (RFC 1.0.1) tells a player less than Twente: after each turn everyone gets
the mover's new total (``SCORE``), the whole board (``BOARDPUSH``) and whose turn is
next; never the word. What the adapter adds to the client library:

- the table step: the client says HELLO and USERSET; the adapter says ``READY`` once
  ``options.players`` are at the table (``USERJOIN``), as ``meeple bot`` does, so
  ``--players 1`` plays alone (§3.8 lets a lone client play);
- the word each turn, worked out by comparing the pushed board with the last one:
  the new tiles and the letters they join in their line, with the mover's score
  difference as its score; a turn that adds no tile is shown as a pass (decision:
  Clarkson does not tell the others whether the mover passed or exchanged);
- ``STARTING`` and the opening ``SCORE`` lines become one
  :class:`~meeple.tui.scrabble.events.Started` (with the players in turn order) when
  the first board arrives; ``WINNER`` a :class:`~meeple.tui.scrabble.events.GameEnded`
  with the final totals;
- what Clarkson cannot carry raises :class:`~meeple.tui.connection.MoveError`: blanks
  (its bag has none), chat, challenges, and an exchange of anything but one tile or
  the whole hand (§3.16); ``NOK`` replies are shown with the server's own words.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from meeple.clients.clarkson import ClarksonClient, ClarksonClientError
from meeple.clients.watch import NoAnswer
from meeple.games.scrabble.board import Board, Direction
from meeple.games.scrabble.errors import ScrabbleError
from meeple.games.scrabble.moves import tiles_from_word
from meeple.protocols.clarkson import messages
from meeple.protocols.clarkson.errors import LocalProtocolError
from meeple.tui.connection import ClientAdapter, ConnectFailed, ConnectOptions, MoveError
from meeple.tui.scrabble import events as ui

__all__ = ["ClarksonScrabble", "connect", "word_from_boards"]


def word_from_boards(before: Board, after: Board) -> tuple[int, int, Direction, str] | None:
    """The word the new tiles on ``after`` form: ``(x, y, direction, word)``, or None.

    New tiles in one row are read across, in one column down; a lone new tile is read
    along the line where it joins a neighbour (across first). None when no tile is new
    or the new tiles are not in one line (no legal play does that).
    """
    new = [(x, y) for x, y, _ in after.tiles() if before.is_empty_at(x, y)]
    if not new:
        return None
    xs, ys = {x for x, _ in new}, {y for _, y in new}
    if len(ys) == 1 and len(xs) > 1:
        direction = Direction.ACROSS
    elif len(xs) == 1 and len(ys) > 1:
        direction = Direction.DOWN
    elif len(new) == 1:
        x, y = new[0]
        beside = any(after.on_board(x + d, y) and not after.is_empty_at(x + d, y) for d in (-1, 1))
        direction = Direction.ACROSS if beside else Direction.DOWN
    else:
        return None
    dx, dy = direction.step
    x, y = min(new, key=lambda s: (s[1], s[0]))  # the first new tile along the line
    while after.on_board(x - dx, y - dy) and not after.is_empty_at(x - dx, y - dy):
        x, y = x - dx, y - dy
    start = (x, y)
    letters = []
    while after.on_board(x, y) and not after.is_empty_at(x, y):
        letters.append(after.tile(x, y) or "")
        x, y = x + dx, y + dy
    return (*start, direction, "".join(letters))


class ClarksonScrabble(ClientAdapter[ClarksonClient]):
    """A :class:`~meeple.tui.connection.Connection` for Scrabble over Clarkson."""

    def __init__(self, client: ClarksonClient, players: int) -> None:
        super().__init__(client)
        self._players = players
        self._ready = False
        self._starting = False
        self._board = Board()
        self._scores: dict[str, int] = {}  # totals as of the last board
        self._turn: str | None = None
        self._ended = False

    async def events(self) -> AsyncIterator[ui.ScrabbleEvent]:
        yield ui.Welcomed(self._client.name, False)
        yield self._queued()
        await self._ready_if_full()
        errors = (ClarksonClientError, NoAnswer, OSError)
        got = self._status.relay(self._client.receive, errors, self._events_of)
        async with contextlib.aclosing(got):
            async for event in got:
                yield event

    async def _events_of(self, message: messages.ServerMessage) -> list[ui.ScrabbleEvent]:
        """The app's events for ``message``; READY once the table is full (§3.8), the
        end after GOODBYE."""
        events = self._translate(message)
        if isinstance(message, messages.UserJoin):
            await self._ready_if_full()
        if isinstance(message, messages.Goodbye):
            events.append(ui.ConnectionLost("the server said goodbye"))
        return events

    def _queued(self) -> ui.Queued:
        return ui.Queued(min(len(self._client.users) + 1, self._players), self._players)

    async def _ready_if_full(self) -> None:
        if not self._ready and len(self._client.users) + 1 >= self._players:
            self._ready = True
            await self._client.ready()

    def _translate(self, message: messages.ServerMessage) -> list[ui.ScrabbleEvent]:
        client = self._client
        if isinstance(message, messages.UserJoin):
            return [] if self._ready else [self._queued()]
        if isinstance(message, messages.Starting):
            self._starting, self._ended = True, False
            self._board, self._scores, self._turn = Board(), {}, None
            return []
        if isinstance(message, messages.Score):
            return []  # the client keeps the totals; a board push reports them
        if isinstance(message, messages.BoardPush):
            board = message.to_board()
            if self._starting:
                self._starting = False
                self._board = board
                self._scores = dict(client.scores)
                return [ui.Started(tuple(client.players)), self._bag_count()]
            events = self._turn_played(board)
            self._board = board
            self._scores = dict(client.scores)
            return [*events, self._bag_count()]
        if isinstance(message, messages.Tiles):
            return [ui.RackChanged(message.tiles)]
        if isinstance(message, messages.Turn):
            self._turn = message.name
            return [ui.TurnChanged(message.name, message.name == client.name)]
        if isinstance(message, messages.Nok):
            return [ui.Refused("NOK", message.description or "refused by the server")]
        if isinstance(message, messages.Winner):
            if self._ended:
                return []
            self._ended = True
            scores = tuple(sorted(client.scores.items(), key=lambda s: -s[1]))
            return [ui.GameEnded("the game is over", scores)]
        return []

    def _turn_played(self, board: Board) -> list[ui.ScrabbleEvent]:
        mover = self._turn
        if mover is None:
            return []
        gained = self._client.scores.get(mover, 0) - self._scores.get(mover, 0)
        word = word_from_boards(self._board, board)
        if word is None:
            return [ui.Swapped(mover, 0)]
        x, y, direction, letters = word
        return [ui.WordPlayed(mover, x, y, direction, letters, gained)]

    def _bag_count(self) -> ui.BagCount:
        return ui.BagCount(self._client.bag_count)

    async def send(self, move: ui.ScrabbleMove) -> None:
        client = self._client
        try:
            if isinstance(move, ui.PlayWord):
                if any(c.islower() for c in move.word):
                    raise MoveError("Clarkson has no blanks: every tile is a letter")
                placed = tiles_from_word(self._board, move.x, move.y, move.direction, move.word)
                await client.place(placed)
            elif isinstance(move, ui.Swap):
                if sorted(move.tiles) == sorted(client.rack):
                    await client.exchange(None)
                elif len(move.tiles) == 1:
                    await client.exchange(move.tiles)
                else:
                    raise MoveError(
                        f"Clarkson swaps one tile or the whole hand ({messages.RACK_SIZE} tiles), "
                        "not some of them"
                    )
            elif isinstance(move, ui.Pass):
                await client.pass_turn()
            else:
                raise MoveError("Clarkson has no chat and no challenges")
        except ScrabbleError as e:
            raise MoveError(str(e)) from None
        except LocalProtocolError as e:
            raise MoveError(f"that cannot be sent now ({e})") from None
        except OSError as e:
            raise MoveError(f"could not send: {e}") from None

    async def close(self) -> None:
        await self._client.quit()
        await self._client.close()


async def connect(options: ConnectOptions) -> ClarksonScrabble:
    """Connect, HELLO and USERSET ``options.name``; READY once the table is full."""
    try:
        client = await ClarksonClient.connect(options.host, options.port, options.name)
    except ClarksonClientError as e:
        raise ConnectFailed(f"not let in: {e}") from None
    except OSError as e:
        raise ConnectFailed(
            f"cannot reach a Clarkson server at {options.host}:{options.port} ({e.strerror or e})"
        ) from None
    return ClarksonScrabble(client, options.players)

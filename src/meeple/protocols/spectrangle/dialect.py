"""The Spectrangle dialect: protocol messages to engine actions, engine events to lines.

The server layer holds a :class:`~meeple.games.spectrangle.Game` per room and a
:class:`~meeple.protocols.spectrangle.session.ServerSession` per seat; these pure
functions translate between them so the room never formats a line itself:

- :func:`opening_messages` — ``start with``, ``order`` and the first tiles line;
- :func:`action_for` — a client's place / skip / exchange as an engine action;
- :func:`messages_for` — the lines that announce the events ``Game.apply`` returned;
- :func:`error_word_for` (re-exported from errors) — the reply to a rule error.

Decisions (docs/protocols/spectrangle.md): ``start with`` and ``order`` list the players
in turn order (both lines are equal, as the transcript's server sends them), the
tiles line in seat order (the order they joined, as the transcript's server does);
after every turn the server sends the tiles line again (``turn`` or ``skip`` for the
next player) unless the game is over, when ``game finished leaderboard`` follows
instead, ranked by final score.
"""

from __future__ import annotations

from collections.abc import Iterable

from meeple.games import spectrangle as engine
from meeple.protocols.spectrangle.errors import error_word_for
from meeple.protocols.spectrangle.messages import (
    ClientMessage,
    Exchange,
    GameFinished,
    Hand,
    Move,
    Order,
    Place,
    PlayerLeft,
    PlayerSkipped,
    Replace,
    ServerMessage,
    Skip,
    StartWith,
    Tiles,
)

__all__ = [
    "action_for",
    "error_word_for",
    "leaderboard",
    "messages_for",
    "opening_messages",
    "tiles_message",
]


def tiles_message(game: engine.Game) -> Tiles:
    """The tiles line for the game now: every hand, and whose turn (or skip) it is."""
    turn = game.turn
    if turn is None:
        raise ValueError("the game is over: no tiles line")
    hands = tuple(Hand.of(name, game.hand(seat)) for seat, name in enumerate(game.players))
    return Tiles(hands, game.players[turn], game.must_skip())


def opening_messages(game: engine.Game) -> list[ServerMessage]:
    """``start with``, ``order`` and the first tiles line, for every player."""
    turns = tuple(game.players[seat] for seat in game.order)
    return [
        StartWith(turns),
        Order(turns),
        tiles_message(game),
    ]


def leaderboard(game: engine.Game) -> GameFinished:
    """``game finished leaderboard`` from a finished game's result."""
    result = game.result
    if result is None:
        raise ValueError("the game has no result")
    return GameFinished(tuple((game.players[p], result.scores[p]) for p in result.ranking))


def action_for(message: ClientMessage, seat: int) -> engine.Action:
    """The engine action for a client's turn command; ValueError for other messages."""
    if isinstance(message, Place):
        return engine.Place(seat, message.tile, message.index)
    if isinstance(message, Skip):
        return engine.Skip(seat)
    if isinstance(message, Exchange):
        return engine.Exchange(seat, message.tile)
    raise ValueError(f"{type(message).__name__} is not a turn command")


def messages_for(game: engine.Game, events: Iterable[engine.Event]) -> list[ServerMessage]:
    """The lines announcing ``events`` (just returned by ``game.apply``) to every player.

    Hands are public in Spectrangle (the tiles line shows all), so every player gets
    the same lines. Drawn tiles show in the next tiles line, not on a line of their own.
    """
    names = game.players
    out: list[ServerMessage] = []
    for event in events:
        if isinstance(event, engine.TilePlaced):
            out.append(Move(names[event.player], event.tile, event.index, event.points))
        elif isinstance(event, engine.Skipped):
            out.append(PlayerSkipped(names[event.player]))
        elif isinstance(event, engine.Exchanged):
            out.append(Replace(names[event.player], event.tile, event.new_tile))
        elif isinstance(event, engine.TurnStarted):
            out.append(tiles_message(game))
        elif isinstance(event, engine.GameEnded):
            out.append(leaderboard(game))
        elif isinstance(event, engine.GameAbandoned):
            out.append(PlayerLeft(names[event.player]))
    return out

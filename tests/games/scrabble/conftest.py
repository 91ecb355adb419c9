"""Shared fixtures for the Scrabble engine tests: stacked bags, small lexicons, a random driver."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from random import Random

import pytest

from meeple.games.scrabble.board import Direction
from meeple.games.scrabble.errors import RuleError
from meeple.games.scrabble.game import (
    Accept,
    Action,
    Challenge,
    End,
    EndReason,
    Exchange,
    Game,
    Leave,
    Pass,
    Play,
)
from meeple.games.scrabble.moves import tiles_from_new_tiles

_WORD_TEXT = (
    "AA AB AD AE AG AH AI AL AM AN AR AS AT AW AX AY BA BE BI BO BY DA DE DO ED EF EH EL EM EN "
    "ER ES EX FA FE GO HA HE HI HM HO ID IF IN IS IT JO KA KI LA LI LO MA ME MI MO MU MY NA NE "
    "NO NU OD OE OF OH OI OM ON OP OR OS OW OX OY PA PE PI QI RE SH SI SO TA TI TO UH UM UN UP "
    "US UT WE WO XI XU YA YE YO ZA CAT CATS CAR CARE CART DOG DOGS RETAINS TO TON TONE AXE"
)
WORDS = frozenset(_WORD_TEXT.split())


def stacked_bag(*racks: str, then: str = "") -> list[str]:
    """A bag order that deals ``racks`` to seats 0, 1, … and then draws ``then`` in order."""
    return list(reversed("".join(racks) + then))


def tile_counter(game: Game) -> Counter[str]:
    """Every tile of the game, wherever it is, as rack tiles (``?`` for a blank)."""
    counts: Counter[str] = Counter(game.bag.tiles)
    for rack in game.racks:
        counts.update(rack)
    counts.update("?" if t.islower() else t for _, _, t in game.board.tiles())
    return counts


class ParityLexicon:
    """A deterministic stand-in lexicon that holds about two words in three."""

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and sum(map(ord, word)) % 3 != 0


def random_action(game: Game, choice: int) -> Action:
    """A plausible action for the player on turn (or a challenger), chosen by ``choice``.

    Plays are built structurally (new tiles laid from a square next to the board), so
    they pass the structure checks often; the caller handles the ones that fail.
    """
    rng = Random(choice)
    turn = game.turn
    assert turn is not None
    n = len(game.players)
    if game.pending is not None:
        kind = rng.random()
        challengers = [i for i in range(n) if i != game.pending.player]
        if kind < 0.3 and challengers:
            return Challenge(rng.choice(challengers))
        if kind < 0.45 or game.pending.going_out:
            return Accept(turn)
    kind = rng.random()
    rack = game.rack(turn)
    if kind < 0.08:
        return Pass(turn)
    if kind < 0.16 and rack:
        k = rng.randint(1, len(rack))
        return Exchange(turn, "".join(rng.sample(rack, k)))
    if kind < 0.17:
        return End(rng.choice([EndReason.TIME, EndReason.ADMIN, EndReason.DISCONNECT]), turn)
    if kind < 0.18:
        return Leave(rng.choice([i for i in range(n) if i not in game.state().left]))
    for _ in range(12):  # several tries at a play that passes, so games run long
        play = _random_play(game, turn, rack, rng)
        if play is not None:
            return play
    return Pass(turn)


def _random_play(game: Game, turn: int, rack: str, rng: Random) -> Play | None:
    board = game.board
    direction = rng.choice(list(Direction))
    if board.is_empty:
        x, y = board.layout.centre
        dx, dy = direction.step
        x, y = x - dx * rng.randint(0, 1), y - dy * rng.randint(0, 1)
    else:
        squares = [
            (x + ox, y + oy)
            for x, y, _ in board.tiles()
            for ox, oy in ((1, 0), (-1, 0), (0, 1), (0, -1))
            if board.on_board(x + ox, y + oy) and board.is_empty_at(x + ox, y + oy)
        ]
        if not squares or not rack:
            return None
        x, y = rng.choice(squares)
    k = rng.randint(1, max(1, min(len(rack), rng.choice([2, 3, 7]))))
    tiles = [t if t != "?" else rng.choice("aeiou") for t in rng.sample(rack, k)]
    try:
        play = Play(turn, tiles_from_new_tiles(board, x, y, direction, tiles))
        game.validate(play.tiles)
    except RuleError:
        return None
    return play


def play_random_game(game: Game, choices: list[int], check: Callable[[Game], None]) -> Game:
    """Apply a random action per choice (Pass or Accept when refused), ``check`` after each."""
    for choice in choices:
        if game.is_over:
            break
        action = random_action(game, choice)
        try:
            game.apply(action)
        except RuleError:
            turn = game.turn
            assert turn is not None
            fallback: Action = Pass(turn) if game.pending is None else Accept(turn)
            if game.pending is not None and not game.pending.going_out:
                fallback = Pass(turn)
            game.apply(fallback)
        check(game)
    return game


class Helpers:
    """The helpers above, handed to tests as the ``helpers`` fixture (conftest is no module)."""

    words = WORDS
    stacked_bag = staticmethod(stacked_bag)
    tile_counter = staticmethod(tile_counter)
    random_action = staticmethod(random_action)
    play_random_game = staticmethod(play_random_game)
    ParityLexicon = ParityLexicon


@pytest.fixture(scope="session")
def helpers() -> type[Helpers]:
    return Helpers


@pytest.fixture(scope="session")
def words() -> frozenset[str]:
    return WORDS

"""The bag of undrawn tiles and the racks players hold.

The bag's order is part of the game state: tiles are drawn from the end of
:attr:`Bag.tiles`, so a game replays exactly from its initial bag order and the
RNG state for later exchanges. Every random choice goes through a ``random.Random``
instance that the caller passes in (house rule 1: no global RNG in ``games/``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Self

from meeple.games.rng import Random
from meeple.games.scrabble.errors import TilesNotOnRack
from meeple.games.scrabble.rules import missing_tiles
from meeple.games.scrabble.tiles import BLANK, TileSet

__all__ = ["RACK_SIZE", "Bag", "Rack", "sort_tiles"]

RACK_SIZE = 7


def sort_tiles(tiles: Iterable[str]) -> str:
    """Tiles in alphabetical order with blanks (``?``) last, the way GCG writes a rack."""
    return "".join(sorted(tiles, key=lambda t: (t == BLANK, t)))


class _Tiles:
    """Tiles in an order that matters (the bag's draw order, a rack's drawn order): a
    mutable sequence of one-letter strings, equal to another of its kind with the same
    tiles in the same order."""

    __slots__ = ("_tiles",)

    def __init__(self, tiles: Iterable[str] = ()) -> None:
        self._tiles = list(tiles)

    def __len__(self) -> int:
        return len(self._tiles)

    def __iter__(self) -> Iterator[str]:
        return iter(self._tiles)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self._tiles == other._tiles

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"{type(self).__name__}({''.join(self._tiles)!r})"

    def copy(self) -> Self:
        return type(self)(self._tiles)


class Bag(_Tiles):
    """The undrawn tiles, in draw order (the last tile is drawn first).

    Make one with :meth:`from_tile_set` (shuffled with the game's RNG) or from an
    explicit order to replay a recorded game. :meth:`draw` takes tiles out,
    :meth:`put_back` returns exchanged tiles and reshuffles.
    """

    __slots__ = ()

    @classmethod
    def from_tile_set(cls, tile_set: TileSet, rng: Random) -> Bag:
        """A shuffled bag of ``tile_set``; its ``random_letters`` are chosen with ``rng`` first.

        The Clarkson RFC §4.2 puts two letters drawn at random where the two blanks
        would be; each is any letter of the alphabet, equally likely.
        """
        tiles = [tile for tile, n in sorted(tile_set.counts.items()) for _ in range(n)]
        tiles.extend(rng.choice(tile_set.letters) for _ in range(tile_set.random_letters))
        rng.shuffle(tiles)
        return cls(tiles)

    @property
    def tiles(self) -> tuple[str, ...]:
        """The tiles in draw order: ``tiles[-1]`` is the next one drawn."""
        return tuple(self._tiles)

    def draw(self, n: int) -> str:
        """Take up to ``n`` tiles (fewer when the bag runs out), in the order drawn."""
        n = max(0, min(n, len(self._tiles)))
        drawn = self._tiles[len(self._tiles) - n :][::-1]
        del self._tiles[len(self._tiles) - n :]
        return "".join(drawn)

    def put_back(self, tiles: Iterable[str], rng: Random) -> None:
        """Return tiles to the bag and shuffle it, so nobody knows where they went."""
        self._tiles.extend(tiles)
        rng.shuffle(self._tiles)

    def undraw(self, tiles: str) -> None:
        """Put just-drawn tiles back on top, exactly undoing :meth:`draw` (for tests and tools)."""
        self._tiles.extend(reversed(tiles))


class Rack(_Tiles):
    """The tiles one player holds (``?`` for a blank), in the order they were drawn.

    :meth:`missing` says which tiles it cannot supply, :meth:`take` removes tiles,
    :meth:`add` puts drawn tiles on it.
    """

    __slots__ = ()

    @property
    def tiles(self) -> str:
        return "".join(self._tiles)

    def __str__(self) -> str:
        return self.tiles

    def sorted(self) -> str:
        """The rack in GCG order: letters alphabetically, blanks last."""
        return sort_tiles(self._tiles)

    def missing(self, tiles: Iterable[str]) -> str:
        """The tiles of ``tiles`` this rack cannot supply; ``""`` if it holds them all."""
        return missing_tiles(self._tiles, tiles)

    def take(self, tiles: Iterable[str]) -> None:
        """Remove ``tiles`` (the first of each kind); raise TilesNotOnRack, unchanged, if short."""
        wanted = list(tiles)
        short = self.missing(wanted)
        if short:
            raise TilesNotOnRack(short)
        for tile in wanted:
            self._tiles.remove(tile)

    def add(self, tiles: Iterable[str]) -> None:
        self._tiles.extend(tiles)

    def value(self, tile_set: TileSet) -> int:
        """The points the tiles are worth: what the rack costs at the end of the game."""
        return sum(tile_set.value(t) for t in self._tiles)

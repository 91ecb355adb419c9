"""The commands a Spectrangle player types, read into moves, and completion while typing.

Accepted (keywords in any case, tiles in any case, any rotation of a tile in hand)::

    place RGB4 on 11    (also: place RGB4 11)
    skip
    exchange RGB4
    say TEXT            (also: chat TEXT)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from meeple.games.spectrangle.board import FIELD_COUNT
from meeple.games.spectrangle.errors import NotationError
from meeple.games.spectrangle.tiles import Tile
from meeple.tui.notation import MAX_COMMAND_LENGTH, CommandError, KeywordSuggester
from meeple.tui.spectrangle.events import (
    ExchangeTile,
    PlaceTile,
    Say,
    SkipTurn,
    SpectrangleMove,
)

__all__ = ["KEYWORDS", "USAGE", "CommandError", "CommandSuggester", "parse_command"]

KEYWORDS = ("place ", "skip", "exchange ", "say ", "chat ")
USAGE = "type 'place RGB4 on 11', 'skip', 'exchange RGB4' or 'say hello'"


def _tile(text: str) -> Tile:
    try:
        return Tile.parse(text)
    except NotationError:
        raise CommandError(
            f"{text!r} is not a tile: three colours of R G B Y P W, then 1-6 points (RGB4)"
        ) from None


def parse_command(text: str) -> SpectrangleMove:
    """Read one typed command; raise :class:`CommandError` saying what is wrong."""
    if len(text) > MAX_COMMAND_LENGTH:
        raise CommandError(f"too long (at most {MAX_COMMAND_LENGTH} characters)")
    fields = text.split()
    if not fields:
        raise CommandError(USAGE)
    keyword = fields[0].lower()
    if keyword in ("say", "chat"):
        rest = text.strip()[len(fields[0]) :].strip()
        if not rest:
            raise CommandError("say what? 'say hello'")
        return Say(rest)
    if keyword == "skip":
        if len(fields) > 1:
            raise CommandError("'skip' takes nothing after it")
        return SkipTurn()
    if keyword == "exchange":
        if len(fields) != 2:
            raise CommandError("exchange which tile? 'exchange RGB4'")
        return ExchangeTile(_tile(fields[1]))
    if keyword == "place":
        args = fields[1:]
        if len(args) == 3 and args[1].lower() == "on":
            args = [args[0], args[2]]
        if len(args) != 2:
            raise CommandError("place which tile where? 'place RGB4 on 11'")
        tile = _tile(args[0])
        if not args[1].isdigit() or not 0 <= int(args[1]) < FIELD_COUNT:
            raise CommandError(f"{args[1]!r} is not a field: 0 to {FIELD_COUNT - 1}")
        return PlaceTile(tile, int(args[1]))
    raise CommandError(f"{text.strip()[:40]!r} is not a command; {USAGE}")


class CommandSuggester(KeywordSuggester):
    """Completes keywords, then the tiles in hand (``place r`` → ``place RGB4 on ``)."""

    def __init__(self, hand: Callable[[], Sequence[Tile]]) -> None:
        super().__init__(KEYWORDS)
        self._hand = hand

    def complete(self, value: str) -> str | None:
        head, _, partial = value.partition(" ")
        if head.lower() in ("place", "exchange") and " " not in partial:
            ending = " on " if head.lower() == "place" else ""
            for tile in self._hand():
                for turned in tile.rotations():
                    code = turned.code
                    if code.startswith(partial.upper()) and (partial or turned == tile):
                        return f"{head} {partial}{code[len(partial) :]}{ending}"
        return None

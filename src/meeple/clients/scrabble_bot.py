"""Scrabble bots: the AI in :mod:`meeple.ai.scrabble` playing through a protocol client."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from meeple.ai.scrabble import (
    BotSettings,
    Choice,
    ExchangeChoice,
    PassChoice,
    bot_settings,
    choose,
    set_bot_settings,
)
from meeple.clients.twente import TwenteClient
from meeple.clients.watch import Patience
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.errors import ScrabbleError
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import ENGLISH, TileSet
from meeple.protocols.twente.events import PeerError
from meeple.protocols.twente.messages import Error, GameOver
from meeple.protocols.twente.session import State

__all__ = ["BotResult", "choose_or_pass", "configure", "play_twente"]

logger = logging.getLogger(__name__)

# After this many refused moves in one turn the bot passes rather than loop forever
# on a disagreement with the server (a different lexicon, say).
MAX_RETRIES = 5


def choose_or_pass(
    name: str,
    board: Board,
    rack: str,
    lexicon: Lexicon,
    bag_count: int,
    skip: int,
    *,
    tile_set: TileSet = ENGLISH,
    scores: tuple[int, int] | None = None,
) -> Choice:
    """A protocol bot's move (:func:`~meeple.ai.scrabble.choose`, skipping ``skip`` plays
    the server refused; one tile is enough to exchange), or a pass when what the server
    told us does not add up to a position (a rack of 14 tiles after a swap we could not
    follow): said in the log under ``name``, never raised (issue 31). ``scores`` (ours,
    then the one opponent's) let the strong player play for the win near the end."""
    try:
        return choose(
            board,
            rack,
            lexicon,
            tile_set=tile_set,
            bag_count=bag_count,
            skip=skip,
            exchange_minimum=1,
            scores=scores,
        )
    except ScrabbleError as e:
        logger.warning("%s: no move from rack %r: %s; passing", name, rack, e)
        return PassChoice()


@contextmanager
def configure(level: str, think_time: float) -> Iterator[None]:
    """While inside, every Scrabble bot in this process plays at ``level``, ``think_time`` s a move.

    The bots of all three protocols ask :func:`meeple.ai.scrabble.choose`, which plays
    by these settings; the clock is the monotonic one and the RNG is seeded from the OS.
    The previous settings come back on exit.
    """
    previous = bot_settings()
    set_bot_settings(BotSettings(level, think_time, time.monotonic, random.Random()))
    try:
        yield
    finally:
        set_bot_settings(previous)


@dataclass(frozen=True, slots=True)
class BotResult:
    """One finished game as the bot saw it."""

    players: tuple[str, ...]
    scores: dict[str, int]
    reason: str
    refused: int

    def line(self) -> str:
        """The bot's last line: "WIN: ann 384  bob 452 (bob wins)". The protocol's reason
        (Twente's and Clarkson's "WIN" is the kind of end, not this bot's win) does not
        say who won; the scores do."""
        scores = "  ".join(f"{n} {s}" for n, s in self.scores.items())
        if not self.scores:
            return f"{self.reason}: {scores}"
        top = max(self.scores.values())
        best = [n for n, s in self.scores.items() if s == top]
        who = f"{best[0]} wins" if len(best) == 1 else f"a draw: {', '.join(best)}"
        return f"{self.reason}: {scores} ({who})"


async def play_twente(
    host: str,
    port: int,
    name: str,
    lexicon: Lexicon,
    *,
    players: int = 2,
    games: int = 1,
    patience: Patience | None = None,
) -> list[BotResult]:
    """Connect, queue for ``games`` games of ``players`` one after the other, play them.

    A server message the bot cannot take is logged (once per kind) and skipped; an
    answer the server owes that does not come within ``patience`` is said in the log,
    then :class:`~meeple.clients.watch.NoAnswer` ends the bot (issue 31)."""
    client = await TwenteClient.connect(host, port, name, patience=patience)
    results: list[BotResult] = []
    try:
        await client.request_game(players)
        refused = 0
        async for message in client:
            if isinstance(message, Error | PeerError) and client.turn == client.name:
                code = message.code.value if message.code is not None else "unreadable"
                logger.info("%s: refused or error (%s)", name, code)
                refused += 1
            elif isinstance(message, GameOver):
                results.append(
                    BotResult(client.players, dict(message.scores), message.reason.value, refused)
                )
                refused = 0
                if len(results) >= games:
                    break
                if client.session.state is State.LOBBY:  # not if the server hung up too
                    await client.request_game(players)
            # Act on the newest state only: once every message already read has been
            # handed out (the same read may end the turn or the game), and never in
            # answer to an ERROR (issue 22): a refused move is retried because the
            # session says the turn is still ours, not because an ERROR came.
            if client.move_due:
                await _move(client, lexicon, client.session.refusals)
    finally:
        await client.close()
        if summary := client.unreadable.summary():
            logger.warning("%s: %s", name, summary)
    return results


async def _move(client: TwenteClient, lexicon: Lexicon, skip: int) -> None:
    """Send the move for the position the client knows (``client.move_due`` is true).

    Nothing here yields to the event loop before the message is written (the client's
    send writes before it drains), so the state the choice was made on is the state
    the session sends it in.
    """
    if skip > MAX_RETRIES:
        await client.pass_turn()  # a pass is never refused in one's turn
        return
    choice = choose_or_pass(client.name, client.board, client.rack, lexicon, client.bag_count, skip)
    if isinstance(choice, PassChoice):
        await client.pass_turn()
    elif isinstance(choice, ExchangeChoice):
        await client.swap(choice.tiles)
    else:
        try:
            await client.play_word(choice.x, choice.y, choice.direction, choice.word)
        except ScrabbleError as e:  # raised before anything is sent
            logger.warning("%s: cannot send %s: %s; passing", client.name, choice.word, e)
            await client.pass_turn()

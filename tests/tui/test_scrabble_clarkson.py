"""Scrabble in the terminal over Clarkson: the app on a real server, alone and against the bot."""

from __future__ import annotations

import asyncio

from tests.tui.test_scrabble_game import SIZE, message, until

from meeple.ai.scrabble import ranked_moves
from meeple.clients.clarkson import play_clarkson
from meeple.games.scrabble.board import Board, Direction, format_square
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import CLARKSON
from meeple.server.app import MeepleServer
from meeple.tui.connection import ConnectOptions
from meeple.tui.scrabble.app import ScrabbleApp
from meeple.tui.scrabble.clarkson import connect, word_from_boards
from meeple.tui.scrabble.table import Phase


def _type_best(app: ScrabbleApp, gcide: Lexicon) -> str:
    moves = ranked_moves(app.table.board, app.table.rack, gcide, CLARKSON)
    if not moves:
        return "pass"
    m = moves[0]
    return f"{format_square(m.x, m.y)} {m.direction.value} {m.word}"


async def _submit(pilot: object, app: ScrabbleApp, command: str) -> None:
    before = len(app.table.log)
    app.query_one("#command").value = command  # type: ignore[attr-defined]
    await pilot.press("enter")  # type: ignore[attr-defined]
    await until(pilot, lambda: len(app.table.log) > before or app.table.phase is Phase.OVER)


async def test_a_lone_player_places_a_word_then_passes_twice(
    server: MeepleServer, gcide: Lexicon
) -> None:
    """§3.8: one client alone plays; passing twice in a row ends the game (ERRATA)."""
    port = server.ports["clarkson"]
    app = ScrabbleApp(connect, ConnectOptions("127.0.0.1", port, "solo", players=1))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.table.phase is Phase.PLAYING and app.table.my_turn)
        assert app.table.players == ("solo",)
        assert len(app.table.rack) == 7
        assert "?" not in app.table.rack
        command = _type_best(app, gcide)
        assert command != "pass"
        move = ranked_moves(app.table.board, app.table.rack, gcide, CLARKSON)[0]
        await pilot.click("#command")
        await pilot.press(*command)
        await pilot.press("enter")
        await until(pilot, lambda: any(line.startswith("solo: ") for line in app.table.log))
        assert f"solo: {move.position} {move.word} {move.score}" in app.table.log
        assert app.table.scores == {"solo": move.score}
        for x, y, tile in (
            (p.x, p.y, p.tile) for p in move.tiles
        ):  # the pushed board holds the word
            assert app.table.board.tile(x, y) == tile
        await until(pilot, lambda: app.table.my_turn)
        app.query_one("#command").value = "swap AB"  # type: ignore[attr-defined]
        await pilot.press("enter")  # refused before sending: one tile or the whole hand
        await pilot.pause()
        assert "one tile or the whole hand" in message(app)
        await _submit(pilot, app, "pass")
        await until(pilot, lambda: app.table.my_turn or app.table.phase is Phase.OVER)
        await _submit(pilot, app, "pass")
        await until(pilot, lambda: app.table.phase is Phase.OVER)
        assert app.table.log[-3:-1] == ["solo passes", "solo passes"]
        assert app.table.result is not None
        assert "Game over" in str(app.query_one("#status").render())


async def test_refusals_come_back_in_the_servers_words(
    server: MeepleServer, gcide: Lexicon
) -> None:
    port = server.ports["clarkson"]
    app = ScrabbleApp(connect, ConnectOptions("127.0.0.1", port, "solo", players=1))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.table.my_turn)
        rack = app.table.rack
        absent = next(c for c in "QZXJKVWY" if c not in rack)
        await _submit(pilot, app, f"H8 across {absent}{rack[:1]}")
        assert app.table.log[-1].startswith("refused: ")
        assert app.table.refusal is not None
        assert "not in your hand" in app.table.refusal


async def test_a_game_against_the_clarkson_bot(server: MeepleServer, gcide: Lexicon) -> None:
    """Two at a table: the person's plays typed in, the bot's read off the pushed boards."""
    port = server.ports["clarkson"]
    app = ScrabbleApp(connect, ConnectOptions("127.0.0.1", port, "human", players=2))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.table.phase is Phase.QUEUED)
        bot = asyncio.create_task(play_clarkson("127.0.0.1", port, "bot", gcide, players=2))
        await until(pilot, lambda: app.table.phase is Phase.PLAYING)
        assert app.table.players == ("human", "bot")
        typed = 0
        while app.table.phase is Phase.PLAYING and typed < 4:
            await until(pilot, lambda: app.table.my_turn or app.table.phase is not Phase.PLAYING)
            if not app.table.my_turn:
                break
            await _submit(pilot, app, _type_best(app, gcide))
            typed += 1
            assert not app.table.log[-1].startswith("refused"), app.table.log[-1]
        # Every play logged (ours and the bot's, read off the boards) adds up to the totals.
        await until(pilot, lambda: app.table.my_turn or app.table.phase is Phase.OVER)
        plays = [line for line in app.table.log if line.startswith(("human: ", "bot: "))]
        assert len(plays) >= 3
        for who in ("human", "bot"):
            total = sum(int(line.rsplit(" ", 1)[1]) for line in plays if line.startswith(who))
            assert total == app.table.scores[who]
        await app.action_quit()
        bot.cancel()


def test_word_from_boards() -> None:
    before = Board.from_rows(["." * 15] * 7 + [".....CAT......."] + ["." * 15] * 7)
    rows = ["." * 15] * 15
    rows[7] = ".....CATS......"
    assert word_from_boards(before, Board.from_rows(rows)) == (5, 7, Direction.ACROSS, "CATS")
    rows[6], rows[8] = "......A........", "......T........"
    after = Board.from_rows([*rows[:7], before.rows()[7], *rows[8:]])
    assert word_from_boards(before, after) == (6, 6, Direction.DOWN, "AAT")
    assert word_from_boards(before, before) is None

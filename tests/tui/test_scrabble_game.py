"""Scrabble in the terminal end to end: the app against `meeple bot`'s AI on a real server."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import Any

from tests.patience import PATIENCE

from meeple.ai.scrabble import ranked_moves
from meeple.clients.scrabble_bot import play_twente
from meeple.clients.twente import TwenteClient
from meeple.games.scrabble.board import Direction, format_square
from meeple.games.scrabble.gcg import GcgEventKind, parse_gcg
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import ENGLISH
from meeple.protocols.twente.messages import NotifyChat
from meeple.server.app import MeepleServer
from meeple.server.store.database import Store
from meeple.tui.connection import ConnectOptions
from meeple.tui.scrabble.app import ScrabbleApp
from meeple.tui.scrabble.table import Phase
from meeple.tui.scrabble.twente import connect
from meeple.tui.scrabble.widgets import BoardView

SIZE = (110, 34)


async def until(pilot: Any, condition: Callable[[], bool], timeout: float = PATIENCE) -> None:
    """Let the app run until ``condition()`` holds (fail after ``timeout`` seconds)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out waiting for the app"
        await pilot.pause(0.01)


def message(app: ScrabbleApp) -> str:
    return str(app.query_one("#message").render())


async def test_a_whole_game_typed_into_the_app_against_the_bot(
    server: MeepleServer, gcide: Lexicon
) -> None:
    """Every move typed as notation (the first by keys, a blank lower case), to GAMEOVER."""
    port = server.ports["twente"]
    app = ScrabbleApp(connect, ConnectOptions("127.0.0.1", port, "human"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.table.phase is Phase.QUEUED)
        bot = asyncio.create_task(play_twente("127.0.0.1", port, "bot", gcide))
        await until(pilot, lambda: app.table.phase is Phase.PLAYING)
        assert set(app.table.players) == {"human", "bot"}
        typed = 0
        while app.table.phase is Phase.PLAYING:
            await until(pilot, lambda: app.table.my_turn or app.table.phase is not Phase.PLAYING)
            if not app.table.my_turn:
                break
            moves = ranked_moves(app.table.board, app.table.rack, gcide, ENGLISH)
            before = len(app.table.log)
            if moves:
                m = moves[0]
                command = f"{format_square(m.x, m.y)} {m.direction.value} {m.word}"
            else:
                command = "pass"
            if typed == 0:
                await pilot.click("#command")
                await pilot.press(*command)
            else:
                app.query_one("#command").value = command  # type: ignore[attr-defined]
            await pilot.press("enter")
            typed += 1
            await until(pilot, lambda b=before: len(app.table.log) > b)  # type: ignore[misc]
            assert not app.table.log[-1].startswith("refused"), app.table.log[-1]
        await until(pilot, lambda: app.table.phase is Phase.OVER)
        results = await asyncio.wait_for(bot, PATIENCE)
        assert typed >= 3
        # The app's final scores are the server's, and they add up with the log.
        assert dict(app.table.scores) == results[0].scores
        status = str(app.query_one("#status").render())
        assert "Game over" in status
        assert app.table.result_line() in status
        # Every play in the log, with the score the adapter worked out, is the server's
        # record of the game; the board shown is the record's board.
        store: Store = server.services.store
        record = parse_gcg(store.games()[0].record)
        plays = [
            f"{e.nick}: {e.position} {e.word} {e.score}"
            for e in record.events
            if e.kind == GcgEventKind.PLAY
        ]
        assert [line for line in app.table.log if line.split(":")[0] in ("human", "bot")] == [
            line for line in app.table.log if line in plays
        ]
        assert [line for line in app.table.log if line in plays] == plays
        assert app.table.board == record.board()
        assert app.table.bag == 0


async def test_refusal_board_placement_and_chat_against_a_real_player(
    server: MeepleServer, gcide: Lexicon
) -> None:
    """E006 in words; a swap; a word placed with keys; E009 kept local; chat both ways."""
    port = server.ports["twente"]
    app = ScrabbleApp(connect, ConnectOptions("127.0.0.1", port, "human"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.table.phase is Phase.QUEUED)
        bob = await TwenteClient.connect("127.0.0.1", port, "bob", chat=True)
        await bob.request_game(2)
        await until(pilot, lambda: app.table.turn is not None)
        if not app.table.my_turn:
            while not bob.my_turn:
                await asyncio.wait_for(bob.receive(), PATIENCE)
            await bob.pass_turn()
            await until(pilot, lambda: app.table.my_turn)
        rack = app.table.rack.replace("?", "")
        nonword = next(
            a + b for a in rack for b in rack if (a + b) not in gcide and rack.count(a) > (a == b)
        )
        app.query_one("#command").value = f"H8 across {nonword}"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await until(pilot, lambda: app.table.refusal is not None)
        shown = message(app)
        assert shown.startswith("E006 Unknown word: ")
        assert "dictionary" in shown
        # A swap: the two tiles leave the rack, two others come.
        before = app.table.rack
        swapped = before[:2]
        app.query_one("#command").value = f"swap {swapped}"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await until(pilot, lambda: "human swaps 2 tiles" in app.table.log)
        await until(pilot, lambda: len(app.table.rack) == 7)
        assert not Counter(before) - Counter(swapped) - Counter(app.table.rack)
        while not bob.my_turn:
            await asyncio.wait_for(bob.receive(), PATIENCE)
        await bob.pass_turn()
        await until(pilot, lambda: app.table.my_turn)
        # Now the best opening, laid tile by tile on the board from the keyboard.
        best = ranked_moves(app.table.board, app.table.rack, gcide, ENGLISH)[0]
        await pilot.press("f2")
        board = app.query_one(BoardView)
        if best.direction is Direction.DOWN:
            await pilot.press("space")
        keys = ["left"] * (7 - best.x) + ["up"] * (7 - best.y)
        for tile in best.word:
            keys += ["question_mark", tile.upper()] if tile.islower() else [tile]
        await pilot.press(*keys, "enter")
        await until(pilot, lambda: any(line.startswith("human: ") for line in app.table.log))
        assert app.table.log[-1] == f"human: {best.position} {best.word} {best.score}"
        assert app.table.scores["human"] == best.score
        assert app.table.bag == 100 - 14 - len(best.tiles)
        assert board.pending == {}
        assert len(app.table.rack) == 7
        # Bob's turn now: a pass is refused by the client session before any byte goes out.
        await until(pilot, lambda: app.table.turn == "bob")
        await pilot.press("f3")
        app.query_one("#command").value = "pass"  # type: ignore[attr-defined]
        await pilot.press("enter")
        assert message(app).startswith("E009 It is not your turn")
        assert app.query_one("#command").value == "pass"  # type: ignore[attr-defined]
        # Chat: bob to the table, the human answers through the command line.
        await bob.chat("nice one")
        await until(pilot, lambda: ("bob", "nice one") in app.table.chat_lines)
        app.query_one("#command").value = "say thanks"  # type: ignore[attr-defined]
        await pilot.press("enter")
        while True:
            got = await asyncio.wait_for(bob.receive(), PATIENCE)
            if isinstance(got, NotifyChat) and got.player == "human":
                break
        assert got.text == "thanks"
        await until(pilot, lambda: ("human", "thanks") in app.table.chat_lines)
        await bob.close()
        await until(pilot, lambda: app.table.phase is not Phase.PLAYING)
        assert "bob left the game" in app.table.log or app.table.phase is Phase.OVER

"""The Twente bot against quirky servers (issue 22, items 10 and 11): it acts on the newest
state a read leaves, never dies on a race with the server, and never answers an ERROR."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.clients.peers import Chunking, chunkings, serve, write_in_pieces
from tests.patience import GAME_PATIENCE

from meeple.clients.scrabble_bot import play_twente
from meeple.games.scrabble.lexicon import Lexicon
from meeple.protocols.twente.framing import Frame, Framer, encode_frame

# An ERROR with a code the spec does not list, and a description after it.
ODD_ERROR = encode_frame(("ERROR", "E016", "Move not allowed"))


def frame(*fields: str) -> bytes:
    return encode_frame(fields)


@dataclass
class Script:
    """How the quirky server answers the bot's moves, and what it saw the bot send."""

    scenario: str
    chunking: Chunking = ()
    moves: int = 0  # MAKEMOVEs seen in a game
    late_moves: int = 0  # MAKEMOVEs seen outside a game (a race the server answers E014)
    errors: int = 0  # ERRORs the bot sent
    games: int = 0
    log: list[str] = field(default_factory=list)


def start(bot: str) -> bytes:
    return (
        frame("STARTGAME", bot, "rival")
        + frame("NEWTILES", "CATSDOG")
        + frame("NOTIFYTURN", "1", bot)
    )


def game_over(bot: str) -> bytes:
    return frame("GAMEOVER", "WIN", bot, "0", "rival", "0")


async def quirky_twente(
    script: Script, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    framer = Framer()
    name = ""
    in_game = False
    while True:
        data = await reader.read(65536)
        if not data:
            return
        for event in framer.receive_data(data):
            assert isinstance(event, Frame), event
            command = event.command
            script.log.append("|".join(event.fields))
            if command == "ANNOUNCE":
                name = event.args[0]
                writer.write(frame("WELCOME", name))
            elif command == "REQUESTGAME":
                in_game, script.moves = True, 0
                script.games += 1
                writer.write(start(name))
            elif command == "ERROR":
                script.errors += 1
                if script.scenario == "error-echo":
                    if script.errors > 50:
                        return  # the loop of issue 22: stop it here
                    # This server answers an ERROR with an ERROR of its own code.
                    writer.write(ODD_ERROR)
            elif command == "MAKEMOVE" and not in_game:
                script.late_moves += 1
                writer.write(frame("ERROR", "E014"))
            elif command == "MAKEMOVE":
                script.moves += 1
                bursts, in_game = _answer(script, name, event)
                for i, burst in enumerate(bursts):
                    if i:
                        await asyncio.sleep(0.02)  # the rival thinks
                    await write_in_pieces(writer, burst, script.chunking)
        await writer.drain()


def _answer(script: Script, name: str, move: Frame) -> tuple[list[bytes], bool]:
    """The bursts answering the bot's move, and whether the game goes on after them."""
    if script.scenario == "turn-moves-on":
        # A refusal, and in the same breath the server's turn timer gave the turn away:
        # the bot must not retry on the turn it lost. The rival passes, the game ends.
        return [
            frame("ERROR", "E003") + frame("NOTIFYTURN", "0", "rival"),
            frame("INFORMMOVE", "rival", "SWAP", "0") + game_over(name),
        ], False
    if script.scenario == "refused-then-over":
        # Refused five times; the sixth refusal comes with the end of the game.
        if script.moves <= 5:
            return [frame("ERROR", "E006")], True
        return [frame("ERROR", "E006") + game_over(name)], False
    assert script.scenario == "error-echo"
    if move.args[:1] == ("SWAP",) and move.args[1:] in ((), ("",)):
        return [frame("INFORMMOVE", name, "SWAP", "0") + game_over(name)], False
    return [ODD_ERROR], True


async def _run(script: Script, lexicon: Lexicon, games: int) -> list[object]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await quirky_twente(script, reader, writer)

    async with serve(handle) as port:
        results = await asyncio.wait_for(
            play_twente("127.0.0.1", port, "bot", lexicon, games=games), 10
        )
    return list(results)


@pytest.mark.parametrize("scenario", ["turn-moves-on", "refused-then-over"])
def test_a_read_that_ends_the_turn_behind_an_error(gcide: Lexicon, scenario: str) -> None:
    """ERROR then the messages that end the turn and the game, in one read: the bot plays
    both games to their end, sending no move on a turn or game already gone."""
    script = Script(scenario)
    results = asyncio.run(_run(script, gcide, games=2))
    assert len(results) == 2
    assert script.games == 2
    assert script.late_moves == 0
    assert script.errors == 0


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=st.sampled_from(["turn-moves-on", "refused-then-over"]), chunking=chunkings())
def test_any_split_of_the_servers_bytes(gcide: Lexicon, scenario: str, chunking: Chunking) -> None:
    """However the server's answer is cut across reads, the bot never dies on a race:
    a move that crossed the end of the game on the wire is answered E014 and forgotten."""
    script = Script(scenario, chunking)
    results = asyncio.run(_run(script, gcide, games=2))
    assert len(results) == 2
    assert script.errors == 0
    # A move can cross the end on the wire only when the burst was cut before the end.
    if not chunking:
        assert script.late_moves == 0


def test_never_answers_an_error(gcide: Lexicon) -> None:
    """A server that answers every ERROR with an ERROR, with a code the spec lacks (E016):
    the bot takes each as a refusal, sends no ERROR at all, and passes in the end."""
    script = Script("error-echo")
    results = asyncio.run(_run(script, gcide, games=1))
    assert len(results) == 1
    assert script.errors == 0
    assert script.moves == 7  # five retries after the first move, then the pass


# --- issue 31: a server that announces the bot's swap with its letters -------------------

CONSONANTS = "QVJZK"  # no vowel: no word to play, so the bot swaps turn after turn


@dataclass
class SwapScript:
    """What the letters server saw: the swaps it took, and any it had to refuse."""

    turns: int = 4
    swaps: list[str] = field(default_factory=list)
    not_on_rack: list[tuple[str, str]] = field(default_factory=list)
    errors: int = 0  # ERRORs the bot sent
    other: list[str] = field(default_factory=list)


async def letters_server(
    script: SwapScript, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Deals only consonants and announces every swap as ``INFORMMOVE|bot|SWAP|QVX``
    (the letters, where the spec has a count), as one Twente server did."""
    from collections import Counter
    from itertools import cycle

    framer = Framer()
    bag = cycle(CONSONANTS)
    rack: Counter[str] = Counter()
    name = ""

    def deal(n: int) -> str:
        tiles = "".join(next(bag) for _ in range(n))
        rack.update(tiles)
        return tiles

    while data := await reader.read(65536):
        for event in framer.receive_data(data):
            assert isinstance(event, Frame), event
            if event.command == "ANNOUNCE":
                name = event.args[0]
                writer.write(frame("WELCOME", name))
            elif event.command == "REQUESTGAME":
                writer.write(
                    frame("STARTGAME", name, "rival")
                    + frame("NEWTILES", deal(7))
                    + frame("NOTIFYTURN", "1", name)
                )
            elif event.command == "ERROR":
                script.errors += 1
            elif event.command == "MAKEMOVE" and event.args[:1] == ("SWAP",):
                tiles = event.args[1] if len(event.args) > 1 else ""
                if Counter(tiles) - rack:
                    script.not_on_rack.append((tiles, "".join(sorted(rack.elements()))))
                    writer.write(frame("ERROR", "E008"))
                    continue
                rack.subtract(tiles)
                script.swaps.append(tiles)
                writer.write(
                    frame("NEWTILES", deal(len(tiles)))
                    + frame("INFORMMOVE", name, "SWAP", tiles)  # letters, not a count
                    + frame("NOTIFYTURN", "0", "rival")
                )
                if len(script.swaps) >= script.turns:
                    writer.write(game_over(name))
                    await writer.drain()
                    return
                writer.write(
                    frame("INFORMMOVE", "rival", "SWAP", "0") + frame("NOTIFYTURN", "1", name)
                )
            else:
                script.other.append("|".join(event.fields))
                writer.write(game_over(name))
                await writer.drain()
                return
        await writer.drain()


def test_swap_announced_with_letters(gcide: Lexicon) -> None:
    """INFORMMOVE|bot|SWAP|<letters>: the bot reads it as a swap of that many tiles, keeps
    a rack of seven (it crashed with "a rack holds at most 7 tiles" on its next turn),
    sends no ERROR back, and plays the game to its end."""
    script = SwapScript()

    async def run() -> list[object]:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await letters_server(script, reader, writer)

        async with serve(handle) as port:
            return list(
                await asyncio.wait_for(
                    play_twente("127.0.0.1", port, "bot", gcide, games=1), GAME_PATIENCE
                )
            )

    results = asyncio.run(run())
    assert len(results) == 1
    assert script.other == []
    assert script.not_on_rack == []
    assert len(script.swaps) == script.turns
    assert script.errors == 0

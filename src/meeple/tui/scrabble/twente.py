"""Scrabble over Twente v2 for the terminal app: :class:`~meeple.clients.twente.TwenteClient`
turned into :mod:`~meeple.tui.scrabble.events`.

What the adapter adds to the client library:

- scores: Twente's INFORMMOVE carries no score, so the adapter scores each word on its
  own copy of the board with the engine's rules (what every player can work out);
  GAMEOVER's scores are the server's and replace them at the end;
- rejections in words: each ERROR code becomes the spec's title plus a sentence
  saying what to do (:data:`REFUSALS`);
- moves the protocol cannot carry (a word off the board or clashing with a tile on
  it) raise :class:`~meeple.tui.connection.MoveError` instead of being sent.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import AsyncIterator

from meeple.clients.twente import Received, TwenteClient, TwenteClientError
from meeple.clients.watch import NoAnswer
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.errors import ScrabbleError
from meeple.games.scrabble.moves import tiles_from_word
from meeple.games.scrabble.rules import validate_play
from meeple.games.scrabble.tiles import BLANK, ENGLISH
from meeple.protocols.twente import messages
from meeple.protocols.twente.errors import ErrorCode, ProtocolError
from meeple.protocols.twente.events import PeerError
from meeple.tui.connection import ClientAdapter, ConnectFailed, ConnectOptions, MoveError
from meeple.tui.scrabble import events as ui

__all__ = ["REFUSALS", "TwenteScrabble", "connect", "refusal_text"]

# What each code means for the player at the keyboard (spec "Errors" gives the title).
REFUSALS: dict[ErrorCode, str] = {
    ErrorCode.NAME_TAKEN: "someone here already uses that name; choose another with --name",
    ErrorCode.UNKNOWN_COMMAND: "the server did not understand what the client sent",
    ErrorCode.INVALID_ARGUMENT: "the move was not well formed",
    ErrorCode.INVALID_COORDINATE: "that square is not on the board",
    ErrorCode.WORD_DOES_NOT_FIT: "the word runs off the board or over a different letter",
    ErrorCode.UNKNOWN_WORD: "a word this play forms is not in the server's dictionary",
    ErrorCode.TOO_FEW_TILES_IN_BAG: "the bag holds too few tiles to swap that many",
    ErrorCode.TILES_NOT_ON_RACK: "your rack does not hold the tiles this needs",
    ErrorCode.NOT_YOUR_TURN: "wait for your turn",
    ErrorCode.WRONG_NUMBER_OF_PLAYERS: "a game has 2 to 4 players",
    ErrorCode.NOT_CONNECTED: "the word must touch the tiles on the board (the first one "
    "must cover the centre square H8)",
    ErrorCode.ALREADY_ANNOUNCED: "the client announced itself twice",
    ErrorCode.NOT_ANNOUNCED: "the client has not announced itself yet",
    ErrorCode.NOT_IN_GAME: "you are not in a game right now",
    ErrorCode.GAME_ALREADY_STARTED: "the game has already started",
}


def refusal_text(code: ErrorCode) -> str:
    """``E006 Unknown word: a word this play forms is not in the server's dictionary``."""
    return f"{code.value} {code.description}: {REFUSALS[code]}"


class TwenteScrabble(ClientAdapter[TwenteClient]):
    """A :class:`~meeple.tui.connection.Connection` for Scrabble over Twente."""

    def __init__(self, client: TwenteClient) -> None:
        super().__init__(client)
        self._board = Board()
        # Our own account of the rack, message by message: the client's ``rack`` runs
        # ahead when one read brings several messages (STARTGAME and NEWTILES at once).
        self._rack = ""
        self._swapping = ""
        self._players = 2

    async def events(self) -> AsyncIterator[ui.ScrabbleEvent]:
        yield ui.Welcomed(self._client.name, messages.Flag.CHAT in self._client.server_flags)
        errors = (TwenteClientError, NoAnswer, OSError)
        got = self._status.relay(self._client.receive, errors, self._translate)
        async with contextlib.aclosing(got):
            async for event in got:
                yield event

    async def _translate(self, message: Received) -> list[ui.ScrabbleEvent]:
        if isinstance(message, messages.InformQueue):
            return [ui.Queued(message.waiting, message.required)]
        if isinstance(message, messages.StartGame):
            self._board = Board()
            self._rack = ""
            self._players = len(message.players)
            return [ui.Started(message.players), self._bag_count()]
        if isinstance(message, messages.NewTiles):
            self._rack += message.tiles.replace(messages.BLANK_ON_RACK, BLANK)
            return [ui.RackChanged(self._rack)]
        if isinstance(message, messages.NotifyTurn):
            return [ui.TurnChanged(message.player, message.your_turn)]
        if isinstance(message, messages.InformWord):
            score = 0
            used = ""
            with contextlib.suppress(ScrabbleError):
                placed = tiles_from_word(
                    self._board, message.x, message.y, message.direction, message.word
                )
                score = validate_play(self._board, placed).score
                used = "".join(p.rack_tile for p in placed)
                for p in placed:
                    self._board.place(p.x, p.y, p.tile)
            played = ui.WordPlayed(
                message.player, message.x, message.y, message.direction, message.word, score
            )
            if message.player != self._client.name:
                return [played, self._bag_count()]
            return [played, self._take_from_rack(used), self._bag_count()]
        if isinstance(message, messages.InformSwap):
            swapped = ui.Swapped(message.player, message.count)
            if message.player != self._client.name or message.count == 0:
                return [swapped]
            return [swapped, self._take_from_rack(self._swapping)]
        if isinstance(message, messages.Error | PeerError) and message.code is not None:
            return [ui.Refused(message.code.value, refusal_text(message.code))]
        if isinstance(message, PeerError):
            return [ui.Refused("ERROR", "the server sent an error this client cannot read")]
        if isinstance(message, messages.NotifyChat):
            return [ui.ChatReceived(message.player, message.text)]
        if isinstance(message, messages.PlayerDisconnected):
            return [ui.PlayerLeft(message.player)]
        if isinstance(message, messages.GameOver):
            reason = (
                "the game is over"
                if message.reason is messages.GameOverReason.WIN
                else "the game ended: a player disconnected"
            )
            scores = tuple(sorted(message.scores, key=lambda s: -s[1]))
            return [ui.GameEnded(reason, scores)]
        return []  # WELCOME comes before events() starts

    def _bag_count(self) -> ui.BagCount:
        # Twente never says how many tiles are left, but every rack holds seven while
        # the bag holds any (ENGLISH: 100 tiles), so the board tells.
        on_board = sum(1 for _ in self._board.tiles())
        return ui.BagCount(max(0, ENGLISH.total - on_board - messages.RACK_SIZE * self._players))

    def _take_from_rack(self, tiles: str) -> ui.RackChanged:
        left = Counter(self._rack)
        left.subtract(tiles)
        self._rack = "".join(sorted(left.elements()))
        return ui.RackChanged(self._rack)

    async def send(self, move: ui.ScrabbleMove) -> None:
        try:
            if isinstance(move, ui.PlayWord):
                await self._client.play_word(move.x, move.y, move.direction, move.word)
            elif isinstance(move, ui.Swap):
                await self._client.swap(move.tiles)
                self._swapping = move.tiles
            elif isinstance(move, ui.Pass):
                await self._client.pass_turn()
            elif isinstance(move, ui.Say):
                await self._client.chat(move.text)
            else:
                raise MoveError("Twente has no challenges: the server checks every word")
        except ScrabbleError as e:
            raise MoveError(str(e)) from None
        except ProtocolError as e:
            # The client session refuses what the server would (a move out of turn is
            # E009 before it is sent); same words as a refusal from the server.
            raise MoveError(refusal_text(e.code)) from None
        except OSError as e:
            raise MoveError(f"could not send: {e}") from None


async def connect(options: ConnectOptions) -> TwenteScrabble:
    """Connect, ANNOUNCE (asking for chat) and REQUESTGAME for ``options.players``."""
    try:
        client = await TwenteClient.connect(options.host, options.port, options.name, chat=True)
    except TwenteClientError as e:
        if client_error := _name_taken(e):
            raise ConnectFailed(client_error) from None
        raise ConnectFailed(f"not let in: {e}") from None
    except OSError as e:
        raise ConnectFailed(
            f"cannot reach a Twente server at {options.host}:{options.port} ({e.strerror or e})"
        ) from None
    await client.request_game(options.players)
    return TwenteScrabble(client)


def _name_taken(error: TwenteClientError) -> str | None:
    if ErrorCode.NAME_TAKEN.value in str(error):
        return refusal_text(ErrorCode.NAME_TAKEN)
    return None

"""Client kits: a strict, instrumented meeple server in front of which the kit grades a client.

``run_client_kit`` starts a real meeple server (that protocol's listener only, on a free
port, a throw-away database) and, where the team's client connects, an instrumenting
proxy. The kit plays the other seat itself (a bot over meeple's client library,
straight to the server). The proxy

- grades everything the client sends: framing, that each message decodes as the spec
  defines it, the order (greeting first, moves only in its turn, none after the game's
  end), that the real server accepted its moves;
- delivers the server's messages in three ways in turn: whole and coalesced (several in
  one write), split (byte by byte, or in halves for long ones), and one per write with a
  pause; a turn notice delivered each way must be acted on;
- tests the client's error handling: it refuses the client's first move once with the
  protocol's error (ERROR / NOK) and expects another move in the same turn; for Twente it
  also sends a command of an extension the client did not announce (spec E002);
- with ``--games`` ≥ 2, makes the kit's player leave the last game part-way (Twente:
  PLAYERDISCONNECTED and GAMEOVER DISCONNECT; Clarkson: the game goes on for the client).

After the kit's player has finished its games (or the timeout), the observations are
graded by ordinary :class:`~meeple.check.core.Check` objects, so the report is the same
as for a server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
import tempfile
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from meeple.check.core import (
    CannotTest,
    Check,
    Context,
    Differs,
    Level,
    Recorder,
    Result,
    run_checks,
)
from meeple.check.scrabble import best_move
from meeple.clients.clarkson import ClarksonClient, NameRefused
from meeple.clients.spectrangle import SpectrangleClient, take_turn
from meeple.clients.twente import TwenteClient
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import CLARKSON, ENGLISH
from meeple.games.spectrangle import Board as SpBoard
from meeple.games.spectrangle import Tile
from meeple.games.spectrangle.errors import SpectrangleError
from meeple.protocols.clarkson.errors import ProtocolError as ClarksonProtocolError
from meeple.protocols.clarkson.messages import Nok, Turn, UserJoin, Winner, decode_client
from meeple.protocols.spectrangle import ErrorReply as SpErrorReply
from meeple.protocols.spectrangle import GameFinished, PlayerLeft
from meeple.protocols.spectrangle.errors import RemoteProtocolError as SpectrangleProtocolError
from meeple.protocols.spectrangle.messages import decode_client as decode_spectrangle_client
from meeple.protocols.twente.errors import ErrorCode, RemoteProtocolError
from meeple.protocols.twente.messages import Error, GameOver, NotifyTurn, decode
from meeple.server.config import ServerConfig
from meeple.server.edge.hosts import WILDCARD_BINDS

__all__ = ["CLIENT_CHECKS", "CLIENT_KITS", "LAST_WORDS", "Observations", "run_client_kit"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

KIT_NAME = "kitbot"
TURN_WAIT = 30.0  # how long a client may think about one move
MODES = ("coalesced", "split", "paced")


@dataclass
class Observations:
    """What the proxy saw, per protocol; the client checks grade these."""

    protocol: str
    games: int
    recorder: Recorder = field(default_factory=lambda: Recorder("client"))
    connections: int = 0
    messages: list[str] = field(default_factory=list)  # what the client sent, decoded text
    first: str | None = None
    undecodable: list[str] = field(default_factory=list)
    framing: list[str] = field(default_factory=list)  # SHOULD-level oddities (bare LF, NULs)
    out_of_turn: list[str] = field(default_factory=list)
    after_end: list[str] = field(default_factory=list)
    refused_by_server: list[str] = field(default_factory=list)
    turns: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MODES, 0))
    answered: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MODES, 0))
    injected_error: bool = False
    retried_after_error: bool = False
    probe_sent: bool = False
    probe_answer: str | None = None
    games_won: int = 0  # games that ended normally, as the client was told
    disconnect_game: bool = False  # the kit left a game part-way
    drop_told: bool = False  # CMPN402: that drop reached the client as END reason 2
    kit_player_failed: bool = False  # the kit's own player raised: not the client's doing
    moves_after_disconnect: int = 0
    quit_after_end: int = 0
    ends: int = 0
    hello: str | None = None
    kit_errors: list[str] = field(default_factory=list)
    skips_told: int = 0  # Spectrangle: tiles lines ending "skip <client>"
    skips_answered: int = 0
    skip_ignored: list[str] = field(default_factory=list)
    client_named: int = 0  # the client's renames confirmed and READYs (Clarkson)
    # Twente ANNOUNCE / CMPN402 NAME sent again on a connection that had already been
    # welcomed / named (the message and where it came)
    renamed: list[str] = field(default_factory=list)
    kit_table_game: int = 0  # the game the kit's player sits at a table for (Clarkson)
    kit_done: bool = False
    heard: list[float] = field(default_factory=list)  # when each client message came (AM27)
    pings: list[float] = field(default_factory=list)  # when each client PING came (AM27)


class _Proxy:
    """Relays one client connection to the server, grading and reshaping as it goes."""

    def __init__(self, obs: Observations, server_port: int) -> None:
        self.obs = obs
        self.server_port = server_port
        self.batch = 0
        self.my_turn = False
        self.turn_mode: str | None = None
        self.in_game = False
        self.ended = False
        self.refuse_next = True
        self.await_retry = False
        self.client_writer: asyncio.StreamWriter | None = None
        self.tasks: set[asyncio.Future[None]] = set()
        self.writing = asyncio.Lock()
        self.turn_since = 0.0
        self.connected = 0
        self.away_since: float | None = None  # since the client's last connection closed

    # -- relay ---------------------------------------------------------------------------

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.obs.connections += 1
        self.connected += 1
        self.away_since = None
        self.opened()
        self.client_writer = writer
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.server_port)
        except OSError as e:
            self.obs.kit_errors.append(f"the kit's server: {e}")
            writer.close()
            return
        tasks = [
            asyncio.create_task(self._client_to_server(reader, up_writer)),
            asyncio.create_task(self._server_to_client(up_reader, writer)),
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.connected -= 1
            if not self.connected:
                self.away_since = asyncio.get_running_loop().time()
            for t in tasks:
                t.cancel()
            for w in (writer, up_writer):
                with contextlib.suppress(Exception):
                    w.close()

    def read_text(
        self,
        message: bytes,
        body: bytes,
        encoding: str,
        parse: Callable[[str], T],
        errors: tuple[type[Exception], ...],
        shown: Callable[[str], str] = str,
    ) -> tuple[str, T] | None:
        """A text protocol's client message: ``body`` (``message`` without its framing)
        as text and as ``parse`` (the spec's decoder) reads it, if it is ``encoding`` and
        the spec's; else None, noted undecodable. The first message is noted (``shown``)
        either way."""
        obs = self.obs
        if obs.first is None:  # the first message, readable or not
            obs.first = shown(body.decode(encoding, "replace"))
        caught: tuple[type[Exception], ...] = (UnicodeDecodeError, *errors)
        try:
            text = body.decode(encoding)
            parsed = parse(text)
        except caught as e:
            obs.undecodable.append(f"{message[:60]!r}: {e}")
            return None
        return text, parsed

    def cut_client(self, buffer: bytes) -> tuple[list[bytes], bytes]:
        """The client's whole messages in ``buffer`` and the unfinished rest (a protocol
        whose messages are not ended by :attr:`terminator` cuts otherwise)."""
        *messages, rest = buffer.split(self.terminator)
        return [m + self.terminator for m in messages], rest

    def cut_server(self, buffer: bytes) -> tuple[list[bytes], bytes]:
        return self.cut_client(buffer)

    async def _client_to_server(
        self, reader: asyncio.StreamReader, up: asyncio.StreamWriter
    ) -> None:
        buffer = b""
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                return
            self.obs.recorder.sent += chunk
            messages, buffer = self.cut_client(buffer + chunk)
            for message in messages:
                while not self.may_forward():  # the kit's player re-seats first
                    await asyncio.sleep(0.01)
                if self.from_client(message):
                    up.write(message)
                    await up.drain()
            if len(buffer) > 65536:
                self.obs.undecodable.append(f"{len(buffer)} bytes with no message end")
                buffer = b""

    async def _server_to_client(
        self, up: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        buffer = b""
        while True:
            chunk = await up.read(65536)
            if not chunk:
                return
            messages, buffer = self.cut_server(buffer + chunk)
            if messages:
                await self._deliver(writer, messages)

    async def _deliver(self, writer: asyncio.StreamWriter, messages: list[bytes]) -> None:
        """Reshape one batch: all in one write, split small, or one per write with pauses."""
        async with self.writing:  # an injected message never lands inside a split one
            await self._deliver_batch(writer, messages)

    async def _deliver_batch(self, writer: asyncio.StreamWriter, messages: list[bytes]) -> None:
        mode = MODES[self.batch % len(MODES)]
        self.batch += 1
        if mode == "coalesced":
            for m in messages:
                self.to_client(m, mode)
            await self._write(writer, b"".join(messages))
            return
        for m in messages:
            # The kit's view of the client moves on with each message as it is written,
            # not with the whole batch: a client answers the first before it has the next.
            self.to_client(m, mode)
            if mode == "split":
                step = 1 if len(m) <= 64 else max(1, len(m) // 2)
                for i in range(0, len(m), step):
                    await self._write(writer, m[i : i + step])
                    await asyncio.sleep(0.001)
            else:
                await self._write(writer, m)
                await asyncio.sleep(0.001)

    async def _write(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        self.obs.recorder.received += data
        writer.write(data)
        await writer.drain()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def inject(self, data: bytes) -> None:
        if self.client_writer is not None:
            async with self.writing:
                await self._write(self.client_writer, data)

    # -- per protocol --------------------------------------------------------------------

    terminator = b"\n"

    def opened(self) -> None:
        """A new connection of the client: per-connection state starts again."""

    def may_forward(self) -> bool:
        return True

    def from_client(self, message: bytes) -> bool:
        """Grade a client message; whether to forward it to the server."""
        raise NotImplementedError

    def to_client(self, message: bytes, mode: str) -> None:
        """See a server message on its way to the client."""
        raise NotImplementedError

    def moved(self, text: str) -> None:
        if self.ended or not self.in_game:
            self.obs.after_end.append(text)
        elif not self.my_turn:
            self.obs.out_of_turn.append(text)
        if self.turn_mode is not None:
            self.obs.answered[self.turn_mode] += 1
            self.turn_mode = None
        if self.obs.disconnect_game and self.in_game:
            self.obs.moves_after_disconnect += 1
        self.my_turn = False

    def turn_given(self, mode: str) -> None:
        self.turn_since = asyncio.get_running_loop().time()
        self.my_turn = True
        self.turn_mode = mode
        self.obs.turns[mode] += 1


class _TwenteProxy(_Proxy):
    terminator = b"\x1e"
    welcomed = False
    reannounced = 0  # ANNOUNCEs after WELCOME whose E012 is still to come

    def opened(self) -> None:
        self.welcomed = False  # WELCOME on this connection: ANNOUNCE again is E012
        self.reannounced = 0

    def from_client(self, message: bytes) -> bool:
        obs = self.obs
        body = message[:-1]
        if body[:1] in (b"\n", b"\r"):
            obs.framing.append(f"a line end after RS: {message[:20]!r}")
            body = body.lstrip(b"\r\n")
        if not body:
            return True
        got = self.read_text(
            message,
            body,
            "utf-8",
            lambda t: decode(t.split("\x1f")),
            (RemoteProtocolError,),
            lambda t: t.replace("\x1f", "|"),
        )
        if got is None:
            return True
        fields = got[0].split("\x1f")
        decoded = got[1]
        text = "|".join(fields)
        obs.messages.append(text)
        if fields[0].upper() == "ANNOUNCE" and self.welcomed:
            obs.renamed.append(f"{text} after WELCOME")
            self.reannounced += 1
        if isinstance(decoded, Error):
            if obs.probe_sent and obs.probe_answer is None:
                obs.probe_answer = text
                return False  # the answer to the kit's probe: not the server's business
            return True
        if fields[0].upper() == "MAKEMOVE":
            if self.await_retry:
                obs.retried_after_error = True
                self.await_retry = False
            self.moved(text)
            if self.refuse_next and self.in_game:
                # The kit refuses the client's first move once, as a server may (spec ERROR).
                self.refuse_next = False
                obs.injected_error = True
                self.await_retry = True
                self.my_turn = True
                code = "E006" if fields[1:2] == ["WORD"] else "E008"
                self._spawn(self.inject(f"ERROR\x1f{code}\x1e".encode()))
                return False
        return True

    def to_client(self, message: bytes, mode: str) -> None:
        fields = message[:-1].decode("utf-8", "replace").split("\x1f")
        try:
            decoded = decode(fields)
        except RemoteProtocolError:
            return
        if fields[0] == "WELCOME":
            self.welcomed = True
        if fields[0] == "WELCOME" and not self.obs.probe_sent:
            # spec E002: a command of an extension the client did not announce
            self.obs.probe_sent = True
            probe = "NOTIFYCHAT\x1fkitbot\x1fhello\x1e" if not self._chat() else "FOOBAR\x1e"
            asyncio.get_running_loop().call_later(
                0.05, lambda: self._spawn(self.inject(probe.encode()))
            )
        elif fields[0] == "STARTGAME":
            self.in_game, self.ended = True, False
        elif isinstance(decoded, NotifyTurn):
            if decoded.your_turn:
                self.turn_given(mode)
        elif (
            isinstance(decoded, Error)
            and decoded.code is ErrorCode.ALREADY_ANNOUNCED
            and self.reannounced
        ):
            self.reannounced -= 1  # the answer to ANNOUNCE again (announce-once), not a move's
        elif isinstance(decoded, Error) and self.in_game and not self.ended:
            self.obs.refused_by_server.append("|".join(fields))
            self.my_turn = True
        elif isinstance(decoded, GameOver):
            self.ended, self.in_game, self.my_turn, self.turn_mode = True, False, False, None
            self.obs.ends += 1
            if decoded.reason.value == "WIN":
                self.obs.games_won += 1

    def _chat(self) -> bool:
        first = self.obs.first or ""
        return "CHAT" in first.upper().split("|")[2:]


_HELLO = re.compile(r"HELLO (\d+\.\d+\.?\d*),([^,]+),([^,]+),(.+)")


class _ClarksonProxy(_Proxy):
    terminator = b"\n"

    def __init__(self, obs: Observations, server_port: int) -> None:
        super().__init__(obs, server_port)
        self.won = False
        self.name = ""
        self.prompted = False
        self.ready_sent = False

    def from_client(self, message: bytes) -> bool:
        obs = self.obs
        raw = message
        if b"\x00" in raw:
            obs.framing.append("NUL padding")
            raw = raw.strip(b"\x00")
        if not raw.endswith(b"\r\n"):
            obs.framing.append(f"a bare LF: {message[:30]!r}")
        line = raw.rstrip(b"\r\n").strip(b"\x00")
        if not line:
            return True
        got = self.read_text(message, line, "ascii", decode_client, (ClarksonProtocolError,))
        if got is None:
            return True
        text = got[0]
        obs.messages.append(text)
        word = text.split(" ", 1)[0].upper()
        if word == "HELLO" and obs.hello is None:
            obs.hello = text
        if word == "USERSET":
            self.name = text.split(" ", 1)[-1].strip()
        if word == "READY":
            self.ready_sent = True
            obs.client_named += 1
        if word == "READY" and self.prompted:
            # the kit's instructions: READY once the kit's player has joined (USERJOIN)
            self.prompted = False
            self.my_turn = False
            if self.turn_mode is not None:
                self.obs.answered[self.turn_mode] += 1
                self.turn_mode = None
        if word == "QUIT" and self.won:
            obs.quit_after_end += 1
        if word in ("PLACE", "PASS", "EXCHANGE"):
            if self.await_retry:
                obs.retried_after_error = True
                self.await_retry = False
            self.moved(text)
            if self.refuse_next and word == "PLACE" and self.in_game:
                # RFC §3.4: the client MUST consider a NOK'd command failed.
                self.refuse_next = False
                obs.injected_error = True
                self.await_retry = True
                self.my_turn = True
                self._spawn(self.inject(b"NOK the kit refuses this move once\r\n"))
                return False
        return True

    def to_client(self, message: bytes, mode: str) -> None:
        line = message.decode("ascii", "replace").rstrip("\r\n")
        word = line.split(" ", 1)[0]
        if word == "USERCHANGE" and self.name and line.endswith(" " + self.name):
            self.obs.client_named += 1
        if word == "USERJOIN" and not self.in_game and KIT_NAME in line and not self.ready_sent:
            self.prompted = True
            self.turn_given(mode)
        elif word == "STARTING":
            self.in_game, self.ended, self.won = True, False, False
        elif word == "TURN":
            name = line[5:]
            if name == self.name:
                self.turn_given(mode)
            else:
                self.my_turn, self.turn_mode = False, None
        elif word == "NOK" and self.in_game and not self.ended and not self.my_turn:
            self.obs.refused_by_server.append(line)
            self.my_turn = True
        elif word == "WINNER":
            self.ended, self.in_game, self.my_turn, self.turn_mode = True, False, False, None
            self.won = True
            self.ready_sent = False
            self.obs.ends += 1
            self.obs.games_won += 1

    def may_forward(self) -> bool:
        # RFC §3.8: a client alone at a table that says READY plays alone at once, so
        # after WINNER its messages wait until the kit's player sits at the next table.
        return self.in_game or self.obs.kit_done or self.obs.kit_table_game > self.obs.games_won


class _SpectrangleProxy(_Proxy):
    terminator = b"\n"

    def __init__(self, obs: Observations, server_port: int) -> None:
        super().__init__(obs, server_port)
        self.name = ""
        self.skip_told = False
        self.board = SpBoard()
        self.hand: list[str] = []

    def _choices(self) -> int:
        try:
            return len(self.board.placements([Tile.parse(t) for t in self.hand]))
        except (ValueError, SpectrangleError):
            return 0

    def from_client(self, message: bytes) -> bool:
        obs = self.obs
        raw = message.rstrip(b"\n")
        if raw.endswith(b"\r"):
            obs.framing.append(f"a CRLF line end: {message[:30]!r}")
            raw = raw.rstrip(b"\r")
        if not raw:
            return True
        got = self.read_text(
            message, raw, "utf-8", decode_spectrangle_client, (SpectrangleProtocolError,)
        )
        if got is None:
            return True
        text = got[0]
        obs.messages.append(text)
        word = text.split(" ", 1)[0]
        if word == "connect" and not self.name:
            self.name = text.split()[1] if len(text.split()) > 1 else ""
        if word in ("place", "skip", "exchange"):
            if self.skip_told:
                # 1.4: "skip <name>" in the tiles line: the client must skip or exchange
                self.skip_told = False
                if word == "place":
                    obs.skip_ignored.append(text)
                else:
                    obs.skips_answered += 1
            if self.await_retry:
                obs.retried_after_error = True
                self.await_retry = False
            self.moved(text)
            if self.refuse_next and word == "place" and self.in_game and self._choices() >= 2:
                # spec "Errors to be defined": the kit refuses the first placement once
                # (only when another placement exists: a refused only move stalls a game).
                self.refuse_next = False
                obs.injected_error = True
                self.await_retry = True
                self.my_turn = True
                self._spawn(self.inject(b"invalidMove\n"))
                return False
        return True

    def to_client(self, message: bytes, mode: str) -> None:
        line = message.decode("utf-8", "replace").rstrip("\r\n")
        words = line.split()
        if not words:
            return
        if line.startswith("start with"):
            self.in_game, self.ended = True, False
            self.board = SpBoard()
        elif words[0] == "move" and len(words) == 5:
            with contextlib.suppress(ValueError, SpectrangleError):  # the server's words
                self.board.put(Tile.parse(words[2]), int(words[3]))
        elif words[0] == "tiles" and len(words) >= 3:
            if self.name in words:
                i = words.index(self.name)
                self.hand = [t for t in words[i + 1 : i + 5] if t != "null"]
            if words[-1] == self.name and self.in_game:
                if words[-2] == "skip":
                    self.obs.skips_told += 1
                    self.skip_told = True
                self.turn_given(mode)
            else:
                self.my_turn, self.turn_mode = False, None
        elif line.startswith("game finished"):
            self.ended, self.in_game, self.my_turn, self.turn_mode = True, False, False, None
            self.obs.ends += 1
            self.obs.games_won += 1
        elif words[0] == "player" and line.endswith(" left"):
            self.ended, self.in_game, self.my_turn, self.turn_mode = True, False, False, None
            self.obs.ends += 1
        elif line in ("invalidMove", "invalidCommand") and self.in_game and not self.my_turn:
            last = self.obs.messages[-1] if self.obs.messages else ""
            if not last.startswith("exchange"):
                # A refused exchange is a client probing the bag, which only the server
                # knows (the rules allow an exchange only while it holds tiles).
                self.obs.refused_by_server.append(f"{line} for {last!r}")
            self.my_turn = True


# --- the kit's own players --------------------------------------------------------------


async def _twente_opponent(port: int, lexicon: Lexicon, obs: Observations) -> None:
    client = await TwenteClient.connect("127.0.0.1", port, KIT_NAME)
    try:
        for game in range(obs.games):
            leave = obs.games >= 2 and game == obs.games - 1
            await client.request_game(2)
            moves = 0
            async for m in client:
                if isinstance(m, NotifyTurn) and m.your_turn:
                    if leave and moves >= 2:
                        obs.disconnect_game = True
                        return
                    moves += 1
                    move = best_move(client.board, client.rack, lexicon, ENGLISH)
                    if move is not None:
                        await client.play_word(move.x, move.y, move.direction, move.word)
                    elif client.bag_count >= 7:
                        await client.swap(client.rack)
                    else:
                        await client.pass_turn()
                elif isinstance(m, Error) and client.turn == client.name:
                    await client.pass_turn()
                elif isinstance(m, GameOver):
                    break
    finally:
        await client.close()


async def _clarkson_opponent(port: int, lexicon: Lexicon, obs: Observations) -> None:
    for game in range(obs.games):
        leave = obs.games >= 2 and game == obs.games - 1
        client = await _clarkson_seat(port, obs, game + 1)
        try:
            moves = 0
            async for m in client:
                if isinstance(m, Turn) and client.my_turn:
                    if leave and moves >= 2:
                        obs.disconnect_game = True
                        await client.quit()
                        break
                    moves += 1
                    move = best_move(client.board, client.rack, lexicon, CLARKSON)
                    if move is not None:
                        await client.place(move.tiles)
                    elif client.bag_count >= 7:
                        await client.exchange(None)
                    else:
                        await client.pass_turn()
                elif isinstance(m, Nok) and client.my_turn:
                    await client.pass_turn()
                elif isinstance(m, Winner):
                    break
        finally:
            with contextlib.suppress(Exception):
                await client.quit()
            await client.close()
    obs.kit_done = True


async def _clarkson_seat(port: int, obs: Observations, game: int) -> ClarksonClient:
    """The kit's player at the client's table and READY (RFC §3.7, §3.8).

    The client's messages wait until the kit's player sits (see ``may_forward``). If the
    client does not join its table within a few seconds (it sat elsewhere), the kit's
    player leaves and sits again, at the oldest open table: the client's.
    """
    while True:
        base = obs.client_named
        client = await _clarkson_connect(port)
        obs.kit_table_game = game
        try:
            joined = bool(client.users)  # told of the client already, while naming itself
            while not joined:
                m = await asyncio.wait_for(client.receive(), 3.0)
                joined = isinstance(m, UserJoin)
            # READY only once the client is settled at the table (named or READY itself):
            # a client that leaves again (its name refused, say) must not leave the kit's
            # player alone and ready, which would start a game of one (§3.8).
            async with asyncio.timeout(3.0):
                while obs.client_named == base:
                    await asyncio.sleep(0.02)
            await client.ready()
            return client
        except TimeoutError:
            with contextlib.suppress(Exception):
                await client.quit()
            await client.close()


async def _clarkson_connect(port: int) -> ClarksonClient:
    # Back for the next game, the name may be held a moment by the connection just closed.
    for attempt in range(6):
        try:
            return await ClarksonClient.connect("127.0.0.1", port, KIT_NAME)
        except NameRefused:
            await asyncio.sleep(0.05 * 2**attempt)
    return await ClarksonClient.connect("127.0.0.1", port, KIT_NAME)


async def _spectrangle_opponent(
    port: int,
    lexicon: Lexicon,
    obs: Observations,
    before: Callable[[int], Awaitable[None]] | None = None,
) -> None:
    """The kit's Spectrangle player; ``before(game)`` is awaited before each request (the
    web kit waits for the browser to open its table)."""
    client = await SpectrangleClient.connect("127.0.0.1", port, KIT_NAME)
    try:
        for game in range(obs.games):
            leave = obs.games >= 2 and game == obs.games - 1
            if before is not None:
                await before(game)
            await client.request_game(2)
            moves = refusals = 0
            async for m in client:
                if isinstance(m, GameFinished | PlayerLeft):
                    break
                if isinstance(m, SpErrorReply):
                    refusals += 1
                if client.my_turn and not client._pending:
                    if leave and moves >= 2:
                        obs.disconnect_game = True
                        return
                    moves += 1
                    await take_turn(client, refusals, exchange=True)
                elif not client.my_turn:
                    refusals = 0
    finally:
        await client.close()


@dataclass(frozen=True)
class ClientKit:
    listener: str
    proxy: type[_Proxy]
    opponent: Callable[[int, Lexicon, Observations], Coroutine[Any, Any, None]]
    how: str
    # The kit's server settings for ``--games`` (CMPN402: the series, the window).
    configure: Callable[[ServerConfig, int], ServerConfig] | None = None
    # Where the kit's own player connects, if not to ``listener`` (web: a Spectrangle
    # client at the browser's table).
    opponent_listener: str | None = None


CLIENT_KITS: dict[str, ClientKit] = {
    "spectrangle": ClientKit(
        "spectrangle",
        _SpectrangleProxy,
        _spectrangle_opponent,
        "connect <name>, then request 2, {games} time(s)",
    ),
    "twente": ClientKit(
        "twente",
        _TwenteProxy,
        _twente_opponent,
        "ANNOUNCE, then REQUESTGAME for 2 players, {games} time(s)",
    ),
    "clarkson": ClientKit(
        "clarkson",
        _ClarksonProxy,
        _clarkson_opponent,
        "HELLO, USERSET, READY once the kit's player has joined, {games} game(s) "
        "(a new connection or READY after WINNER)",
    ),
}


LAST_WORDS = 3.0  # seconds the kit listens for a client's goodbye after the last game


async def run_client_kit(
    protocol: str,
    host: str,
    port: int,
    *,
    lexicon: Lexicon,
    games: int = 2,
    timeout: float = 300.0,
    ready: Callable[[str, int, str], None] | None = None,
    after_ready: Callable[[int], Coroutine[Any, Any, Any]] | None = None,
    turn_wait: float = TURN_WAIT,
    last_words: float = LAST_WORDS,
) -> list[Result]:
    """Serve the kit on ``host:port``, wait for the client to play ``games`` games, grade.

    ``ready(host, port, how)`` is told where to connect; ``after_ready(port)`` (tests)
    is started then, e.g. to run a client in the same process. ``last_words``: how long
    the kit then listens for the client's goodbye while it is still connected.
    """
    from meeple.server.app import MeepleServer

    kit = CLIENT_KITS[protocol]
    obs = Observations(protocol, games)
    with tempfile.TemporaryDirectory(prefix="meeple-check-") as tmp:
        # A short grace: at the end the kit's server goes, whoever is still connected.
        config = ServerConfig(database=f"{tmp}/check.sqlite3", shutdown_grace=0.2)
        config = config.only(kit.listener, *filter(None, [kit.opponent_listener]))
        if "web" in config.listeners:
            # The client reaches the web through the kit's relay, by the name it was
            # given for ``host`` and the relay's port: the web answers that name on any
            # port (its Host allowlist, docs/server.md "Security"), or any name when the
            # relay listens on every interface.
            name = "*" if host in WILDCARD_BINDS else host
            config = config.with_overrides(web=replace(config.web, hosts=(*config.web.hosts, name)))
        if kit.configure is not None:
            config = kit.configure(config, games)
        server = MeepleServer(config, rng=random.Random())
        server.services.lexicon = lexicon
        await server.start()
        proxy = kit.proxy(obs, server.ports[kit.listener])
        listener = await asyncio.start_server(proxy.handle, host, port)
        bound = listener.sockets[0].getsockname()[1]
        opponent_port = server.ports[kit.opponent_listener or kit.listener]
        opponent = asyncio.create_task(kit.opponent(opponent_port, lexicon, obs))
        extra: asyncio.Task[Any] | None = None
        try:
            if ready is not None:
                ready(host, bound, kit.how.format(games=games))
            if after_ready is not None:
                extra = asyncio.create_task(after_ready(bound))
            try:
                await _wait_for_client(opponent, proxy, obs, timeout, turn_wait)
                # The client's last words (QUIT after the end): until it hangs up, for at
                # most ``last_words`` seconds (a loaded machine delays them past half a
                # second).
                last = asyncio.get_running_loop().time() + last_words
                while proxy.connected and asyncio.get_running_loop().time() < last:
                    await asyncio.sleep(0.05)
            except Exception as e:
                obs.kit_player_failed = True
                obs.kit_errors.append(f"the kit's player stopped: {e!r}")
        finally:
            opponent.cancel()
            listener.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(listener.wait_closed(), 2)
            if extra is not None:
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(extra, 0.5)
            await server.stop()
    target = _Graded(obs)
    return await run_checks([c for c in CLIENT_CHECKS if c.id.startswith(protocol)], target)


async def _wait_for_client(
    opponent: asyncio.Task[None],
    proxy: _Proxy,
    obs: Observations,
    timeout: float,
    turn_wait: float,
) -> None:
    """Until the games are over, the timeout, or the client sits on a turn too long."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    # The kit's player may have left the last game: the client then plays it out.
    while not (opponent.done() and obs.ends >= obs.games):
        now = loop.time()
        if now >= deadline:
            obs.kit_errors.append(f"the client had not finished after {timeout:g} s")
            return
        if proxy.my_turn and now - proxy.turn_since > turn_wait:
            obs.kit_errors.append(f"the client did not move within {turn_wait:g} s of its turn")
            return
        if opponent.done() and opponent.exception() is not None:
            obs.kit_player_failed = True
            obs.kit_errors.append(f"the kit's player stopped: {opponent.exception()!r}")
            return
        away = proxy.away_since
        if (opponent.done() or (away is not None and now - away > turn_wait)) and (
            obs.connections and not proxy.connected
        ):
            # Gone, and not back within --turn-wait (a client may reconnect per game).
            obs.kit_errors.append("the client left before finishing its games")
            return
        await asyncio.sleep(0.05)


@dataclass
class _Graded:
    obs: Observations
    host: str = ""
    port: int = 0
    options: dict[str, Any] = field(default_factory=dict)


# --- the checks over what was observed --------------------------------------------------

Grader = Callable[[Context], Awaitable[None]]
CLIENT_CHECKS: list[Check] = []


def check(
    id: str, section: str, level: Level, title: str, errata: str | None = None
) -> Callable[[Callable[[Context, Observations], None]], Grader]:
    def register(grade: Callable[[Context, Observations], None]) -> Grader:
        async def run(ctx: Context) -> None:
            obs: Observations = ctx.target.obs
            ctx.recorders.append(obs.recorder)
            if obs.connections == 0:
                raise CannotTest("no client connected")
            grade(ctx, obs)

        CLIENT_CHECKS.append(Check(id, section, level, title, run, 5.0, errata))
        return run

    return register


def _need_game(obs: Observations) -> None:
    if obs.ends == 0:
        raise CannotTest("the client finished no game" + _why(obs))


def _why(obs: Observations) -> str:
    return f" ({'; '.join(obs.kit_errors)})" if obs.kit_errors else ""


# --- the shapes the client kits share, as tables ----------------------------------------

Grade = Callable[[Context, Observations], None]


def first_message(ok: Callable[[str], bool]) -> Grade:
    def grade(ctx: Context, obs: Observations) -> None:
        ctx.expect(obs.first is not None and ok(obs.first), f"first: {obs.first!r}")

    return grade


def _decodes(ctx: Context, obs: Observations) -> None:
    ctx.expect(not obs.undecodable, f"not valid: {obs.undecodable[:3]}")
    ctx.expect(bool(obs.messages), "the client sent nothing")


def _in_turn(ctx: Context, obs: Observations) -> None:
    _need_game(obs)
    ctx.expect(not obs.out_of_turn, f"out of turn: {obs.out_of_turn[:3]}")


def _not_after_end(ctx: Context, obs: Observations) -> None:
    _need_game(obs)
    ctx.expect(not obs.after_end, f"moves outside a game: {obs.after_end[:3]}")


def _legal(ctx: Context, obs: Observations) -> None:
    _need_game(obs)
    ctx.expect(not obs.refused_by_server, f"refused: {obs.refused_by_server[:3]}")


def retried(move: str, error: str) -> Grade:
    def grade(ctx: Context, obs: Observations) -> None:
        if not obs.injected_error:
            raise CannotTest(f"the client made no {move} to refuse" + _why(obs))
        ctx.expect(obs.retried_after_error, f"the client never moved again after {error}")

    return grade


def _split(ctx: Context, obs: Observations) -> None:
    _turns(ctx, obs, "split")


def _coalesced(ctx: Context, obs: Observations) -> None:
    _turns(ctx, obs, "coalesced")


def games_finished(left: bool) -> Grade:
    """``left``: the kit leaves the last game of two or more, which then does not count."""

    def grade(ctx: Context, obs: Observations) -> None:
        want = obs.games - (1 if left and obs.games >= 2 else 0)
        ctx.expect(obs.games_won >= want, f"{obs.games_won} of {want} games finished{_why(obs)}")

    return grade


def games_ended(ctx: Context, obs: Observations) -> None:
    """Every game the client was to play (``--games``) reached its end."""
    ctx.expect(obs.ends >= obs.games, f"{obs.ends} of {obs.games} games ended{_why(obs)}")


def framing_differs(what: str) -> Grade:
    """The ERRATA's other reading of the line ends: the client's quirks (``obs.framing``)
    "differ", never fail; ``what`` names them ("line ends after RS")."""

    def grade(ctx: Context, obs: Observations) -> None:
        if obs.framing:
            raise Differs(f"{len(obs.framing)} {what} {obs.framing[0]}")
        ctx.passed()

    return grade


def said_once(nothing: str, again: str) -> Grade:
    """The client names itself once per connection (``obs.renamed``: each time again);
    ``nothing``: why a client that sent nothing cannot be judged."""

    def grade(ctx: Context, obs: Observations) -> None:
        if not obs.messages:
            raise CannotTest(nothing)
        ctx.expect(not obs.renamed, f"{again}: {obs.renamed[:3]}")

    return grade


def need_leave(obs: Observations, last_game: str, never_left: str) -> None:
    """Could not test unless the kit's player left the client's last game (``--games 2``
    or more; ``last_game`` says which game that is, ``never_left`` why none was left)."""
    if obs.games < 2:
        raise CannotTest(f"needs --games 2 or more ({last_game})")
    if not obs.disconnect_game:
        raise CannotTest(never_left + _why(obs))


def quiet_after_leaving(last_game: str, never_left: str, moves: str) -> Grade:
    """Once the kit's player left the last game (:func:`need_leave`), the client sends
    no more ``moves`` in it."""

    def grade(ctx: Context, obs: Observations) -> None:
        need_leave(obs, last_game, never_left)
        ctx.expect(not obs.after_end, f"{moves} after the game's end: {obs.after_end[:3]}")

    return grade


DECODES, IN_TURN, NOT_AFTER_END, LEGAL, SPLIT, COALESCED = (
    _decodes,
    _in_turn,
    _not_after_end,
    _legal,
    _split,
    _coalesced,
)

# Why a client kit's leave checks need two games (the kit's player leaves the last one).
LEAVES_LAST = "the last game is the one the kit leaves"

# (id's last part, the spec's section, MUST/SHOULD, title, grader[, the ERRATA point])
Row = tuple[Any, ...]


def register_checks(protocol: str, rows: list[Row]) -> None:
    """A client kit's checks from its table (``<protocol>.client.<id>``)."""
    for name, section, level, title, grade, *errata in rows:
        check(f"{protocol}.client.{name}", section, level, title, *errata)(grade)


# Twente ---------------------------------------------------------------------------------

register_checks(
    "twente",
    [
        (
            "announce-first",
            "E013 - Client has not yet announced themselves",
            Level.MUST,
            "the client's first message is ANNOUNCE",
            first_message(lambda m: m.upper().startswith("ANNOUNCE|")),
        ),
        (
            "decodes",
            "Commands",
            Level.MUST,
            "every message is a command of the spec with valid arguments",
            DECODES,
        ),
        (
            "in-turn",
            "E009 - It is not your turn",
            Level.MUST,
            "MAKEMOVE only after NOTIFYTURN 1 for the client",
            IN_TURN,
        ),
        (
            "not-after-end",
            "E014 - Client is not in a game",
            Level.MUST,
            "no MAKEMOVE outside a game or after GAMEOVER",
            NOT_AFTER_END,
        ),
        ("legal", "MAKEMOVE", Level.SHOULD, "the server refuses none of the client's moves", LEGAL),
        (
            "error-retry",
            "ERROR",
            Level.MUST,
            "after an ERROR for its move the client moves again in its turn",
            retried("move", "ERROR (the game stalled)"),
        ),
        (
            "split",
            "Delimiters",
            Level.MUST,
            "acts on messages delivered split (a byte per write)",
            SPLIT,
        ),
        (
            "coalesced",
            "Delimiters",
            Level.MUST,
            "acts on messages delivered coalesced (several per write)",
            COALESCED,
        ),
        (
            "whole-game",
            "GAMEOVER",
            Level.MUST,
            "plays whole games to GAMEOVER WIN (--games)",
            games_finished(left=True),
        ),
    ],
)


register_checks(
    "twente",
    [
        (
            "delimiters",
            "Delimiters",
            Level.SHOULD,
            "messages end with RS and nothing else",
            framing_differs("line ends after RS, e.g."),
            "Twente: a server accepts \\n or \\r\\n after RS",
        )
    ],
)


@check(
    "twente.client.requestgame",
    "REQUESTGAME",
    Level.MUST,
    "the client requests a game (REQUESTGAME, 2 players)",
)
def _tw_request(ctx: Context, obs: Observations) -> None:
    asks = [m for m in obs.messages if m.upper().startswith("REQUESTGAME")]
    ctx.expect(bool(asks), f"no REQUESTGAME{_why(obs)}")


register_checks(
    "twente",
    [
        (
            "announce-once",
            "E012 - Client has already announced themselves",
            Level.MUST,
            "ANNOUNCE once per connection: a second after WELCOME is the spec's error E012",
            said_once("the client sent nothing", "announced again"),
        )
    ],
)


@check(
    "twente.client.e002",
    "E002 - Unknown command",
    Level.SHOULD,
    "a command of an extension it did not announce is answered ERROR E002",
)
def _tw_e002(ctx: Context, obs: Observations) -> None:
    if not obs.probe_sent:
        raise CannotTest("the client was never welcomed")
    ctx.expect(
        obs.probe_answer is not None and obs.probe_answer.upper().startswith("ERROR|E002"),
        f"answer: {obs.probe_answer!r}",
    )


def _turns(ctx: Context, obs: Observations, mode: str) -> None:
    if obs.turns[mode] == 0:
        raise CannotTest(f"no turn notice happened to be delivered {mode}")
    ctx.expect(
        obs.answered[mode] >= obs.turns[mode],
        f"{obs.answered[mode]} moves for {obs.turns[mode]} turns delivered {mode}",
    )


register_checks(
    "twente",
    [
        (
            "disconnect",
            "PLAYERDISCONNECTED",
            Level.MUST,
            "after the other player's disconnect (GAMEOVER DISCONNECT) it sends no move",
            quiet_after_leaving(
                "the last game is the disconnect game",
                "the disconnect game did not get under way",
                "moves",
            ),
        )
    ],
)


# Clarkson -------------------------------------------------------------------------------

register_checks(
    "clarkson",
    [
        (
            "hello-first",
            "3.1 HELLO",
            Level.MUST,
            "the client's first command is HELLO",
            first_message(lambda m: m.upper().startswith("HELLO ")),
        ),
        (
            "decodes",
            "3 Messages, Requests, and Responses",
            Level.MUST,
            "every line is a command of the RFC's grammar",
            DECODES,
        ),
        (
            "in-turn",
            "3.13 TURN",
            Level.MUST,
            "PLACE/PASS/EXCHANGE only in the client's turn",
            IN_TURN,
        ),
        (
            "not-after-end",
            "3.17 WINNER",
            Level.MUST,
            "no move outside a game or after WINNER",
            NOT_AFTER_END,
        ),
        (
            "legal",
            "3.14 PLACE",
            Level.SHOULD,
            "the server refuses none of the client's moves",
            LEGAL,
        ),
        (
            "nok-retry",
            "3.4 NOK",
            Level.MUST,
            "after NOK for its PLACE the client takes its turn again",
            retried("tiles placed", "NOK (the game stalled)"),
        ),
        (
            "split",
            "2 Grammar",
            Level.MUST,
            "acts on lines delivered split (a byte per write)",
            SPLIT,
        ),
        (
            "coalesced",
            "2 Grammar",
            Level.MUST,
            "acts on lines delivered coalesced (several per write)",
            COALESCED,
        ),
    ],
)


@check(
    "clarkson.client.hello-grammar",
    "3.1 HELLO",
    Level.MUST,
    "HELLO is version,system,program,author; program is language/version",
)
def _cl_grammar(ctx: Context, obs: Observations) -> None:
    m = _HELLO.fullmatch(obs.hello or "")
    ctx.expect(m is not None, f"HELLO: {obs.hello!r}")
    assert m is not None
    ctx.expect("/" in m.group(3), f"program is {m.group(3)!r}, not language/version")


@check("clarkson.client.hello-version", "3.1 HELLO", Level.SHOULD, "HELLO reports version 1.0.1")
def _cl_version(ctx: Context, obs: Observations) -> None:
    ctx.expect((obs.hello or "").startswith("HELLO 1.0.1,"), f"HELLO: {obs.hello!r}")


register_checks(
    "clarkson",
    [
        (
            "crlf",
            "2 Grammar",
            Level.SHOULD,
            "lines end with CRLF, unpadded",
            framing_differs("lines: e.g."),
            "Clarkson: accept LF and NUL padding",
        )
    ],
)


@check("clarkson.client.ready", "3.8 READY", Level.MUST, "the client says READY")
def _cl_ready(ctx: Context, obs: Observations) -> None:
    ctx.expect(any(m.upper() == "READY" for m in obs.messages), f"no READY{_why(obs)}")


@check(
    "clarkson.client.whole-game", "3.17 WINNER", Level.MUST, "plays whole games to WINNER (--games)"
)
def _cl_games(ctx: Context, obs: Observations) -> None:
    ctx.expect(
        obs.games_won >= obs.games, f"{obs.games_won} of {obs.games} games finished{_why(obs)}"
    )


@check("clarkson.client.quit", "3.17 WINNER", Level.SHOULD, "after WINNER the client sends QUIT")
def _cl_quit(ctx: Context, obs: Observations) -> None:
    _need_game(obs)
    ctx.expect(obs.quit_after_end >= 1, "no QUIT after WINNER")


@check(
    "clarkson.client.other-quits",
    "4 Protocol Overview and Examples",
    Level.MUST,
    "plays on when the other player quits mid-game",
    "Clarkson: the game continues for the rest",
)
def _cl_other_quits(ctx: Context, obs: Observations) -> None:
    need_leave(obs, LEAVES_LAST, "the kit's player never left a game")
    ctx.expect(
        obs.moves_after_disconnect > 0 and obs.games_won >= obs.games,
        f"after the other player quit the client made {obs.moves_after_disconnect} moves and "
        f"finished {obs.games_won} of {obs.games} games{_why(obs)}",
    )


# Spectrangle ----------------------------------------------------------------------------

register_checks(
    "spectrangle",
    [
        (
            "connect-first",
            "connect <name> <extensions>",
            Level.MUST,
            "the client's first command is connect",
            first_message(lambda m: m.startswith("connect ")),
        ),
        (
            "decodes",
            "Definitions of relevant commands",
            Level.MUST,
            "every line is a client command of the spec",
            DECODES,
        ),
        (
            "in-turn",
            "tiles [<name> [tiles]] turn <name>",
            Level.MUST,
            "place/skip/exchange only when the tiles line names the client",
            IN_TURN,
        ),
        (
            "not-after-end",
            "game finished leaderboard [<name> <points>]",
            Level.MUST,
            "no move after the leaderboard or a player's leaving",
            NOT_AFTER_END,
        ),
        (
            "legal",
            "Errors to be defined",
            Level.SHOULD,
            "the server refuses none of the client's moves",
            LEGAL,
        ),
        (
            "error-retry",
            "Errors to be defined",
            Level.MUST,
            "after invalidMove for its place the client takes its turn again",
            retried("tile placed", "invalidMove"),
        ),
        (
            "split",
            "General information",
            Level.MUST,
            "acts on lines delivered split (a byte per write)",
            SPLIT,
        ),
        (
            "coalesced",
            "General information",
            Level.MUST,
            "acts on lines delivered coalesced (several per write)",
            COALESCED,
        ),
        (
            "whole-game",
            "game finished leaderboard [<name> <points>]",
            Level.MUST,
            "plays whole games to the leaderboard (--games)",
            games_finished(left=True),
        ),
    ],
)


register_checks(
    "spectrangle",
    [
        (
            "line-ends",
            "General information",
            Level.SHOULD,
            "lines end with \\n",
            framing_differs("lines end with CRLF, e.g."),
            "Spectrangle: a server accepts \\r\\n",
        )
    ],
)


@check(
    "spectrangle.client.request",
    "request < number of players >",
    Level.MUST,
    "the client requests a game",
)
def _sp_request(ctx: Context, obs: Observations) -> None:
    ctx.expect(any(m.startswith("request ") for m in obs.messages), f"no request{_why(obs)}")


register_checks(
    "spectrangle",
    [
        (
            "player-left",
            "player <name> left",
            Level.MUST,
            "after player <name> left it sends no move",
            quiet_after_leaving(LEAVES_LAST, "the kit's player never left a game", "moves"),
        )
    ],
)


@check(
    "spectrangle.client.skip-line",
    "skip <name>",
    Level.MUST,
    "a 1.4 tiles line ending skip <name> is answered with skip or exchange",
    "Spectrangle: skip <name> replaces turn <name> in the tiles line",
)
def _sp_skip(ctx: Context, obs: Observations) -> None:
    ctx.expect(not obs.skip_ignored, f"placed when told to skip: {obs.skip_ignored[:3]}")
    if obs.skips_told == 0:
        raise CannotTest("no game happened to tell the client to skip")
    ctx.expect(obs.skips_answered > 0, f"told to skip {obs.skips_told} times, never skipped")


# The kits in modules of their own register themselves in CLIENT_KITS and CLIENT_CHECKS.
from meeple.check import cmpn402_client as _cmpn402_client  # noqa: E402, F401
from meeple.check import santorini_client as _santorini_client  # noqa: E402, F401
from meeple.check import web_client as _web_client  # noqa: E402, F401

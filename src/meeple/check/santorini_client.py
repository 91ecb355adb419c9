"""The AM27 client kit: meeple's Santorini server behind a grading relay.

The relay cuts the server's Java object stream by the lengths it carries
(:func:`meeple.check.santorini.object_stream_units`) and delivers the units coalesced,
split or paced, like the other client kits. The kit's own player is named
``kit}{"bot`` so that a client finding message boundaries with a regular expression or
by counting braces, instead of reading the length, trips over the first message that
names it (issue 23: a Santorini bot "misses a message that TCP joined to another").

What the client sends is graded: a REGISTER first (after any PING), only AM27 client
messages, PINGs at the heartbeat (ERRATA: every 0.5 s, 5 s of silence is a disconnect),
steps only when the last UPDATE named it, none after ENDGAME; the relay refuses its first
MOVE once (INFO INVALID and the UPDATE again, meeple's reading) and expects another.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import statistics

from meeple.check.clients import (
    CLIENT_KITS,
    COALESCED,
    DECODES,
    IN_TURN,
    LEAVES_LAST,
    LEGAL,
    MODES,
    NOT_AFTER_END,
    SPLIT,
    ClientKit,
    Observations,
    _Proxy,
    _why,
    check,
    first_message,
    games_ended,
    quiet_after_leaving,
    register_checks,
)
from meeple.check.core import CannotTest, Context, Differs, Level
from meeple.check.santorini import HEARTBEAT_TIMEOUT, PING_INTERVAL, object_stream_units
from meeple.clients.santorini import SantoriniClient, SantoriniClientError, choose
from meeple.games.scrabble.lexicon import Lexicon
from meeple.protocols.santorini import (
    STREAM_HEADER,
    ChooseStarter,
    ClientMessage,
    EndGame,
    GodInit,
    GodList,
    Info,
    MessageError,
    Ping,
    Players,
    ServerState,
    Update,
    decode,
)
from meeple.protocols.santorini.framing import ObjectStreamEncoder
from meeple.protocols.santorini.messages import CLIENT_TYPES

__all__ = ["SANTORINI_KIT_NAME"]

# A nickname a regular expression over the JSON text stumbles on (printable, ≤ 32).
SANTORINI_KIT_NAME = 'kit}{"bot'
STEPS = {"WORKERINIT", "MOVE", "BUILD", "UNDO", "PASS", "LOSE", "GODINIT", "CHOSESTARTER"}
_CLIENT_TYPES = {t.value for t in CLIENT_TYPES}
_PING_UNIT = ObjectStreamEncoder().encode(Ping("ping").encode())


class _SantoriniProxy(_Proxy):
    terminator = b"\n"  # client → server: JSON lines (ERRATA)

    def __init__(self, obs: Observations, server_port: int) -> None:
        super().__init__(obs, server_port)
        self.name = ""
        self.last_update: bytes | None = None  # the last UPDATE unit naming the client
        self.prompted = False  # a SERVERSTATE awaits the client's REGISTER

    def cut_server(self, buffer: bytes) -> tuple[list[bytes], bytes]:
        return object_stream_units(buffer)  # by the lengths, header first

    async def _deliver(self, writer: asyncio.StreamWriter, messages: list[bytes]) -> None:
        # Coalesced means joined to another message: a server PING goes in front, so
        # the message that matters is never the first of the write (a client that takes
        # the first envelope of each read and drops the rest misses it).
        if MODES[self.batch % len(MODES)] == "coalesced":
            at = 1 if messages and messages[0] == STREAM_HEADER else 0
            messages = [*messages[:at], _PING_UNIT, *messages[at:]]
        await super()._deliver(writer, messages)

    def from_client(self, message: bytes) -> bool:
        obs = self.obs
        now = asyncio.get_running_loop().time()
        obs.heard.append(now)
        text = message.rstrip(b"\r\n")
        if not text.strip():
            return True
        try:
            decoded = decode(text.decode("utf-8"))
        except (UnicodeDecodeError, MessageError) as e:
            obs.undecodable.append(f"{message[:60]!r}: {e}")
            return True
        kind = decoded.TYPE.value
        if kind not in _CLIENT_TYPES:
            obs.undecodable.append(f"{kind} is a server message: {message[:60]!r}")
            return True
        if kind == "PING":
            obs.pings.append(now)
            return True
        shown = text.decode("utf-8", "replace")
        if obs.first is None:
            obs.first = shown
        obs.messages.append(shown)
        if kind == "REGISTER":
            self.name = getattr(decoded, "nickname", "")
            obs.client_named += 1
            if self.prompted:  # the answer to SERVERSTATE
                self.prompted = self.my_turn = False
                if self.turn_mode is not None:
                    obs.answered[self.turn_mode] += 1
                    self.turn_mode = None
        if kind in STEPS:
            if self.await_retry:
                obs.retried_after_error = True
                self.await_retry = False
            self.moved(shown)
            if self.refuse_next and kind == "MOVE" and self.in_game and self.last_update:
                # meeple's reading (ERRATA): an illegal step gets INFO and a fresh UPDATE.
                self.refuse_next = False
                obs.injected_error = True
                self.await_retry = True
                self.my_turn = True
                info = ObjectStreamEncoder().encode(Info(self.name, "INVALID").encode())
                self._spawn(self.inject(info + self.last_update))
                return False
        return True

    def to_client(self, message: bytes, mode: str) -> None:
        if not message.startswith((b"yt", b"y|")):
            return
        head = 4 if message[1:2] == b"t" else 10
        try:
            decoded = decode(message[head:].decode("utf-8"))
        except (UnicodeDecodeError, MessageError):
            return
        me = self.name
        if isinstance(decoded, ServerState) and decoded.open and not self.in_game:
            # §2: SERVERSTATE asks the client to REGISTER (once per stay in the lobby)
            if not self.prompted and self.obs.client_named < self.obs.games:
                self.prompted = True
                self.turn_given(mode)
        elif isinstance(decoded, GodList | Players):
            if not self.in_game:
                self.in_game, self.ended = True, False
            if decoded.player == me:
                self.turn_given(mode)
        elif isinstance(decoded, Update):
            self.in_game, self.ended = True, False
            if decoded.player == me:
                self.last_update = message
                self.turn_given(mode)
            else:
                self.my_turn, self.turn_mode = False, None
        elif isinstance(decoded, Info) and self.in_game and not self.my_turn:
            self.obs.refused_by_server.append(f"INFO {decoded.information}")
            self.my_turn = True
        elif isinstance(decoded, EndGame):
            self.ended, self.in_game, self.my_turn, self.turn_mode = True, False, False, None
            self.obs.ends += 1
            if decoded.is_winner:
                self.obs.games_won += 1


async def _santorini_opponent(port: int, lexicon: Lexicon, obs: Observations) -> None:
    """The kit's player: registers (B) once the client has registered, plays from the
    server's lists (meeple's bot policy), and leaves the last game part-way."""
    rng = random.Random(23)
    client = await SantoriniClient.connect("127.0.0.1", port)
    try:
        for game in range(obs.games):
            leave = obs.games >= 2 and game == obs.games - 1
            async with asyncio.timeout(30):
                while obs.client_named <= game:
                    await asyncio.sleep(0.02)
            await asyncio.sleep(0.05)
            await client.register(SANTORINI_KIT_NAME)
            steps = 0
            while True:
                m = await client.receive()
                me = client.nickname
                if isinstance(m, EndGame):
                    break
                if isinstance(m, Info) and m.information == "NICKNAME":
                    raise SantoriniClientError("the kit's nickname was refused")
                command: ClientMessage | None = None
                if isinstance(m, GodList) and m.player == me and m.gods:
                    command = GodInit(me, rng.choice(m.gods).name)
                elif isinstance(m, Players) and m.player == me:
                    command = ChooseStarter(me, me)
                elif isinstance(m, Update) and client.my_turn(m):
                    if leave and steps >= 4:
                        obs.disconnect_game = True
                        return
                    command = choose(client, m, rng)
                    steps += 1
                if command is not None:
                    await client.send_if_allowed(command)
            # back in the lobby: SERVERSTATE follows the ENDGAME
            with contextlib.suppress(TimeoutError):
                while not isinstance(await asyncio.wait_for(client.receive(), 2), ServerState):
                    pass
    finally:
        await client.close()


CLIENT_KITS["santorini"] = ClientKit(
    "santorini",
    _SantoriniProxy,
    _santorini_opponent,
    "REGISTER (A) for 2 players without gods (or (B)), PING every 0.5 s, {games} game(s) "
    "on one connection (REGISTER again after each ENDGAME)",
)


# --- the checks -------------------------------------------------------------------------


def _info_retry(ctx: Context, obs: Observations) -> None:
    """The relay refuses the client's first MOVE with INFO and the UPDATE again (meeple's
    reading: the ERRATA). The spec says neither that a server answers an illegal step nor
    what a client does then (§4.1.2), so a client that does not step again differs from
    meeple's reading; it breaks no rule of the spec (issue 31)."""
    if not obs.injected_error:
        raise CannotTest("the client made no MOVE to refuse" + _why(obs))
    if not obs.retried_after_error:
        raise Differs("the client did not step again after INFO and a fresh UPDATE")
    ctx.passed()


register_checks(
    "santorini",
    [
        (
            "register-first",
            "2 Connection",
            Level.MUST,
            "the client's first message (PINGs aside) is REGISTER",
            first_message(lambda m: '"REGISTER"' in m),
        ),
        (
            "decodes",
            "4.2 Client commands",
            Level.MUST,
            "every line is one JSON envelope of a client message of the spec",
            DECODES,
        ),
        (
            "in-turn",
            "4.1.1 update",
            Level.MUST,
            "steps only when the last UPDATE (GODLIST/PLAYERSMESSAGE) named the client",
            IN_TURN,
        ),
        (
            "not-after-end",
            "4.1.3 endGame",
            Level.MUST,
            "no step outside a game or after ENDGAME",
            NOT_AFTER_END,
        ),
        (
            "legal",
            "4.2 Client commands",
            Level.SHOULD,
            "the server refuses none of the client's steps (it steps from the UPDATE's lists)",
            LEGAL,
        ),
        (
            "info-retry",
            "4.1.2 info",
            Level.SHOULD,
            "after INFO and a fresh UPDATE for its MOVE the client steps again",
            _info_retry,
            "AM27: meeple answers an illegal step with INFO and an UPDATE",
        ),
        (
            "split",
            "ERRATA (santorini-am27): framing",
            Level.MUST,
            "acts on messages delivered split (a byte per write)",
            SPLIT,
        ),
        (
            "coalesced",
            "ERRATA (santorini-am27): framing",
            Level.MUST,
            "acts on messages delivered coalesced: boundaries by the length, not by a pattern",
            COALESCED,
        ),
    ],
)


def _gaps(times: list[float]) -> list[float]:
    """The seconds between each two times in a row."""
    return [b - a for a, b in itertools.pairwise(times)]


@check(
    "santorini.client.heartbeat",
    "1 Introduction",
    Level.MUST,
    "the client is never silent for the heartbeat timeout (5 s)",
    "AM27: PING both ways every 0.5 s; 5 s of silence is a disconnect",
)
def _am_heartbeat(ctx: Context, obs: Observations) -> None:
    if len(obs.heard) < 2:
        raise CannotTest("the client sent too little to judge" + _why(obs))
    gaps = _gaps(obs.heard)
    ctx.expect(max(gaps) < HEARTBEAT_TIMEOUT, f"silent for {max(gaps):.1f} s")
    ctx.expect(bool(obs.pings), "the client never sent PING")


@check(
    "santorini.client.ping-interval",
    "1 Introduction",
    Level.SHOULD,
    "the client PINGs about every 0.5 s",
    "AM27: PING both ways every 0.5 s",
)
def _am_ping_interval(ctx: Context, obs: Observations) -> None:
    if len(obs.pings) < 3:
        raise CannotTest(f"{len(obs.pings)} PINGs: too few to judge the interval")
    median = statistics.median(_gaps(obs.pings))
    ctx.expect(median <= 2 * PING_INTERVAL, f"the median gap between PINGs is {median:.2f} s")


@check(
    "santorini.client.whole-game",
    "4.1.3 endGame",
    Level.MUST,
    "plays whole games to ENDGAME (--games), registering again after each",
)
def _am_games(ctx: Context, obs: Observations) -> None:
    games_ended(ctx, obs)
    ctx.expect(obs.client_named >= obs.games, f"registered {obs.client_named} times")


register_checks(
    "santorini",
    [
        (
            "other-leaves",
            "4.1.3 endGame",
            Level.MUST,
            "after ENDGAME naming the other player (it left) the client sends no step",
            quiet_after_leaving(LEAVES_LAST, "the kit's player never left a game", "steps"),
            "AM27: the others get ENDGAME naming the dropped player with isWinner false",
        )
    ],
)

"""The CMPN402 client kit: meeple's referee behind a grading relay, the kit's agent in the
other seat.

The relay passes the WebSocket handshake through and cuts both directions into frames
(:func:`meeple.check.cmpn402.ws_units`). What the agent sends is graded against the
spec's client state machine (meeple's :class:`~meeple.protocols.cmpn402.ClientSession`
fed with exactly what the agent received): NAME first, moves only when THINKING,
NO_CHALLENGE/CHALLENGE only in a challenge window, binary messages only. The referee's
frames are delivered coalesced (a ping frame joined in front, so that the message that
matters is the second frame of a TCP write: issue 23's agent "loses one of two frames
that arrive together"), split, or paced. The relay refuses the agent's first PLAY once
with INVALID and its times (the spec's AWAIT_PLAY_RESPONSE → THINKING) and expects
another move. With ``--games`` ≥ 2 the kit's agent drops its connection part-way through
the last game and comes back: the agent gets END reason 2, must stay connected and ready
(spec, "Disconnection"), and plays the resumed game to its end.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace

from meeple.check.clients import (
    CLIENT_KITS,
    COALESCED,
    DECODES,
    IN_TURN,
    MODES,
    NOT_AFTER_END,
    SPLIT,
    ClientKit,
    Observations,
    _need_game,
    _Proxy,
    _why,
    check,
    first_message,
    games_ended,
    need_leave,
    register_checks,
    retried,
    said_once,
)
from meeple.check.cmpn402 import ws_frame, ws_frame_parts, ws_units
from meeple.check.core import CannotTest, Context, Level
from meeple.clients.cmpn402 import BuiltinAgent, play
from meeple.games.scrabble.lexicon import Lexicon
from meeple.protocols.cmpn402 import (
    ClientMessage,
    ClientSession,
    ClientState,
    EndMessage,
    EndReason,
    Invalid,
    LocalProtocolError,
    NameRequest,
    PlayMove,
    PlayNotice,
    ProtocolError,
    Start,
    decode_client,
)
from meeple.server.config import ServerConfig

__all__ = ["WsProxy"]

PING_FRAME = ws_frame(9, b"kit")
# Moves: what a client sends in THINKING; answers: in AWAIT_AGENT_CHALLENGE.
MOVES = {"PassMove", "ExchangeMove", "PlayMove"}
ANSWERS = {"NoChallenge", "ChallengeMove"}


class WsProxy(_Proxy):
    """The relay of a WebSocket protocol: the handshake passed through, then frames both
    ways; coalesced deliveries get a ping frame joined in front of the frames that
    matter (a client that handles one frame per read loses them)."""

    def cut_client(self, buffer: bytes) -> tuple[list[bytes], bytes]:
        return ws_units(buffer)  # the HTTP upgrade, then frames

    def cut_server(self, buffer: bytes) -> tuple[list[bytes], bytes]:
        return ws_units(buffer)

    async def _deliver(self, writer: asyncio.StreamWriter, messages: list[bytes]) -> None:
        if MODES[self.batch % len(MODES)] == "coalesced":
            # The message that matters comes second (after the HTTP head, if any).
            at = 0 if ws_frame_parts(messages[0]) else 1
            messages = [*messages[:at], PING_FRAME, *messages[at:]]
        await super()._deliver(writer, messages)


class _Cmpn402Proxy(WsProxy):
    def __init__(self, obs: Observations, server_port: int) -> None:
        super().__init__(obs, server_port)
        self.session = ClientSession()
        self.times = (0, 0)
        # The agent was to act when END came: what it sends may cross END on the wire
        # (the spec's race, not the agent's fault). The agent's state from just before
        # END goes on taking what it sends; what that state allows is not graded. It may
        # be more than one message: NO_CHALLENGE, then at once its own PLAY (THINKING).
        self.before_end: ClientSession | None = None

    def opened(self) -> None:
        # Spec, Client State Machine: "Disconnection from Server. Goto: INIT": a new
        # connection starts the client's machine again (NAME asked and answered anew).
        self.session = ClientSession()
        self.before_end = None

    # -- grading ------------------------------------------------------------------------

    def from_client(self, message: bytes) -> bool:
        obs = self.obs
        parts = ws_frame_parts(message)
        if parts is None:
            return True  # the HTTP upgrade
        opcode, payload = parts
        if opcode == 1:
            obs.undecodable.append(f"a text frame: {payload[:40]!r}")
            return True
        if opcode != 2:
            return True  # ping, pong, close: the WebSocket library's business
        obs.heard.append(asyncio.get_running_loop().time())
        try:
            decoded = decode_client(payload)
        except ProtocolError as e:
            obs.undecodable.append(f"{payload[:40]!r}: {e}")
            return True
        kind = type(decoded).__name__
        shown = f"{kind} {payload[:24].hex()}"
        if obs.first is None:
            obs.first = kind
        obs.messages.append(shown)
        if kind == "Name":
            obs.client_named += 1
            if self.turn_mode is not None:  # the answer to NAME
                obs.answered[self.turn_mode] += 1
                self.my_turn, self.turn_mode = False, None
        state = self.session.state
        try:
            self.session.send(decoded)
        except LocalProtocolError:
            if self._crossed_end(decoded):
                return True
            if kind == "Name":
                # Client State Machine: NAME only in INIT, as the answer to the server's
                # NAME; the agent was named on this connection already.
                obs.renamed.append(f"{shown} in {state.value}")
            if kind in ANSWERS:
                obs.framing.append(f"{kind} in {state.value}")  # no window open
            elif kind in MOVES:
                self.moved(shown)  # graded as out of turn / after the end
            return True
        # In the state machine's turn: the session accepted it (the agent is in step).
        self.before_end = None
        if kind in ANSWERS:
            obs.skips_answered += 1  # challenge windows answered
        if kind in ANSWERS or kind in MOVES:
            self.my_turn = True
            if self.await_retry and kind in MOVES:
                obs.retried_after_error = True
                self.await_retry = False
            self.moved(shown)
            if self.refuse_next and isinstance(decoded, PlayMove):
                # Spec, AWAIT_PLAY_RESPONSE: INVALID (with the times) sends it back to
                # THINKING; the kit refuses the first PLAY once and wants another move.
                self.refuse_next = False
                obs.injected_error = True
                self.await_retry = True
                invalid = Invalid(*self.times).encode()
                self.session.receive(invalid)
                self.turn_given("paced")
                self._spawn(self.inject(ws_frame(2, invalid)))
                return False
        if self.session.state is ClientState.THINKING:
            # After its own NO_CHALLENGE (or a CHALLENGE's answer) the agent moves on.
            self.my_turn = True
            self.turn_since = asyncio.get_running_loop().time()
        return True

    def _crossed_end(self, message: ClientMessage) -> bool:
        """Whether the agent sent ``message`` before it could have read END: its state
        from before END allows it (and moves on with it); else crossing is over."""
        if self.before_end is None or type(message).__name__ not in MOVES | ANSWERS:
            return False
        try:
            self.before_end.send(message)
        except LocalProtocolError:
            self.before_end = None
            return False
        return True

    def to_client(self, message: bytes, mode: str) -> None:
        parts = ws_frame_parts(message)
        if parts is None or parts[0] != 2:
            return
        before = self.session.state
        try:
            m = self.session.receive(parts[1])
        except ProtocolError:
            return
        if isinstance(m, EndMessage):
            self.before_end = None
            if before is ClientState.AWAIT_AGENT_CHALLENGE:
                # END closed the window: no answer is owed (one that crossed END is the
                # spec's race), so it is not a window to grade.
                self.obs.skips_told -= 1
            if before in (ClientState.THINKING, ClientState.AWAIT_AGENT_CHALLENGE):
                self.before_end = ClientSession()
                self.before_end.state = before
        if hasattr(m, "player_time") and hasattr(m, "total_time"):
            self.times = (m.player_time, m.total_time)
        obs = self.obs
        if isinstance(m, NameRequest):
            self.turn_given(mode)  # the agent must answer with its NAME
            return
        if isinstance(m, Start):
            self.in_game, self.ended = True, False
            if all(row == "." * 15 for row in m.board):
                obs.kit_table_game += 1  # a new game (a resumed one has tiles)
        elif isinstance(m, PlayNotice):
            obs.skips_told += 1  # challenge windows opened
        elif isinstance(m, EndMessage):
            if self.turn_mode is not None and m.reason is EndReason.CONNECTION_ERROR:
                # The drop took the turn away before the agent could use it (the kit's
                # own drop arriving just after the turn, issue 31): not a turn it owed.
                # (END 1 on a turn never answered stays counted: the agent hung.)
                obs.turns[self.turn_mode] -= 1
            self.my_turn, self.turn_mode = False, None
            if m.reason is EndReason.CONNECTION_ERROR:
                # The game waits to resume: the agent stays ready. Only the kit's planned
                # drop is graded as one: an END 2 once the cutter has cut
                # (``obs.disconnect_game``); one before it, of the kit's agent shutting
                # down or failing, is not (issue 31).
                if obs.disconnect_game:
                    obs.drop_told = True
                return
            self.ended, self.in_game = True, False
            obs.ends += 1
            obs.games_won += 1
            if m.reason is EndReason.TIME_ENDED:
                obs.out_of_turn.append("the game ended on time (END reason 1)")
            return
        if self.session.state in (ClientState.THINKING, ClientState.AWAIT_AGENT_CHALLENGE):
            self.turn_given(mode)  # it must move, or answer the challenge window
        else:
            self.my_turn, self.turn_mode = False, None


# --- the kit's agent --------------------------------------------------------------------


class _Cut:
    """A TCP pipe in front of the referee for the kit's agent, which the kit can cut (a
    dropped connection the agent recovers from by itself, spec "Disconnection")."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    def cut(self) -> None:
        for w in self.writers:
            with contextlib.suppress(Exception):
                w.transport.abort()
        self.writers.clear()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_r, up_w = await asyncio.open_connection("127.0.0.1", self.upstream)
        self.writers += [writer, up_w]

        async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                while data := await r.read(65536):
                    w.write(data)
                    await w.drain()

        await asyncio.wait(
            [asyncio.create_task(pipe(reader, up_w)), asyncio.create_task(pipe(up_r, writer))],
            return_when=asyncio.FIRST_COMPLETED,
        )
        for w in (writer, up_w):
            with contextlib.suppress(Exception):
                w.close()

    def close(self) -> None:
        self.cut()
        if self.server is not None:
            self.server.close()


async def _cmpn402_opponent(port: int, lexicon: Lexicon, obs: Observations) -> None:
    """meeple's agent through a pipe the kit cuts once, part-way through the last game."""
    pipe = _Cut(port)
    await pipe.start()

    async def cutter() -> None:
        if obs.games < 2:
            return
        while obs.kit_table_game < obs.games:  # the last game's START
            await asyncio.sleep(0.02)
        # Part-way through the last game: a few of the client's messages in.
        base = len(obs.messages)
        while len(obs.messages) < base + 3:
            await asyncio.sleep(0.02)
        obs.disconnect_game = True  # the planned drop: its END 2 is the one to grade
        pipe.cut()

    task = asyncio.ensure_future(cutter())
    try:
        await play(
            f"ws://127.0.0.1:{pipe.port}/",
            "kitbot",
            BuiltinAgent(lexicon),
            games=obs.games,
            retry_delay=0.1,
        )
    finally:
        task.cancel()
        pipe.close()


def _configure(config: ServerConfig, games: int) -> ServerConfig:
    # The series is the --games; a short challenge window keeps a run short.
    return replace(config, cmpn402=replace(config.cmpn402, games=games, challenge_time=5.0))


CLIENT_KITS["cmpn402"] = ClientKit(
    "cmpn402",
    _Cmpn402Proxy,
    _cmpn402_opponent,
    "a WebSocket (ws://HOST:PORT/), NAME when asked, then {games} game(s) in a row; "
    "stay connected after END reason 2 (the other agent comes back)",
    _configure,
)


# --- the checks -------------------------------------------------------------------------

register_checks(
    "cmpn402",
    [
        (
            "name-first",
            "Client State Machine: INIT",
            Level.MUST,
            "the agent's first message is NAME (0 + its name in UTF-8)",
            first_message(lambda m: m == "Name"),
        ),
        (
            "decodes",
            "Websockets",
            Level.MUST,
            "every message is a binary message of the spec's client layouts",
            DECODES,
        ),
        (
            "in-turn",
            "Client State Machine: THINKING",
            Level.MUST,
            "PASS/EXCHANGE/PLAY only when THINKING (the spec's client state machine)",
            IN_TURN,
        ),
        (
            "not-after-end",
            "Client State Machine: * ANY",
            Level.MUST,
            "no move after END (a referee must not score it; an agent must not send it)",
            NOT_AFTER_END,
        ),
        (
            "invalid-retry",
            "Client State Machine: AWAIT_PLAY_RESPONSE",
            Level.MUST,
            "after INVALID for its PLAY the agent moves again (THINKING)",
            retried("PLAY", "INVALID"),
        ),
        (
            "split",
            "Websockets",
            Level.MUST,
            "acts on frames delivered split (a byte per write)",
            SPLIT,
        ),
        (
            "coalesced",
            "Websockets",
            Level.MUST,
            "acts on a frame that arrives in one TCP write together with another",
            COALESCED,
        ),
    ],
)


@check(
    "cmpn402.client.window",
    "Client State Machine: AWAIT_AGENT_CHALLENGE",
    Level.MUST,
    "NO_CHALLENGE/CHALLENGE only in a challenge window",
)
def _cm_window(ctx: Context, obs: Observations) -> None:
    _need_game(obs)
    ctx.expect(not obs.framing, f"outside a window: {obs.framing[:3]}")


register_checks(
    "cmpn402",
    [
        (
            "name-once",
            "Client State Machine: INIT",
            Level.MUST,
            "NAME only in INIT, answering the server's NAME: never again once named",
            said_once("the agent sent nothing", "NAME again"),
        )
    ],
)


@check(
    "cmpn402.client.challenge-answered",
    "Scenarios: Play tiles",
    Level.SHOULD,
    "every PLAY of the other agent is answered with NO_CHALLENGE or CHALLENGE in time",
)
def _cm_answered(ctx: Context, obs: Observations) -> None:
    if obs.skips_told == 0:
        raise CannotTest("the kit's agent made no play" + _why(obs))
    ctx.expect(
        obs.skips_answered >= obs.skips_told,
        f"{obs.skips_answered} answers for {obs.skips_told} challenge windows",
    )


register_checks(
    "cmpn402",
    [
        (
            "whole-game",
            "Scenarios: Ending a game",
            Level.MUST,
            "plays whole games to END (--games)",
            games_ended,
        )
    ],
)


@check(
    "cmpn402.client.resume",
    "Scenarios: Disconnection",
    Level.MUST,
    "after END reason 2 the agent stays connected and plays the resumed game to its end",
)
def _cm_resume(ctx: Context, obs: Observations) -> None:
    need_leave(obs, "the kit's agent drops in the last game", "the kit's agent did not drop")
    if not obs.drop_told:
        # Cut too late (the last game was over) or the END 2 never sent: nothing of the
        # spec's "Disconnection" happened to the agent, so nothing to grade (issue 31).
        raise CannotTest(
            "the kit's agent dropped, but no END reason 2 reached the agent after it "
            "(the drop did not happen as planned)" + _why(obs)
        )
    if obs.kit_player_failed and obs.ends < obs.games:
        raise CannotTest("the kit's agent failed, so the game could not resume" + _why(obs))
    ctx.expect(obs.connections == 1, f"the agent connected {obs.connections} times")
    games_ended(ctx, obs)

"""The meeple-web/1 client kit: meeple's web listener behind a grading relay, for teams
who write their own browser client (``docs/protocols/web.md``).

The client says hello, creates a 2-seat Spectrangle table and plays; the kit's own
player, a Spectrangle client over TCP (Spectrangle ``request 2`` sits at the oldest open
table of two, docs/server.md "Tables"), joins it once the client is seated. The relay
(:class:`~meeple.check.cmpn402_client.WsProxy`) grades what the client sends: hello
first, every message one the protocol defines (meeple's own decoder, which refuses
unknown fields), ``play`` only when its last ``seat`` view gives it the turn and never
once the game is over; it refuses the client's first ``play`` once with ``error``
``illegal`` and expects another; it delivers the server's frames coalesced (a ping frame
in front), split and paced. With ``--games 2`` the kit's player leaves the last game
part-way (the game is abandoned) and the client must play no more in it.
"""

from __future__ import annotations

import asyncio
import json

from meeple.check.clients import (
    CLIENT_KITS,
    COALESCED,
    DECODES,
    IN_TURN,
    LEGAL,
    NOT_AFTER_END,
    SPLIT,
    ClientKit,
    Observations,
    _spectrangle_opponent,
    first_message,
    games_finished,
    quiet_after_leaving,
    register_checks,
    retried,
)
from meeple.check.cmpn402 import ws_frame, ws_frame_parts
from meeple.check.cmpn402_client import WsProxy
from meeple.check.core import Level
from meeple.games.scrabble.lexicon import Lexicon
from meeple.protocols.web.errors import RemoteProtocolError
from meeple.protocols.web.messages import decode

__all__: list[str] = []

ILLEGAL = json.dumps(
    {"type": "error", "code": "illegal", "message": "the kit refuses this move once"}
).encode()


class _WebProxy(WsProxy):
    def __init__(self, obs: Observations, server_port: int) -> None:
        super().__init__(obs, server_port)
        self.name = ""

    def from_client(self, message: bytes) -> bool:
        obs = self.obs
        parts = ws_frame_parts(message)
        if parts is None or parts[0] not in (1, 2):
            return True  # the upgrade, ping, pong, close
        payload = parts[1]
        obs.heard.append(asyncio.get_running_loop().time())
        try:
            decoded = decode(payload)
        except RemoteProtocolError as e:
            obs.undecodable.append(f"{payload[:60]!r}: {e}")
            return True
        text = payload.decode("utf-8", "replace")
        kind = json.loads(text).get("type", "")
        if obs.first is None:
            obs.first = kind
        obs.messages.append(text[:120])
        if kind in ("create", "sit"):
            self.name = str(getattr(decoded, "name", ""))
        if kind == "play":
            if self.await_retry:
                obs.retried_after_error = True
                self.await_retry = False
            self.moved(text[:120])
            if self.refuse_next and self.in_game:
                # "An illegal move is answered to its sender only" (error illegal): the
                # kit refuses the first play once; the client must play again.
                self.refuse_next = False
                obs.injected_error = True
                self.await_retry = True
                self.my_turn = True
                self._spawn(self.inject(ws_frame(1, ILLEGAL)))
                return False
        return True

    def to_client(self, message: bytes, mode: str) -> None:
        parts = ws_frame_parts(message)
        if parts is None or parts[0] != 1:
            return
        try:
            m = json.loads(parts[1])
        except ValueError:
            return
        kind = m.get("type") if isinstance(m, dict) else None
        obs = self.obs
        if kind == "seated":
            obs.client_named += 1  # the kit's player may sit down now
        elif kind == "seat":
            data = m.get("data") or {}
            status = data.get("status")
            self.in_game = True
            if status in ("finished", "abandoned"):
                if not self.ended:
                    self.ended, self.my_turn, self.turn_mode = True, False, None
                    obs.ends += 1
                    if status == "finished":
                        obs.games_won += 1
                return
            self.ended = False
            players = data.get("players") or []
            you, turn = data.get("you"), data.get("turn")
            if isinstance(turn, int) and turn == you and players:
                self.turn_given(mode)
            else:
                self.my_turn, self.turn_mode = False, None
        elif kind == "error" and m.get("code") == "illegal" and self.in_game:
            obs.refused_by_server.append(json.dumps(m)[:120])
            self.my_turn = True


async def _web_opponent(port: int, lexicon: Lexicon, obs: Observations) -> None:
    """meeple's Spectrangle player, at the browser's table once the browser sits."""

    async def seated(game: int) -> None:
        async with asyncio.timeout(60):
            while obs.client_named <= game:
                await asyncio.sleep(0.02)

    await _spectrangle_opponent(port, lexicon, obs, before=seated)


CLIENT_KITS["web"] = ClientKit(
    "web",
    _WebProxy,
    _web_opponent,
    "a WebSocket to ws://HOST:PORT/ws: hello, then create a Spectrangle table "
    '({{"game":"spectrangle","variant":"standard","size":2}}) and play, {games} time(s)',
    opponent_listener="spectrangle",
)


register_checks(
    "web",
    [
        (
            "hello-first",
            "Messages",
            Level.MUST,
            "the client's first message is hello",
            first_message(lambda m: m == "hello"),
        ),
        (
            "decodes",
            "Messages",
            Level.MUST,
            "every message is one the protocol defines, with no unknown field",
            DECODES,
        ),
        (
            "in-turn",
            "Playing",
            Level.MUST,
            "play only when its last seat view gives it the turn",
            IN_TURN,
        ),
        (
            "not-after-end",
            "Playing",
            Level.MUST,
            "no play once the game is finished or abandoned",
            NOT_AFTER_END,
        ),
        ("legal", "Playing", Level.SHOULD, "the server refuses none of its plays", LEGAL),
        (
            "illegal-retry",
            "Playing",
            Level.MUST,
            "after error illegal for its play the client plays again",
            retried("play", "error illegal"),
        ),
        ("split", "Framing and limits", Level.MUST, "acts on messages delivered split", SPLIT),
        (
            "coalesced",
            "Framing and limits",
            Level.MUST,
            "acts on a message that arrives in one TCP write together with another frame",
            COALESCED,
        ),
        (
            "whole-game",
            "Playing",
            Level.MUST,
            "plays whole games to the end (--games)",
            games_finished(left=True),
        ),
    ],
)


register_checks(
    "web",
    [
        (
            "other-leaves",
            "Playing",
            Level.MUST,
            "after the other player leaves (the game abandoned) it plays no more",
            quiet_after_leaving(
                "the kit's player leaves the last game",
                "the kit's player never left a game",
                "plays",
            ),
        )
    ],
)

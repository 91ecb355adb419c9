"""The kit against a target that sends anything: it never crashes, never hangs, never
passes a check by default, and its reports stay well-formed (hypothesis)."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meeple.check import run_server_kit
from meeple.check.core import Status
from meeple.check.report import to_json, to_junit, to_text
from meeple.games.scrabble.lexicon import Lexicon

pytestmark = pytest.mark.slow  # whole games over loopback, a few seconds each


TOKENS = [
    b"\x1e",
    b"\x1f",
    b"\r\n",
    b"\n",
    b"\x00",
    b"\xff\xfe",
    b"WELCOME\x1f",
    b"ERROR\x1fE001",
    b"INFORMQUEUE\x1f2\x1f2",
    b"STARTGAME\x1fa\x1fb",
    b"NEWTILES\x1fAB!",
    b"NOTIFYTURN\x1f1\x1f",
    b"GAMEOVER\x1fWIN\x1f",
    b"HELLO 1.0.1,a,b/c,d",
    b"OK ",
    b"NOK",
    b"USERJOIN x",
    b"STARTING",
    b"BOARDPUSH",
    b"welcome\n",
    b"tiles a RRR6 null null null b WWW1 null null null turn a\n",
    b"game finished leaderboard a 3 b 1\n",
    b"(A,1) ",
    b"(0,0) " * 15,
    b"TILES ABCDEFG",
    b"TURN ",
    b"SCORE 9 x",
    b"WINNER 1 x",
    b"\xac\xed\x00\x05",
    b"yt\x00\x10",
    b"yt\xff\xff",
    b"|\x00\x00\x00\x00\x00\x00\x00\x05",
    b'{"type":"SERVERSTATE","message":"{\\"open\\":true,\\"active\\":true}"}',
    b'{"type":"PLAYERSMESSAGE","message":{"players":{"a":"Atheist"},"player":"a"}}\n',
    b'{"type":"UPDATE","message":{"player":"a","boardUpdate":{}}}\n',
    b'{"type":"ENDGAME","message":{"player":"a","isWinner":true}}\n',
    b'{"type":"PING","message":"{}"}\n',
]
blob = st.lists(st.one_of(st.binary(max_size=40), st.sampled_from(TOKENS)), max_size=30).map(
    b"".join
)

CHECKS = {
    "twente": [
        "twente.server.announce",
        "twente.server.e001",
        "twente.server.coalesced",
        "twente.server.startgame",
        "twente.server.gameover-win",
        "twente.server.max-length",
        "twente.server.delimiters-strict",
        "twente.server.e010",
    ],
    "spectrangle": [
        "spectrangle.server.welcome",
        "spectrangle.server.invalid-name",
        "spectrangle.server.tiles",
        "spectrangle.server.leaderboard",
        "spectrangle.server.coalesced",
    ],
    "santorini": [
        "santorini.server.serverstate",
        "santorini.server.object-stream",
        "santorini.server.ping",
        "santorini.server.register-b",
        "santorini.server.nickname",
        "santorini.server.endgame-win",
        "santorini.server.coalesced",
        "santorini.server.unicode-length",
    ],
    "clarkson": [
        "clarkson.server.hello-grammar",
        "clarkson.server.ok",
        "clarkson.server.place",
        "clarkson.server.winner",
        "clarkson.server.userjoin-newcomer",
        "clarkson.server.quit",
        "clarkson.server.pass-twice",
    ],
}


async def _serve_noise(first: bytes, replies: list[bytes], close: bool) -> asyncio.Server:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            writer.write(first)
            for reply in replies:
                if not await reader.read(65536):
                    break
                writer.write(reply)
                await writer.drain()
            if not close:
                await reader.read()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    protocol=st.sampled_from(sorted(CHECKS)),
    first=blob,
    replies=st.lists(blob, max_size=6),
    close=st.booleans(),
)
def test_the_kit_survives_any_bytes(
    protocol: str, first: bytes, replies: list[bytes], close: bool, gcide: Lexicon
) -> None:
    """Random bytes from the target: every check ends in time with a result, none is a
    kit error, none passes a rule the noise did not follow, reports render and parse."""

    async def scenario() -> None:
        server = await _serve_noise(first, replies, close)
        port = server.sockets[0].getsockname()[1]
        try:
            results = await asyncio.wait_for(
                run_server_kit(
                    protocol, "127.0.0.1", port, lexicon=gcide, wait=0.1, only=CHECKS[protocol]
                ),
                60,
            )
        finally:
            server.close()
        assert len(results) == len(CHECKS[protocol])
        assert not [r for r in results if r.kit_error], [r.detail for r in results if r.kit_error]
        # Noise cannot play a whole game: those checks never pass.
        for r in results:
            if r.check.id.endswith(
                (
                    "gameover-win",
                    "winner",
                    "place",
                    "startgame",
                    "leaderboard",
                    "endgame-win",
                    "register-b",
                    "coalesced",
                )
            ):
                assert r.status is not Status.PASS, r
        json.loads(to_json("fuzz", results))
        ET.fromstring(to_junit("fuzz", results).split("\n", 1)[1])
        assert to_text("fuzz", results)

    asyncio.run(scenario())


WS_CHECKS = {
    "cmpn402": [
        "cmpn402.server.name",
        "cmpn402.server.start",
        "cmpn402.server.pass",
        "cmpn402.server.late-move",
        "cmpn402.server.end-race",
        "cmpn402.server.coalesced",
    ],
    "web": [
        "web.server.hello",
        "web.server.lobby",
        "web.server.seated",
        "web.server.play",
        "web.server.coalesced",
        "web.server.chat",
        "web.server.too-many",
        "web.server.scrabble-play",
        "web.server.santorini-legal",
    ],
}
# Checks that need a whole exchange the noise cannot hold up.
NEVER_PASS = (
    "start",
    "pass",
    "late-move",
    "end-race",
    "coalesced",
    "hello",
    "lobby",
    "seated",
    "play",
    "chat",
    "too-many",
    "scrabble-play",
    "santorini-legal",
)
WS_TOKENS = [
    b"\x00",
    b"\x01\x01",
    b"\x01\x02",
    b"\x02",
    b"\x04",
    b"\x09",
    b"\x0a\x00",
    bytes(8),
    b'{"type":"welcome","protocol":"meeple-web/1"}',
    b'{"type":"pong","id":5}',
    b'{"type":"lobby","uid":null,"seq":"1","data":{}}',
    b'{"type":"seated","table":"t","name":"x"}',
    b'{"type":"error","code":"not-now"}',
]
frames = st.lists(
    st.one_of(
        st.binary(max_size=300),
        st.lists(st.sampled_from(WS_TOKENS), max_size=6).map(b"".join),
    ),
    max_size=8,
)


@settings(
    max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    protocol=st.sampled_from(sorted(WS_CHECKS)),
    messages=frames,
    text=st.booleans(),
    close=st.booleans(),
)
def test_the_websocket_kits_survive_any_frames(
    protocol: str, messages: list[bytes], text: bool, close: bool, gcide: Lexicon
) -> None:
    """A WebSocket server sending random binary (or text) messages to every client of
    the CMPN402 or web kit: no check is a kit error, none of the checks that need a
    real exchange passes, reports render."""
    from websockets.asyncio.server import ServerConnection, serve

    async def handler(ws: ServerConnection) -> None:
        for m in messages:
            await ws.send(m.decode("latin-1") if text else m)
        if close:
            await ws.close(1011)
        else:
            await ws.wait_closed()

    async def scenario() -> None:
        async with serve(handler, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            results = await asyncio.wait_for(
                run_server_kit(
                    protocol,
                    "127.0.0.1",
                    port,
                    lexicon=gcide,
                    wait=0.1,
                    only=WS_CHECKS[protocol],
                    options={"uri": f"ws://127.0.0.1:{port}/"},
                ),
                60,
            )
        assert len(results) == len(WS_CHECKS[protocol])
        assert not [r for r in results if r.kit_error], [r.detail for r in results if r.kit_error]
        for r in results:
            if r.check.id.rsplit(".", 1)[-1] in NEVER_PASS:
                assert r.status is not Status.PASS, r
        json.loads(to_json("fuzz", results))
        ET.fromstring(to_junit("fuzz", results).split("\n", 1)[1])

    asyncio.run(scenario())

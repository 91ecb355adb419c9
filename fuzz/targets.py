"""Fuzz targets: every sans-I/O protocol's parsers and sessions fed arbitrary bytes.

A target is a function ``one(data)`` that drives one protocol with ``data`` and returns
normally, or raises the protocol's own error type (:attr:`Target.allowed`): anything
else is a bug. The first byte of ``data`` picks the side and the chunking
(:func:`split`): even, the server session with a minimal server behind it that answers
what the client asks (welcome, a game start, a verdict) so the fuzzer reaches the
in-game states; odd, the client session (after its opening line) reading server bytes.

:data:`TARGETS` is the registry ``fuzz/run.py`` reads; adding a protocol (the web one)
is one line there. :func:`seeds` collects each protocol's seed corpus from the test
suite itself: every ``bytes`` literal in ``tests/protocols/<name>/`` (the byte-exact
sessions the tests replay), plus the shared transcripts' lines when present.
"""

from __future__ import annotations

import ast
import contextlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from meeple.games.spectrangle import TILE_SET
from meeple.protocols import clarkson, cmpn402, santorini, spectrangle, twente
from meeple.protocols.santorini import messages as am27
from meeple.protocols.santorini import session as am27_session

ROOT = Path(__file__).resolve().parent.parent
CHUNKS = (0, 1, 2, 3, 5, 8, 13, 64)  # 0: the whole input at once


def split(data: bytes) -> tuple[bool, list[bytes]]:
    """``(client_side, chunks)`` from the mode byte ``data[0]`` and the rest."""
    if not data:
        return False, []
    mode, body = data[0], data[1:]
    size = CHUNKS[(mode >> 1) & 7]
    if size == 0:
        return bool(mode & 1), [body]
    return bool(mode & 1), [body[i : i + size] for i in range(0, len(body), size)]


# --- Twente -----------------------------------------------------------------------------


def twente_one(data: bytes) -> None:
    client_side, chunks = split(data)
    if client_side:
        client = twente.ClientSession()
        client.send(twente.Announce("ann"))
        for chunk in chunks:
            client.receive_data(chunk)
        client.receive_eof()
        return
    server = twente.ServerSession()
    for chunk in chunks:
        pending = server.receive_data(chunk)
        while pending:
            event = pending.pop(0)
            reply: list[twente.ServerMessage] = []
            if isinstance(event, twente.Join):
                reply = [twente.Welcome(event.name)]
            elif isinstance(event, twente.Enqueue):
                name = server.name or "ann"
                reply = [
                    twente.InformQueue(2, 2),
                    twente.StartGame((name, "zed")),
                    twente.NotifyTurn(True, name),
                ]
            for message in reply:
                _try(lambda m=message: server.send(m), twente.LocalProtocolError)
            if reply:
                pending += server.receive_data(b"")
    server.receive_eof()


# --- Clarkson ---------------------------------------------------------------------------


def clarkson_one(data: bytes) -> None:
    client_side, chunks = split(data)
    if client_side:
        client = clarkson.ClientSession()
        for chunk in chunks:
            client.receive_data(chunk)
        client.receive_eof()
        return
    server = clarkson.ServerSession()
    server.name = "10.0.0.1"
    server.send(clarkson.meeple_hello("Linux"))
    for chunk in chunks:
        for event in server.receive_data(chunk):
            if isinstance(event, clarkson.Ready):
                for message in (
                    clarkson.Starting(),
                    clarkson.Tiles("AEINRST"),
                    clarkson.Turn(server.name or "x"),
                ):
                    _try(lambda m=message: server.send(m), clarkson.LocalProtocolError)
    server.receive_eof()


# --- CMPN402 (one WebSocket message per length-prefixed record) -------------------------


def records(body: bytes) -> Iterator[bytes]:
    """CMPN402 inputs are messages, not a stream: ``len, bytes, len, bytes, ...``."""
    i = 0
    while i < len(body):
        n = body[i]
        yield body[i + 1 : i + 1 + n]
        i += 1 + n


def cmpn402_one(data: bytes) -> None:
    if not data:
        return
    mode, body = data[0], data[1:]
    if mode & 1:
        client = cmpn402.ClientSession()
        for message in records(body):
            _try(lambda m=message: client.receive(m), cmpn402.ProtocolError)
        return
    machine = cmpn402.ServerMachine()
    states = list(cmpn402.ServerState)
    machine.state = states[(mode >> 1) % len(states)]
    named, on_turn = bool(mode & 0x40), bool(mode & 0x80)
    for message in records(body):
        _try(
            lambda m=message: machine.receive(m, named=named, on_turn=on_turn),
            cmpn402.ProtocolError,
        )


# --- AM27 -------------------------------------------------------------------------------


def santorini_one(data: bytes) -> None:
    client_side, chunks = split(data)
    if client_side:
        client = am27_session.ClientSession()
        for chunk in chunks:
            client.receive_data(chunk)
        client.receive_eof()
        return
    server = am27_session.ServerSession(framing="lines")
    server.send(am27.ServerState(True, False))
    for chunk in chunks:
        for event in server.receive_data(chunk):
            nick = server.nickname or "ann"
            reply: list[am27.ServerMessage] = []
            if isinstance(event, am27.Register):
                reply = [am27.Players(nick, ((nick, "Atheist"), ("zed", "Atheist")))]
            elif isinstance(event, am27.ChooseStarter):
                reply = [am27.Update(nick, can_place_worker=True)]
            elif isinstance(event, am27.Move | am27.Build | am27.WorkerInit | am27.Pass):
                reply = [am27.Update(nick, can_pass=True)]
            elif isinstance(event, santorini.Rejected):
                reply = [am27.Info(nick, event.code.value)]
            for message in reply:
                _try(lambda m=message: server.send(m), am27_session.LocalProtocolError)
    server.receive_eof()


# --- Spectrangle ------------------------------------------------------------------------


def spectrangle_one(data: bytes) -> None:
    client_side, chunks = split(data)
    if client_side:
        client = spectrangle.ClientSession()
        client.send(spectrangle.Connect("ann", ("chat",)))
        for chunk in chunks:
            client.receive_data(chunk)
        return
    server = spectrangle.ServerSession()
    for chunk in chunks:
        pending = server.receive_data(chunk)
        while pending:
            event = pending.pop(0)
            name = server.name or "ann"
            reply: list[spectrangle.ServerMessage] = []
            if isinstance(event, spectrangle.Connect):
                reply = [server.welcome()]
            elif isinstance(event, spectrangle.Request):
                players = (name, "zed")
                hands = tuple(
                    spectrangle.Hand(p, TILE_SET[i : i + 4]) for i, p in ((0, name), (4, "zed"))
                )
                reply = [
                    spectrangle.StartWith(players),
                    spectrangle.Order(players),
                    spectrangle.Tiles(hands, name),
                ]
            elif isinstance(event, spectrangle.Place | spectrangle.Skip | spectrangle.Exchange):
                reply = [spectrangle.ErrorReply(spectrangle.ErrorWord.INVALID_MOVE)]
            for message in reply:
                _try(lambda m=message: server.send(m), spectrangle.LocalProtocolError)
            if reply:
                pending += server.next_events()


def _try(call: Callable[[], object], allowed: type[BaseException]) -> None:
    """Run one step whose refusal is the protocol's own error (not a bug)."""
    with contextlib.suppress(allowed):
        call()


# --- the registry -----------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One fuzz target: ``one(data)``, the exceptions that are the protocol's own, and
    where its seeds come from (test directory, transcript files)."""

    name: str
    one: Callable[[bytes], None]
    allowed: tuple[type[BaseException], ...]
    tests: str
    transcripts: tuple[str, ...] = ()
    records: bool = False  # seeds are single messages (CMPN402), not stream bytes


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("twente", twente_one, (twente.ProtocolError,), "tests/protocols/twente"),
        Target("clarkson", clarkson_one, (clarkson.ProtocolError,), "tests/protocols/clarkson"),
        Target(
            "cmpn402",
            cmpn402_one,
            (cmpn402.ProtocolError,),
            "tests/protocols/cmpn402",
            records=True,
        ),
        Target(
            "santorini",
            santorini_one,
            (am27_session.LocalProtocolError,),
            "tests/protocols/santorini",
            ("tests/protocols/santorini/data/santorini-am27-reference-2p.log",),
        ),
        Target(
            "spectrangle",
            spectrangle_one,
            (spectrangle.SpectrangleProtocolError,),
            "tests/protocols/spectrangle",
            ("../shared/transcripts/spectrangle-3p-game.log",),
        ),
        # The browser's protocol (protocols/web) goes here as one more Target(...).
    )
}

_TRANSCRIPT_LINE = re.compile(rb"^\S+ \S+ ([CS])>([CS]) (b'.*'|b\".*\")\s*$")


def _bytes_literals(path: Path) -> Iterator[bytes]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, bytes) and node.value:
            yield node.value


def _transcript(path: Path) -> tuple[bytes, bytes]:
    """All client→server and all server→client bytes of a transcript, in order."""
    to_server, to_client = bytearray(), bytearray()
    for line in path.read_bytes().splitlines():
        match = _TRANSCRIPT_LINE.match(line)
        if match is None:
            continue
        payload = ast.literal_eval(match.group(3).decode("latin-1"))
        if not isinstance(payload, bytes):
            continue
        (to_server if match.group(1) == b"C" else to_client).extend(payload)
    return bytes(to_server), bytes(to_client)


def _pieces(stream: bytes, size: int = 400) -> Iterator[bytes]:
    """A transcript's stream in runs of whole lines of about ``size`` bytes: small seeds
    keep the fuzzer fast, and every part of the conversation is still in one of them."""
    piece = bytearray()
    for line in stream.splitlines(keepends=True):
        if piece and len(piece) + len(line) > size:
            yield bytes(piece)
            piece.clear()
        piece.extend(line)
    if piece:
        yield bytes(piece)


def seeds(target: Target) -> list[bytes]:
    """The seed inputs: test bytes (and transcripts), each for both sides, whole and in
    small chunks; CMPN402 messages as length-prefixed records, alone and all together."""
    found: list[bytes] = []
    for path in sorted((ROOT / target.tests).glob("*.py")):
        found.extend(_bytes_literals(path))
    streams: list[bytes] = []
    for name in target.transcripts:
        path = (ROOT / name).resolve()
        if path.exists():
            for stream in _transcript(path):
                streams.extend(_pieces(stream))
    if target.records:
        found = [m[:255] for m in found]
        everything = b"".join(bytes([len(m)]) + m for m in found)
        out = {mode.to_bytes(1, "big") + bytes([len(m)]) + m for m in found for mode in (0, 1)}
        out |= {bytes([mode]) + everything[:4096] for mode in range(0, 256, 9)}
        return sorted(out)
    out = set()
    for body in [*found, *streams]:
        for mode in (0, 1, 2, 3):  # server/client, whole/byte by byte
            out.add(bytes([mode]) + body)
    return sorted(out)

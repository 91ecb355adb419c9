"""Deliberately broken clients for the client kits: small raw-socket players with defects.

:func:`twente_player` passes on every turn (MAKEMOVE SWAP with no tiles, a pass in the
ERRATA's reading) and :func:`clarkson_player` plays the engine's best move from the
board it reads; each takes a set of defects, one per rule of the spec a client breaks.
"""

from __future__ import annotations

import asyncio
import re

from meeple.check.scrabble import best_move
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import CLARKSON

US, RS = "\x1f", "\x1e"


def _frame(*fields: str) -> bytes:
    return US.join(fields).encode() + RS.encode()


async def twente_player(port: int, games: int, defects: frozenset[str]) -> None:
    """Defects: announce-late, out-of-turn, no-retry, garbage, chunks, first-only, after-end,
    announce-again (ANNOUNCE once more after WELCOME: the spec's E012)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    name = "Broken"
    try:
        if "announce-late" in defects:
            writer.write(_frame("REQUESTGAME", "2"))
        writer.write(_frame("ANNOUNCE", name))
        if "garbage" in defects:
            writer.write(_frame("HELLO", "there"))
        writer.write(_frame("REQUESTGAME", "2"))
        played = 0
        my_turn = False
        buffer = b""
        while played < games:
            chunk = await reader.read(65536)
            if not chunk:
                return
            if "chunks" in defects:
                # reads each chunk as whole messages: a split message is lost
                buffer = b""
                messages = chunk.split(RS.encode())[:-1] if chunk.endswith(RS.encode()) else []
            else:
                buffer += chunk
                *messages, buffer = buffer.split(RS.encode())
            if "first-only" in defects:
                messages = messages[:1]
            for raw in messages:
                fields = raw.decode("utf-8", "replace").split(US)
                if fields[0] == "WELCOME" and "announce-again" in defects:
                    writer.write(_frame("ANNOUNCE", name))
                if fields[0] == "NOTIFYTURN":
                    my_turn = fields[1] == "1"
                    if my_turn or "out-of-turn" in defects:
                        writer.write(_frame("MAKEMOVE", "SWAP", ""))
                elif fields[0] == "ERROR" and my_turn and "no-retry" not in defects:
                    writer.write(_frame("MAKEMOVE", "SWAP", ""))
                elif fields[0] == "NOTIFYCHAT":
                    writer.write(_frame("ERROR", "E002"))
                elif fields[0] == "GAMEOVER":
                    played += 1
                    my_turn = False
                    if "after-end" in defects:
                        writer.write(_frame("MAKEMOVE", "SWAP", ""))
                    if played < games:
                        writer.write(_frame("REQUESTGAME", "2"))
            await writer.drain()
    finally:
        writer.close()


_CELL = re.compile(r"\(([A-Za-z0]),[0-4]\)")


async def clarkson_player(port: int, games: int, lexicon: Lexicon, defects: frozenset[str]) -> None:
    """Defects: no-slash, out-of-turn, no-retry, chunks, first-only, after-end, no-quit,
    gives-up (stops playing when the other player quits)."""
    for _ in range(games):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        program = "Python" if "no-slash" in defects else "Python/3.11"
        writer.write(f"HELLO 1.0.1,Linux,{program},tester\r\n".encode())
        writer.write(b"USERSET Broken\r\n")
        board, rack, rows, in_board = Board(), "", [], False
        ready = False
        last_turn = ""
        buffer = b""
        done = False
        named = False  # USERCHANGE … Broken heard (§3.6)
        joined = False  # the kit's player's USERJOIN heard
        try:
            while not done:
                chunk = await reader.read(65536)
                if not chunk:
                    return
                if "chunks" in defects:
                    lines = chunk.split(b"\n")[:-1] if chunk.endswith(b"\n") else []
                else:
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                if "first-only" in defects:
                    lines = lines[:1]
                for raw in lines:
                    line = raw.decode().rstrip("\r")
                    if in_board:
                        if line:
                            rows.append(line)
                        else:
                            in_board = False
                            board = Board()
                            for y, row in enumerate(rows):
                                for x, cell in enumerate(_CELL.findall(row)):
                                    if cell != "0":
                                        board.place(x, y, cell)
                            rows = []
                        continue
                    word = line.split(" ", 1)[0]
                    # READY once named and joined: a READY before the name (still held
                    # by the last game's connection) let the game start, and the name's
                    # retry got NOK "names cannot change during a game" (a flaky FAIL
                    # of the kit's `legal` under load).
                    if word == "USERCHANGE" and line.split(" ")[-1] == "Broken":
                        named = True
                        if joined and not ready:
                            writer.write(b"READY\r\n")
                            ready = True
                    elif word == "NOK" and not named:
                        # The name is still held by this client's connection of the game
                        # before, closing as this one opens (§3.5): ask again.
                        await asyncio.sleep(0.1)
                        writer.write(b"USERSET Broken\r\n")
                    elif word == "USERJOIN":
                        joined = True
                        if named and not ready:
                            writer.write(b"READY\r\n")
                            ready = True
                    elif word == "BOARDPUSH":
                        in_board = True
                    elif word == "TILES":
                        rack = line[6:]
                    elif word == "TURN":
                        mine = line[5:] == "Broken"
                        alone = mine and last_turn == line
                        last_turn = line
                        if alone and "gives-up" in defects:
                            continue
                        if mine or "out-of-turn" in defects:
                            move = best_move(board, rack, lexicon, CLARKSON)
                            if move is None:
                                writer.write(b"PASS\r\n")
                            else:
                                cells = " ".join(f"({t.tile},{t.x},{t.y})" for t in move.tiles)
                                writer.write(f"PLACE {cells}\r\n".encode())
                    elif word == "NOK" and last_turn == "TURN Broken" and "no-retry" not in defects:
                        writer.write(b"PASS\r\n")
                    elif word == "WINNER":
                        if "after-end" in defects:
                            writer.write(b"PASS\r\n")
                        if "no-quit" not in defects:
                            writer.write(b"QUIT\r\n")
                        done = True
                await writer.drain()
        finally:
            writer.close()  # flushes what is buffered (QUIT); never awaits, even cancelled


async def spectrangle_player(port: int, games: int, defects: frozenset[str]) -> None:
    """Plays the engine's best placement, else exchanges, else skips. Defects: garbage,
    out-of-turn, no-retry, chunks, after-end."""
    from meeple.games.spectrangle import Board as SpBoard
    from meeple.games.spectrangle import Tile

    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    me = "broken"
    if "garbage" in defects:
        writer.write(b"hello there\n")
    writer.write(f"connect {me}\n".encode())
    writer.write(b"request 2\n")
    board = SpBoard()
    played, buffer, refused = 0, b"", False
    hand: list[str] = []
    try:
        while played < games:
            chunk = await reader.read(65536)
            if not chunk:
                return
            if "chunks" in defects:
                lines = chunk.split(b"\n")[:-1] if chunk.endswith(b"\n") else []
            else:
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
            for raw in lines:
                words = raw.decode().split()
                if not words:
                    continue
                if words[0] == "start":
                    board = SpBoard()
                elif words[0] == "move":
                    board.put(Tile.parse(words[2]), int(words[3]))
                elif words[0] == "tiles":
                    i = words.index(me)
                    hand = [t for t in words[i + 1 : i + 5] if t != "null"]
                    if words[-1] == me:
                        refused = False
                        writer.write(_sp_turn(board, hand, words[-2] == "skip"))
                    elif "out-of-turn" in defects:
                        writer.write(b"skip\n")
                elif words[0] == "invalidMove" and not refused and "no-retry" not in defects:
                    refused = True
                    writer.write(_sp_turn(board, hand, False, option=1))
                elif words[0] == "game" or (words[0] == "player" and words[-1] == "left"):
                    played += 1
                    if "after-end" in defects:
                        writer.write(b"skip\n")
                    if played < games:
                        writer.write(b"request 2\n")
            await writer.drain()
    finally:
        writer.close()


def _sp_turn(board: object, hand: list[str], must_skip: bool, option: int = 0) -> bytes:
    from meeple.ai.spectrangle import turn_options
    from meeple.games.spectrangle import Exchange, Place, Tile

    options = turn_options(board, [Tile.parse(t) for t in hand], must_skip=must_skip)  # type: ignore[arg-type]
    action = options[min(option, len(options) - 1)]
    if isinstance(action, Place):
        return f"place {action.tile.code} on {action.index}\n".encode()
    if isinstance(action, Exchange):
        return f"exchange {action.tile.code}\n".encode()
    return b"skip\n"


_ENVELOPE = re.compile(rb'\{"type":"[A-Z]+","message":"(?:[^"\\]|\\.)*"\}')


async def santorini_player(port: int, games: int, defects: frozenset[str]) -> None:
    """A raw AM27 player stepping from the UPDATE's lists. Defects: regex (finds the
    first envelope of each read with a regular expression, not by the length),
    no-ping, late-register, out-of-turn, no-retry, after-end, garbage."""
    from meeple.protocols.santorini import (
        AutoDecoder,
        Build,
        Cell,
        ChooseStarter,
        EndGame,
        GodInit,
        GodList,
        Info,
        Lose,
        Message,
        Move,
        Pass,
        Ping,
        Players,
        Register,
        ServerState,
        Text,
        Update,
        WorkerInit,
        decode,
    )

    name = "Broken"
    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    def send(m: Message) -> None:
        writer.write(m.encode().encode() + b"\n")

    async def ping() -> None:
        while True:
            send(Ping("AIping"))
            await asyncio.sleep(0.5)

    pinger = None if "no-ping" in defects else asyncio.create_task(ping())
    if "late-register" in defects:
        send(Pass(name))
    if "garbage" in defects:
        writer.write(b'{"type":"HELLO","message":"{}"}\n')
    decoder = AutoDecoder()
    board: dict[Cell, str] = {}
    sulking = False
    pending = b""
    played = 0

    def act(u: Update) -> None:
        if u.can_place_worker:
            mine = [s for s in board.values() if s == "M"]
            free = [Cell(r, c) for r in range(5) for c in range(5) if Cell(r, c) not in board]
            send(WorkerInit(name, free[12 % len(free)], "F" if mine else "M"))
        elif u.can_pass:
            send(Pass(name))
        elif any(options for _, options in u.buildable):
            w, options = next((w, o) for w, o in u.buildable if o)
            c, levels = options[0]
            send(Build(name, w, c, levels[0]))
        elif any(cells for _, cells in u.reachable):
            w, cells = next((w, c) for w, c in u.reachable if c)
            send(Move(name, w, cells[0]))
        else:
            send(Lose(name))

    try:
        while played < games:
            chunk = await reader.read(65536)
            if not chunk:
                return
            if "regex" in defects:
                # The first envelope the pattern finds in what was read; the rest of the
                # read is dropped with it (a message TCP joined to another is lost).
                pending += chunk
                found = _ENVELOPE.search(pending)
                texts = [decode(found[0].decode())] if found else []
                if found:
                    pending = b""
            else:
                texts = [decode(e.text) for e in decoder.receive_data(chunk) if isinstance(e, Text)]
            for m in texts:
                if isinstance(m, ServerState):
                    send(Register(name, 2, False))
                elif isinstance(m, GodList) and m.player == name:
                    send(GodInit(name, m.gods[0].name))
                elif isinstance(m, Players):
                    board.clear()
                    if m.player == name:
                        send(ChooseStarter(name, name))
                elif isinstance(m, Update):
                    for c, state in m.board:
                        if state.owner == name:
                            board[c] = state.sex or "M"
                        elif state.owner is not None:
                            board[c] = "x"
                        else:
                            board.pop(c, None)
                    if m.player == name and not sulking:
                        act(m)
                    elif m.player != name:
                        sulking = False
                        if "out-of-turn" in defects and m.player:
                            send(Pass(name))
                elif isinstance(m, Info) and "no-retry" in defects:
                    sulking = True  # takes INFO as the end of its turn
                elif isinstance(m, EndGame):
                    played += 1
                    if "after-end" in defects:
                        send(Pass(name))
            await writer.drain()
    finally:
        if pinger is not None:
            pinger.cancel()
        writer.close()


async def cmpn402_player(port: int, games: int, defects: frozenset[str]) -> None:
    """A raw WebSocket agent (its own handshake and frame reader) that plays one phony
    PLAY on its first turn (the kit refuses it) and passes after that. Defects:
    first-frame-only (handles the first frame of each read, drops the rest: issue 23),
    no-name, late-move (PASS after END), outside-window (NO_CHALLENGE before any PLAY),
    no-retry (INVALID taken as the end of its turn), leaves-on-drop (closes on END 2),
    out-of-turn (PASS while the other is to move), name-again (NAME once more after
    START: the spec's client sends NAME only in INIT)."""
    import base64
    import os

    from meeple.check.cmpn402 import ws_frame, ws_frame_parts, ws_units

    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )

    def send(payload: bytes, opcode: int = 2) -> None:
        writer.write(ws_frame(opcode, payload, mask=os.urandom(4)))

    if "no-name" in defects:
        send(b"\x02")
    if "outside-window" in defects:
        send(b"\x05")
    buffer = b""
    played = 0
    first_move = True
    try:
        while played < games:
            chunk = await reader.read(65536)
            if not chunk:
                return
            units, buffer = ws_units(buffer + chunk)
            frames = [u for u in units if ws_frame_parts(u) is not None]
            if "first-frame-only" in defects:
                frames = frames[:1]  # the rest of the read's whole frames are lost
            for u in frames:
                parts = ws_frame_parts(u)
                assert parts is not None
                opcode, p = parts
                if opcode == 9:
                    send(p, 10)
                    continue
                if opcode != 2 or not p:
                    continue
                kind = p[0]
                thinking = False
                if kind == 0:
                    send(b"\x00Broken")
                elif kind == 1:
                    thinking = p[1] == 1
                    if "name-again" in defects:
                        send(b"\x00Broken")
                    if not thinking and "out-of-turn" in defects:
                        send(b"\x02")
                elif kind in (2, 3) and len(p) == 9 + (kind == 3):
                    thinking = True  # the other passed or exchanged
                elif kind == 4 and len(p) > 20:
                    send(b"\x05")  # the other's PLAY: no challenge, then our turn
                    thinking = True
                elif kind == 9:
                    thinking = "no-retry" not in defects
                elif kind == 10:
                    if p[1] == 2:
                        if "leaves-on-drop" in defects:
                            return
                        continue
                    played += 1
                    first_move = True
                    if "late-move" in defects:
                        send(b"\x02")
                        send(b"\x02")
                if thinking:
                    if first_move:
                        first_move = False
                        # PLAY (8, 8) across "AB" claiming 4: the kit refuses it anyway
                        send(b"\x04\x08\x08\x00\x01\x02" + bytes(5) + (4).to_bytes(4, "big"))
                    else:
                        send(b"\x02")
                        if "out-of-turn" in defects:
                            send(b"\x02")  # and again, while the other is to move
            await writer.drain()
    finally:
        writer.close()


async def web_player(port: int, games: int, defects: frozenset[str]) -> None:
    """A raw meeple-web/1 browser (its own handshake and frame reader) at a Spectrangle
    table, placing from the seat view's ``fits``. Defects: late-hello (subscribes
    first), garbage (an unknown type), out-of-turn, after-end, no-retry (an illegal error
    taken as the end of its turn), first-frame-only."""
    import base64
    import json
    import os

    from meeple.check.cmpn402 import ws_frame, ws_frame_parts, ws_units

    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )

    def say(message: dict[str, object], opcode: int = 1) -> None:
        writer.write(ws_frame(opcode, json.dumps(message).encode(), mask=os.urandom(4)))

    def create() -> None:
        say(
            {
                "type": "create",
                "game": "spectrangle",
                "variant": "standard",
                "size": 2,
                "name": "Broken",
            }
        )

    buffer = b""
    while b"\r\n\r\n" not in buffer:  # RFC 6455 §4.1: no data before the server's answer
        chunk = await reader.read(65536)
        if not chunk:
            return
        buffer += chunk
    if "late-hello" in defects:
        say({"type": "subscribe", "topic": "lobby"})
    say({"type": "hello", "protocol": "meeple-web/1"})
    if "garbage" in defects:
        say({"type": "dance"})
    played = 0
    options: list[dict[str, object]] = []
    sulking = False
    acted_on: tuple[int, int] | None = None
    last: dict[str, object] = {}
    retried = False
    on_turn = False
    try:
        while played < games:
            chunk = await reader.read(65536)
            if not chunk:
                return
            units, buffer = ws_units(buffer + chunk)
            frames = [u for u in units if ws_frame_parts(u) is not None]
            if "first-frame-only" in defects:
                frames = frames[:1]
            for u in frames:
                parts = ws_frame_parts(u)
                assert parts is not None
                opcode, p = parts
                if opcode == 9:
                    writer.write(ws_frame(10, p, mask=os.urandom(4)))
                    continue
                if opcode != 1:
                    continue
                m = json.loads(p)
                if m.get("type") == "welcome":
                    create()
                elif m.get("type") == "seat":
                    data = m["data"]
                    if data["status"] in ("finished", "abandoned"):
                        if "after-end" in defects:
                            say({"type": "play", "action": {"kind": "skip"}})
                        played += 1
                        if played < games:
                            create()
                        continue
                    mine = data["turn"] == data["you"]
                    on_turn = mine
                    if not mine:
                        sulking = False
                        if "out-of-turn" in defects:
                            say({"type": "play", "action": {"kind": "skip"}})
                        continue
                    state = (len(data["moves"]), data["turn"])
                    if sulking or state == acted_on:
                        continue  # a view of a state already acted on
                    acted_on = state
                    fits = data.get("fits") or {}
                    options = [
                        {"kind": "place", "tile": tile, "index": index}
                        for tile, places in fits.items()
                        for index, _ in places
                    ]
                    hand = data["hands"][data["you"]]
                    if data["bag"] > 0 and hand:
                        options.append({"kind": "exchange", "tile": hand[0]})
                    options.append({"kind": "skip"})
                    last = options.pop(0)
                    retried = False
                    say({"type": "play", "action": last})
                elif m.get("type") == "error" and m.get("code") == "illegal" and on_turn:
                    if "no-retry" in defects:
                        sulking = True
                    elif not retried:
                        retried = True  # the same once more (a relay may refuse it once)
                        say({"type": "play", "action": last})
                    elif options:
                        last = options.pop(0)
                        say({"type": "play", "action": last})
            await writer.drain()
    finally:
        writer.close()

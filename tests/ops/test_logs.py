"""``--log-format json`` (issue 35): one JSON object per line, with the connection id and
the room where the line's logger carries them."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.ops.conftest import Raw

from meeple.server.app import MeepleServer
from meeple.server.edge.tcp import ConnectionLog
from meeple.server.logfmt import JsonFormatter
from meeple.server.rooms.room import _RoomLog


def _lines(emit: object) -> list[dict[str, object]]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    log = logging.getLogger("meeple.test.json")
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    try:
        emit(log)  # type: ignore[operator]
    finally:
        log.removeHandler(handler)
    text = stream.getvalue()
    assert text.endswith("\n")
    lines = text[:-1].split("\n")
    assert all(line.isascii() for line in lines)  # nothing a reader splits on
    return [json.loads(line) for line in lines]


def test_a_connection_line_carries_its_id() -> None:
    """A connection's line: time, level, logger, message, and ``conn``."""

    def emit(log: logging.Logger) -> None:
        ConnectionLog(log, {"conn": "twente-7"}).warning("peer is not reading; %s", "closing")

    [line] = _lines(emit)
    assert line["conn"] == "twente-7"
    assert line["level"] == "WARNING"
    assert line["logger"] == "meeple.test.json"
    assert line["message"] == "[twente-7] peer is not reading; closing"
    assert str(line["time"]).endswith("+00:00")


def test_a_room_line_carries_its_room_and_uid_and_the_extra_given() -> None:
    """A room's line has ``room`` and ``uid``; ``seat`` and ``protocol`` given as extra."""

    def emit(log: logging.Logger) -> None:
        room = _RoomLog(log, {"room": "room-3", "uid": "ab12cd34ef56"})
        room.info("seat back", extra={"seat": 1, "protocol": "web"})
        try:
            raise ValueError("boom")
        except ValueError:
            room.exception("command failed")

    first, second = _lines(emit)
    assert (first["room"], first["uid"], first["seat"], first["protocol"]) == (
        "room-3",
        "ab12cd34ef56",
        1,
        "web",
    )
    assert "ValueError: boom" in str(second["exception"])


@given(st.text(max_size=300), st.from_regex(r"\A[a-z0-9-]{1,24}\Z"))
def test_any_message_is_one_line_of_json(message: str, conn: str) -> None:
    """Whatever a message holds (newlines, quotes, any character), it is one line that
    parses back to itself."""

    def emit(log: logging.Logger) -> None:
        ConnectionLog(log, {"conn": conn}).info("%s", message)

    [line] = _lines(emit)
    assert line["message"] == f"[{conn}] {message}"
    assert line["conn"] == conn


def test_the_cli_flag_makes_json_lines() -> None:
    """``meeple --log-format json`` configures the root logger with the JSON format."""
    code = (
        "import logging, sys\n"
        "from meeple.cli.main import build_parser\n"
        "from meeple.server.logfmt import configure\n"
        "args = build_parser().parse_args(['--log-format', 'json', 'serve'])\n"
        "configure(args.log_level, args.log_format)\n"
        "logging.getLogger('meeple.x').info('hello %s', 'there')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    line = json.loads(done.stderr.strip())
    assert line["message"] == "hello there"
    assert line["logger"] == "meeple.x"


async def test_a_real_connection_s_lines_name_it_and_its_protocol(
    server: MeepleServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Over loopback: a Spectrangle connection's own lines carry ``conn`` and
    ``protocol``, so a JSON line says which connection of which listener it is."""
    caplog.set_level(logging.DEBUG)
    peer = await Raw.connect(server, "zed")
    peer.send("request 7")  # refused in the protocol's words, and logged
    await peer.next()
    peer.close()
    mine = [r for r in caplog.records if getattr(r, "conn", "").startswith("spectrangle-")]
    assert mine
    assert all(getattr(r, "protocol", None) == "spectrangle" for r in mine)
    line = json.loads(JsonFormatter().format(mine[0]))
    assert line["protocol"] == "spectrangle"
    assert str(line["conn"]).startswith("spectrangle-")

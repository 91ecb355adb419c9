"""AM27 sessions: the flow's tables, refusals as INFO codes, and random input never raising."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.protocols.santorini.events import ConnectionClosed, Ignored, Rejected
from meeple.protocols.santorini.framing import STREAM_HEADER
from meeple.protocols.santorini.messages import (
    Cell,
    ChooseStarter,
    EndGame,
    Info,
    InfoCode,
    Message,
    Move,
    Pass,
    Ping,
    Players,
    Register,
    ServerState,
    Update,
    WorkerInit,
)
from meeple.protocols.santorini.session import (
    CLIENT_SENDS,
    SERVER_SENDS,
    ClientSession,
    Heartbeat,
    LocalProtocolError,
    ServerSession,
    State,
)


def line(message: Message) -> bytes:
    return message.encode().encode() + b"\n"


def playing_pair() -> tuple[ServerSession, ClientSession]:
    """A server and a client session walked to PLAYING, each feeding the other."""
    server, client = ServerSession(), ClientSession()

    def to_client(m: ServerState | Players | Update) -> None:
        assert client.receive_data(server.send(m)) == [m]

    def to_server(m: Register | ChooseStarter) -> None:
        assert server.receive_data(client.send(m)) == [m]

    to_client(ServerState(True, False))
    to_server(Register("ann", 2, False))
    to_client(Players("ann", (("ann", "Atheist"), ("bob", "Atheist"))))
    to_server(ChooseStarter("ann", "ann"))
    to_client(Update("ann", can_place_worker=True))
    assert server.state is client.state is State.PLAYING
    return server, client


def test_tables_cover_every_state() -> None:
    """Both tables name every state, and PING is allowed wherever the stream is open."""
    assert set(CLIENT_SENDS) == set(SERVER_SENDS) == set(State)
    for state in State:
        if state is not State.CLOSED:
            assert Ping.TYPE in CLIENT_SENDS[state]
            assert Ping.TYPE in SERVER_SENDS[state]


def test_header_once_then_the_game_flow() -> None:
    """The first bytes are the stream header; the flow reaches PLAYING and back after ENDGAME."""
    server = ServerSession()
    first = server.send(ServerState(True, False))
    assert first.startswith(STREAM_HEADER + b"yt")
    assert not server.send(Ping()).startswith(STREAM_HEADER)
    server, client = playing_pair()
    move = Move("ann", Cell(0, 0), Cell(0, 1))
    assert server.receive_data(client.send(move)) == [move]
    end = EndGame("ann", True)
    assert client.receive_data(server.send(end)) == [end]
    assert server.state is client.state is State.CONNECTED
    assert server.nickname is None


def test_lines_framing_option() -> None:
    """framing='lines' writes one JSON line per message, no header."""
    server = ServerSession(framing="lines")
    assert server.send(ServerState(True, False)) == line(ServerState(True, False))


def test_out_of_state_and_impersonation() -> None:
    """Game commands before a game get WAIT; a second REGISTER is ignored; a player field
    naming someone else is INVALID; server types from a client are INVALID."""
    server = ServerSession()
    server.send(ServerState(True, False))
    [wait] = server.receive_data(line(Move("x", Cell(0, 0), Cell(0, 1))))
    assert isinstance(wait, Rejected)
    assert wait.code is InfoCode.WAIT
    assert not wait.in_game
    server.receive_data(line(Register("ann", 2, False)))
    [again] = server.receive_data(line(Register("ann")))
    assert isinstance(again, Ignored)
    server.send(Players("ann", (("ann", "Atheist"), ("bob", "Atheist"))))
    [other] = server.receive_data(line(ChooseStarter("bob", "bob")))
    assert isinstance(other, Rejected)
    assert other.code is InfoCode.INVALID
    [mine] = server.receive_data(line(ChooseStarter("", "bob")))
    assert mine == ChooseStarter("", "bob")
    server.send(Update("bob"))
    [fake] = server.receive_data(line(ServerState(True, True)))
    assert isinstance(fake, Rejected)
    assert fake.in_game
    [bad] = server.receive_data(b"{nope\n")
    assert isinstance(bad, Rejected)
    assert bad.code is InfoCode.MALFORMED


def test_nickname_refusal_returns_to_connected() -> None:
    """INFO NICKNAME answering a REGISTER lets the client register again; a SERVERSTATE
    the server pushed before it read the REGISTER does not."""
    server, client = ServerSession(), ClientSession()
    client.receive_data(server.send(ServerState(True, False)))
    server.receive_data(client.send(Register("ann")))
    client.receive_data(server.send(Info("ann", "NICKNAME")))
    assert server.state is client.state is State.CONNECTED
    server.receive_data(client.send(Register("ann")))
    client.receive_data(server.send(ServerState(True, True)))
    assert server.state is client.state is State.REGISTERED


def test_local_errors() -> None:
    """Sending what the state forbids is our bug: LocalProtocolError, nothing written."""
    server, client = ServerSession(), ClientSession()
    with pytest.raises(LocalProtocolError):
        server.send(Update("x"))
    with pytest.raises(LocalProtocolError):
        client.send(Pass("x"))
    assert server.receive_eof() == [ConnectionClosed()]
    assert server.receive_data(b"x\n") == []


def test_client_reads_lines_or_object_stream_and_ignores_out_of_state() -> None:
    """The client detects the framing; a message that makes no sense now is Ignored."""
    lines = ServerSession(framing="lines")
    client = ClientSession()
    assert client.receive_data(lines.send(ServerState(True, False))) == [ServerState(True, False)]
    assert client.server_framing == "lines"
    [ignored] = client.receive_data(line(Update("x")))
    assert isinstance(ignored, Ignored)


def test_heartbeat() -> None:
    """Silence for the timeout expires; any message heard resets it."""
    beat = Heartbeat(10.0, interval=0.5, timeout=5.0)
    assert not beat.expired(14.9)
    beat.heard(14.0)
    assert not beat.expired(18.9)
    assert beat.expired(19.0)


_chunks = st.lists(
    st.one_of(
        st.binary(max_size=80),
        st.sampled_from(
            [
                line(Register("ann", 2, False)),
                line(Register("ann")),
                line(Move("ann", Cell(0, 0), Cell(1, 1))),
                line(WorkerInit("bob", Cell(2, 2), "M")),
                line(Ping("AIping")),
                b'{"type":"UPDATE","message":"{}"}\n',
                b"\n",
                b"x" * 300 + b"\n",
            ]
        ),
    ),
    max_size=20,
)


@given(_chunks, st.lists(st.sampled_from(["state", "players", "update", "end"]), max_size=6))
@settings(max_examples=120)
def test_random_input_never_raises(chunks: list[bytes], sends: list[str]) -> None:
    """Garbage, oversized lines, random JSON and out-of-turn messages: events, no exception."""
    server = ServerSession(max_message_size=256)
    messages = {
        "state": ServerState(True, False),
        "players": Players("ann", (("ann", "Atheist"),)),
        "update": Update("ann"),
        "end": EndGame("ann", True),
    }
    for i, chunk in enumerate(chunks):
        for event in server.receive_data(chunk):
            assert isinstance(event, Message | Rejected | Ignored)
        if i < len(sends):
            with contextlib.suppress(LocalProtocolError):
                server.send(messages[sends[i]])  # type: ignore[arg-type]
        assert server.buffered <= 256 + 1


def test_info_from_a_client_is_ignored_never_answered() -> None:
    """INFO is the server's error report; from a client it is Ignored (no INFO back), so
    two peers answering each other's errors cannot bounce for ever."""
    server = ServerSession()
    server.send(ServerState(True, False))
    [event] = server.receive_data(line(Info("ann", "INVALID")))
    assert isinstance(event, Ignored)
    server, _ = playing_pair()
    [event] = server.receive_data(line(Info("bob", "WAIT")))
    assert isinstance(event, Ignored)
    assert server.state is State.PLAYING

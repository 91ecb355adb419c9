"""Clarkson sessions: the conversation's states, every refusal, a client and server paired."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.games.scrabble.moves import Placement
from meeple.protocols.clarkson.errors import LocalProtocolError
from meeple.protocols.clarkson.messages import (
    Goodbye,
    Hello,
    Ok,
    Pass,
    Place,
    Ready,
    Score,
    Starting,
    Tiles,
    Turn,
    UserChange,
    UserJoin,
    UserSet,
    Winner,
)
from meeple.protocols.clarkson.session import (
    CLIENT_SENDS,
    OUT_OF_STATE,
    SERVER_SENDS,
    ClientSession,
    Close,
    ConnectionClosed,
    Greeted,
    Ignored,
    PeerNok,
    Reply,
    ServerSession,
    State,
)

HELLO = Hello("1.0.1", "Linux", "Python/3.11", "meeple")


def greeted_server() -> ServerSession:
    s = ServerSession()
    s.name = "10.0.0.1"
    s.send(HELLO)
    [event] = s.receive_data(b"HELLO 1.0.1,Mac OS,Python,Hunter\r\n")
    assert isinstance(event, Greeted)
    return s


def test_server_says_hello_first_then_ok_with_the_default_name() -> None:
    """§3.1, §4.1: HELLO first; a good HELLO gets OK naming the default name."""
    s = ServerSession()
    s.name = "10.0.0.1"
    assert s.send(HELLO) == b"HELLO 1.0.1,Linux,Python/3.11,meeple\r\n"
    [event] = s.receive_data(b"HELLO 1.0,x,y,z\r\n")
    assert isinstance(event, Greeted)
    assert event.hello.version == "1.0"
    assert event.data == b"OK Please send a username, otherwise you will be known as 10.0.0.1\r\n"
    assert s.state is State.LOBBY


def test_unsupported_version_is_nok_and_hello_may_follow() -> None:
    """§3.4's example: NOK Unsupported version!, then QUIT gets GOODBYE (or HELLO again)."""
    s = ServerSession()
    s.send(HELLO)
    [nok] = s.receive_data(b"HELLO 1.4.7,Temple OS,Holy-C,Hunter\r\n")
    assert isinstance(nok, Reply)
    assert nok.data.startswith(b"NOK Unsupported version!")
    assert s.state is State.GREETING
    [ok] = s.receive_data(b"HELLO 1.0.1,a,b,c\r\n")
    assert isinstance(ok, Greeted)


def test_anything_before_hello_gets_goodbye_and_the_rest_is_dropped() -> None:
    """§3.1: a client that does not start with HELLO is ended with GOODBYE."""
    for line in (b"READY\r\n", b"FOOBAR\r\n", b"PLACE (A,7,7)\r\n", b"x" * 5000 + b"\r\n"):
        s = ServerSession()
        s.send(HELLO)
        events = s.receive_data(line + b"HELLO 1.0.1,a,b,c\r\n")
        assert len(events) == 1
        assert isinstance(events[0], Close)
        assert events[0].data == b"GOODBYE\r\n"
        assert s.closed
        assert s.receive_data(b"READY\r\n") == []


def test_quit_gets_goodbye_in_every_state() -> None:
    """§3.2: QUIT → GOODBYE and close, whatever the state."""
    s = ServerSession()
    s.send(HELLO)
    assert s.receive_data(b"QUIT\r\n") == [Close(b"GOODBYE\r\n", "QUIT")]
    s = greeted_server()
    s.receive_data(b"READY\r\n")
    s.send(Starting())
    [event] = s.receive_data(b"QUIT\r\n")
    assert isinstance(event, Close)
    assert s.state is State.CLOSED


def test_lobby_refusals() -> None:
    """Unknown command, HELLO twice, moves before the game: NOK with a description."""
    s = greeted_server()
    replies = s.receive_data(
        b"FOOBAR\r\nHELLO 1.0.1,a,b,c\r\nPASS\r\nPLACE (A,7,7)\r\nEXCHANGE\r\n"
    )
    assert [r.data for r in replies if isinstance(r, Reply)] == [
        b"NOK unrecognized command\r\n",
        b"NOK HELLO was already exchanged\r\n",
        *[b"NOK the game has not started yet: send READY\r\n"] * 3,
    ]
    [bad] = s.receive_data(b"USERSET 9lives\r\n")
    assert isinstance(bad, Reply)
    assert bad.data.startswith(b"NOK invalid name")
    assert s.receive_data(b"USERSET Bob\r\n") == [UserSet("Bob")]
    assert s.send(UserChange("10.0.0.1", "Bob")) == b"USERCHANGE 10.0.0.1 Bob\r\n"
    assert s.name == "Bob"


def test_game_turns_and_refusals() -> None:
    """§3.13: out of turn is NOK; in turn the move goes up; READY/USERSET/HELLO are NOK."""
    s = greeted_server()
    s.receive_data(b"USERSET Bob\r\n")
    s.send(UserChange("10.0.0.1", "Bob"))
    assert s.receive_data(b"READY\r\n") == [Ready()]
    s.send(Ok("wait"))
    s.send(Starting())
    for m in (Score(0, "Ann"), Score(0, "Bob"), Tiles("ABCDEFG"), Turn("Ann")):
        s.send(m)
    [nok] = s.receive_data(b"PLACE (A,7,7)\r\n")
    assert isinstance(nok, Reply)
    assert nok.data == b"NOK cannot do that when it's not your turn\r\n"
    texts = [r.data for r in s.receive_data(b"READY\r\nUSERSET Al\r\nHELLO 1.0.1,a,b,c\r\n")]  # type: ignore[union-attr]
    assert texts == [
        b"NOK the game has already started\r\n",
        b"NOK names cannot change during a game\r\n",
        b"NOK HELLO was already exchanged\r\n",
    ]
    s.send(Turn("Bob"))
    assert s.receive_data(b"PLACE (A,7,7)\r\n") == [Place((Placement(7, 7, "A"),))]
    assert s.receive_data(b"PASS\r\n") == [Pass()]
    s.send(Winner(10, "Ann"))
    assert s.state is State.LOBBY
    assert not s.your_turn


def test_pipelined_lines_after_hello_are_read_greeted() -> None:
    """HELLO, USERSET and READY in one packet: the session answers OK itself, reads on."""
    s = ServerSession()
    s.send(HELLO)
    events = s.receive_data(b"HELLO 1.0.1,a,b,c\r\nUSERSET Al\r\nREADY\r\n")
    assert isinstance(events[0], Greeted)
    assert events[1:] == [UserSet("Al"), Ready()]


def test_server_send_checks_the_state() -> None:
    """The server never sends what the conversation does not allow."""
    s = ServerSession()
    with pytest.raises(LocalProtocolError):
        s.send(Tiles("A"))
    s = greeted_server()
    for m in (Starting(), Turn("x"), Tiles("A"), HELLO):
        with pytest.raises(LocalProtocolError):
            s.send(m)
    s.send(Goodbye())
    with pytest.raises(LocalProtocolError):
        s.send(Ok())


def test_tables_are_complete() -> None:
    """Every state has a row in each table; refusals exist for each greeted state."""
    assert set(CLIENT_SENDS) == set(SERVER_SENDS) == set(OUT_OF_STATE) == set(State)


def test_client_and_server_paired_in_memory() -> None:
    """A client session and a server session agree through a whole short conversation."""
    server, client = ServerSession(), ClientSession()
    server.name = "1.2.3.4"
    assert client.receive_data(server.send(HELLO)) == [HELLO]
    [greeted] = server.receive_data(client.send(HELLO))
    assert isinstance(greeted, Greeted)
    assert client.receive_data(greeted.data) == [Ok(greeted.data.decode()[3:-2])]
    client.name = "1.2.3.4"
    server.receive_data(client.send(UserSet("Al")))
    client.receive_data(server.send(UserChange("1.2.3.4", "Al")) + server.send(UserJoin("Bo")))
    assert client.name == "Al"
    with pytest.raises(LocalProtocolError):
        client.send(Pass())
    server.receive_data(client.send(Ready()))
    data = b"".join(server.send(m) for m in (Ok("x"), Starting(), Score(0, "Al"), Turn("Al")))
    assert client.receive_data(data)[-1] == Turn("Al")
    assert client.your_turn
    assert server.receive_data(client.send(Pass())) == [Pass()]
    events = client.receive_data(server.send(Winner(0, "Al")) + b"STARTING\r\nFOO\r\n")
    assert client.state is State.LOBBY
    assert isinstance(events[1], Ignored)
    assert client.receive_data(server.send(Goodbye())) == [Goodbye()]
    assert client.receive_eof() == []
    assert client.closed


def test_client_sees_nul_padded_server_lines_and_eof() -> None:
    """The client session reads NUL padding too, and reports the end of the stream."""
    c = ClientSession()
    assert c.receive_data(b"HELLO 1.0.1,a,b,c\r\n".ljust(4096, b"\x00")) == [
        Hello("1.0.1", "a", "b", "c")
    ]
    assert c.receive_eof() == [ConnectionClosed()]


@settings(max_examples=200)
@given(
    st.lists(
        st.binary(max_size=40)
        | st.sampled_from(
            [
                b"HELLO 1.0.1,a,b,c\r\n",
                b"READY\r\n",
                b"USERSET Al\r\n",
                b"PLACE (A,7,7)\r\n",
                b"PASS\r\n",
                b"EXCHANGE\r\n",
                b"\x00" * 50,
                b"QUIT\r\n",
                b"\n",
            ]
        ),
        max_size=12,
    )
)
def test_server_session_never_raises_on_any_input(chunks: list[bytes]) -> None:
    """Whatever a client sends, the server session answers with events, never an exception."""
    s = ServerSession(max_line_size=64)
    s.send(HELLO)
    for chunk in chunks:
        for event in s.receive_data(chunk):
            if isinstance(event, Reply):
                assert event.data.startswith(b"NOK")
            elif isinstance(event, Close):
                assert event.data == b"GOODBYE\r\n"
                assert s.closed
        assert s.buffered <= 64
    s.receive_eof()
    assert s.closed


@settings(max_examples=200)
@given(
    st.lists(
        st.binary(max_size=40)
        | st.sampled_from(
            [
                b"HELLO 1.0.1,a,b,c\r\n",
                b"OK hi\r\n",
                b"STARTING\r\n",
                b"BOARDPUSH\r\n",
                b"(0,4) " * 15 + b"\r\n",
                b"TURN x\r\n",
                b"SCORE -3 x\r\n",
                b"WINNER 1 x\r\n",
                b"\x00" * 100,
                b"GOODBYE\r\n",
            ]
        ),
        max_size=12,
    )
)
def test_client_session_never_raises_on_any_server_bytes(chunks: list[bytes]) -> None:
    """Whatever a server sends, the client session reports messages or problems, no exception."""
    c = ClientSession(max_line_size=128)
    for chunk in chunks:
        if c.closed:
            break
        c.receive_data(chunk)
        assert c.buffered <= 128
    c.receive_eof()
    assert c.closed


def test_nok_from_a_client_is_never_answered() -> None:
    """A client's NOK (a peer's error report) is a PeerNok, not a NOK back: two peers that
    both answer errors cannot bounce them for ever. Other server words still get NOK."""
    s = greeted_server()
    assert s.receive_data(b"NOK unrecognized command\r\n") == [PeerNok("unrecognized command")]
    assert s.receive_data(b"nok\n") == [PeerNok("")]
    [reply] = s.receive_data(b"WINNER x 3\r\n")
    assert isinstance(reply, Reply)

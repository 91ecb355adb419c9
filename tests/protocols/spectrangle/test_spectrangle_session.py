"""Sessions and dialect: the transition table walked by both ends, held lines, and the
lines a game's events become."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.games.spectrangle import Game
from meeple.protocols.spectrangle import (
    TRANSITIONS,
    ClientSession,
    Connect,
    ErrorReply,
    ErrorWord,
    LocalProtocolError,
    Move,
    PeerError,
    Place,
    ProtocolViolation,
    Rejected,
    Request,
    ServerSession,
    Skip,
    State,
    Tiles,
    Waiting,
    Welcome,
    action_for,
    messages_for,
    opening_messages,
)

ERROR_LINES = {w.value.encode() + b"\n" for w in ErrorWord}


def test_every_state_has_a_row() -> None:
    """The table covers every state and only leads to states."""
    assert set(TRANSITIONS) == set(State)
    assert all(isinstance(s, State) for row in TRANSITIONS.values() for s in row.values())


def test_lines_wait_for_the_verdict_then_come_out() -> None:
    """connect + request in one chunk: request is held until welcome was sent."""
    server = ServerSession()
    events = server.receive_data(b"connect ann chat\nrequest 2\n")
    assert events == [Connect("ann", ("chat",))]
    assert server.held_lines == 1
    assert server.send(server.welcome()) == b"welcome chat\n"
    assert server.next_events() == [Request(2)]
    assert server.state is State.REQUESTED
    assert server.send(Waiting(("ann",))) == b"waiting ann\n"
    assert server.state is State.QUEUED


def test_held_lines_are_bounded() -> None:
    """More lines than max_held_lines while a verdict is due are refused, not kept."""
    server = ServerSession(max_held_lines=2)
    events = server.receive_data(b"connect ann\n" + b"skip\n" * 5)
    assert events[0] == Connect("ann")
    refused = [e for e in events[1:] if isinstance(e, Rejected)]
    assert len(refused) == 3
    assert server.held_lines == 2


def test_invalid_name_lets_the_client_try_again() -> None:
    server = ServerSession()
    server.receive_data(b"connect ann\n")
    assert server.send(ErrorReply(ErrorWord.INVALID_NAME)) == b"invalidName\n"
    assert server.state is State.CONNECTING
    assert server.name is None
    assert server.receive_data(b"connect bob\n") == [Connect("bob")]


def test_server_cannot_send_out_of_phase() -> None:
    """A bug in the server layer surfaces as LocalProtocolError, not as a wrong line."""
    server = ServerSession()
    with pytest.raises(LocalProtocolError):
        server.send(Welcome(()))
    with pytest.raises(LocalProtocolError):
        server.send(Waiting(("ann",)))


def test_client_and_server_walk_a_game_together() -> None:
    """Both sessions agree on the state through the opening and a turn of a real game."""
    game = Game(["ann", "bob"], random.Random(5))
    clients = {n: ClientSession() for n in game.players}
    servers = {n: ServerSession() for n in game.players}

    def server_says(name: str, message: object) -> None:
        data = servers[name].send(message)  # type: ignore[arg-type]
        events = clients[name].receive_data(data)
        assert not any(isinstance(e, ProtocolViolation) for e in events)
        assert clients[name].state is servers[name].state

    for n in game.players:
        servers[n].receive_data(clients[n].send(Connect(n)))
        server_says(n, servers[n].welcome())
        servers[n].receive_data(clients[n].send(Request(2)))
        server_says(n, Waiting(game.players))
        for message in opening_messages(game):
            server_says(n, message)
    mover = game.players[game.order[0]]
    assert clients[mover].state is State.MY_TURN
    with pytest.raises(LocalProtocolError):  # the other player cannot act
        clients[game.players[game.order[1]]].send(Skip())
    best = max(game.legal_placements(game.order[0]), key=lambda p: p.points)
    place = Place(best.tile, best.index)
    (received,) = servers[mover].receive_data(clients[mover].send(place))
    assert clients[mover].state is State.DECIDING_TURN
    events = game.apply(action_for(received, game.order[0]))  # type: ignore[arg-type]
    lines = messages_for(game, events)
    assert isinstance(lines[0], Move)
    assert isinstance(lines[-1], Tiles)
    for n in game.players:
        for message in lines:
            server_says(n, message)
    assert clients[mover].state is State.WATCHING
    assert clients[game.players[game.order[1]]].state in (State.MY_TURN, State.MUST_SKIP)


_WORDS = st.sampled_from(
    ["connect", "request", "place", "skip", "exchange", "chat", "on", "2", "RGB4", "ann", "-1"]
)
_LINE = st.one_of(
    st.lists(_WORDS, max_size=5).map(" ".join).map(str.encode),
    st.binary(max_size=40),
)


@settings(max_examples=200)
@given(st.lists(_LINE, max_size=20), st.integers(1, 7))
def test_any_input_gets_messages_or_error_lines(lines: list[bytes], chunk: int) -> None:
    """Whatever arrives, in any chunking: typed messages or one of the three error lines;
    the server session never raises and stays in a known state."""
    server = ServerSession(max_line_size=64)
    data = b"\n".join(lines) + b"\n"
    for i in range(0, len(data), chunk):
        for event in server.receive_data(data[i : i + chunk]):
            if isinstance(event, Rejected):
                assert event.data in ERROR_LINES
            elif isinstance(event, Connect):
                server.send(server.welcome())
            elif isinstance(event, Request):
                server.send(ErrorReply(ErrorWord.INVALID_COMMAND))
        assert server.state in State


def test_error_words_from_a_client_are_peer_errors_not_rejections() -> None:
    """Every error word a client sends is a PeerError (never an error line back), in any
    state, held lines included; the state does not move."""
    server = ServerSession()
    assert server.receive_data(b"invalidName\n") == [PeerError(ErrorWord.INVALID_NAME)]
    events = server.receive_data(b"connect ann\ninvalidCommand\n")
    assert events[0] == Connect("ann")
    assert server.state is State.NAMING
    server.send(Welcome(()))
    assert server.next_events() == [PeerError(ErrorWord.INVALID_COMMAND)]
    assert server.receive_data(b"INVALIDMOVE\r\n") == [PeerError(ErrorWord.INVALID_MOVE)]
    assert server.state is State.LOBBY
    refused = server.receive_data(b"invalidWhatever\n")
    assert len(refused) == 1
    assert isinstance(refused[0], Rejected)

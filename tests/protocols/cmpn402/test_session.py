"""CMPN402 state machines: every client message in every server state, and the client side."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.protocols.cmpn402 import (
    Answer,
    ChallengeAccepted,
    ChallengeAcceptedTimes,
    ChallengeMove,
    ChallengeRejected,
    ChallengeRejectedTiles,
    ClientSession,
    ClientState,
    EndMessage,
    EndReason,
    ExchangeMove,
    ExchangeNotice,
    ExchangeTiles,
    Invalid,
    LocalProtocolError,
    Name,
    NameRequest,
    NoChallenge,
    NoChallengeTiles,
    NoChallengeTimes,
    PassMove,
    PassNotice,
    PlayMove,
    PlayNotice,
    ProtocolError,
    RemoteProtocolError,
    ServerInput,
    ServerMachine,
    ServerState,
    Start,
)
from meeple.protocols.cmpn402.session import SERVER_TRANSITIONS

EMPTY = tuple("." * 15 for _ in range(15))

CLIENT_MESSAGES = {
    "NAME": Name("x").encode(),
    "PASS": PassMove().encode(),
    "EXCHANGE": ExchangeMove("A").encode(),
    "PLAY": PlayMove(8, 8, 0, "AB", 4).encode(),
    "NO_CHALLENGE": NoChallenge().encode(),
    "CHALLENGE": ChallengeMove().encode(),
    "BAD_PLAY": bytes.fromhex("04 00 00 00 00 00 00 00 00 00 00 00 00 00 00"),
}

# (state, message) -> accepted from: "unnamed" (any client before its NAME) or "turn".
ACCEPTED = {
    (ServerState.INIT, "NAME"): "unnamed",
    (ServerState.READY, "NAME"): "unnamed",
    (ServerState.IDLE, "NAME"): "unnamed",
    (ServerState.AWAIT_CHALLENGE, "NAME"): "unnamed",
    (ServerState.IDLE, "PASS"): "turn",
    (ServerState.IDLE, "EXCHANGE"): "turn",
    (ServerState.IDLE, "PLAY"): "turn",
    (ServerState.AWAIT_CHALLENGE, "NO_CHALLENGE"): "turn",
    (ServerState.AWAIT_CHALLENGE, "CHALLENGE"): "turn",
}


def _machine(state: ServerState) -> ServerMachine:
    machine = ServerMachine()
    machine.state = state
    return machine


@pytest.mark.parametrize("state", list(ServerState))
@pytest.mark.parametrize("kind", sorted(CLIENT_MESSAGES))
@pytest.mark.parametrize(("named", "on_turn"), [(False, False), (True, False), (True, True)])
def test_every_message_in_every_server_state(
    state: ServerState, kind: str, named: bool, on_turn: bool
) -> None:
    """A message is taken only in the states the spec lists, from the right client;
    a malformed PLAY is INVALID only for the player on turn in IDLE; else ignored."""
    machine = _machine(state)
    data = CLIENT_MESSAGES[kind]
    who = ACCEPTED.get((state, kind))
    allowed = (who == "unnamed" and not named) or (who == "turn" and named and on_turn)
    if kind == "BAD_PLAY":
        with pytest.raises(RemoteProtocolError) as info:
            machine.receive(data, named=named, on_turn=on_turn)
        invalid = state is ServerState.IDLE and named and on_turn
        assert info.value.answer is (Answer.INVALID if invalid else Answer.IGNORE)
    elif allowed:
        assert machine.receive(data, named=named, on_turn=on_turn).encode() == data
    else:
        with pytest.raises(RemoteProtocolError) as info:
            machine.receive(data, named=named, on_turn=on_turn)
        assert info.value.answer is Answer.IGNORE
    assert machine.state is state  # receiving alone never moves the machine


def test_server_transitions_follow_the_spec() -> None:
    """The happy path of Figure 1, and a disconnect from anywhere back to INIT."""
    machine = ServerMachine()
    for event, state in [
        (ServerInput.CONNECT, ServerState.INIT),
        (ServerInput.NAME, ServerState.INIT),
        (ServerInput.PLAYERS_READY, ServerState.READY),
        (ServerInput.START, ServerState.IDLE),
        (ServerInput.MOVE_INVALID, ServerState.IDLE),
        (ServerInput.PLAY_VALID, ServerState.AWAIT_CHALLENGE),
        (ServerInput.CHALLENGE_REJECTED, ServerState.IDLE),
        (ServerInput.PLAY_VALID, ServerState.AWAIT_CHALLENGE),
        (ServerInput.CHALLENGE_TIMEOUT, ServerState.IDLE),
        (ServerInput.GAME_OVER, ServerState.READY),
        (ServerInput.DISCONNECT, ServerState.INIT),
    ]:
        assert machine.advance(event) is state
    with pytest.raises(LocalProtocolError):
        machine.advance(ServerInput.PASS)
    for state in ServerState:
        assert SERVER_TRANSITIONS[(state, ServerInput.DISCONNECT)] is ServerState.INIT


def _client(state: ClientState) -> ClientSession:
    session = ClientSession()
    session.state = state
    return session


SERVER_MESSAGES = [
    NameRequest(),
    Start(1, "ABCDEFG", EMPTY, 0, 0, 1, 2),
    Start(2, "ABCDEFG", EMPTY, 0, 0, 1, 2),
    PassNotice(1, 2),
    ExchangeTiles("AB"),
    ExchangeNotice(2, 1, 2),
    PlayNotice(8, 8, 0, "AB", 4, 10, 1, 2),
    NoChallengeTiles("AB"),
    NoChallengeTimes(1, 2),
    ChallengeAccepted(),
    ChallengeAcceptedTimes(1, 2),
    ChallengeRejected(),
    ChallengeRejectedTiles("AB", 1, 2),
    Invalid(1, 2),
]

C = ClientState
CLIENT_EXPECTED = {
    (C.INIT, "NameRequest"): C.INIT,
    (C.READY, "NameRequest"): C.INIT,
    (C.READY, "Start1"): C.THINKING,
    (C.READY, "Start2"): C.IDLE,
    (C.AWAIT_EXCHANGE_RESPONSE, "Invalid"): C.THINKING,
    (C.AWAIT_EXCHANGE_RESPONSE, "ExchangeTiles"): C.IDLE,
    (C.AWAIT_PLAY_RESPONSE, "Invalid"): C.THINKING,
    (C.AWAIT_PLAY_RESPONSE, "ChallengeRejectedTiles"): C.THINKING,
    (C.AWAIT_PLAY_RESPONSE, "NoChallengeTiles"): C.IDLE,
    (C.AWAIT_PLAY_RESPONSE, "ChallengeAccepted"): C.IDLE,
    (C.IDLE, "PassNotice"): C.THINKING,
    (C.IDLE, "ExchangeNotice"): C.THINKING,
    (C.IDLE, "PlayNotice"): C.AWAIT_AGENT_CHALLENGE,
    (C.AWAIT_AGENT_CHALLENGE, "NoChallengeTimes"): C.THINKING,
    (C.AWAIT_CHALLENGE_RESPONSE, "NoChallengeTimes"): C.THINKING,
    (C.AWAIT_CHALLENGE_RESPONSE, "ChallengeAcceptedTimes"): C.THINKING,
    (C.AWAIT_CHALLENGE_RESPONSE, "ChallengeRejected"): C.IDLE,
}


def _key(message: object) -> str:
    if isinstance(message, Start):
        return f"Start{message.order}"
    return type(message).__name__


@pytest.mark.parametrize("state", list(ClientState))
@pytest.mark.parametrize("message", SERVER_MESSAGES, ids=_key)
def test_every_server_message_in_every_client_state(state: ClientState, message: object) -> None:
    """The client takes exactly the spec's inputs; anything else is refused, state unchanged."""
    session = _client(state)
    expected = CLIENT_EXPECTED.get((state, _key(message)))
    data = message.encode()  # type: ignore[attr-defined]
    if expected is None:
        with pytest.raises(RemoteProtocolError):
            session.receive(data)
        assert session.state is state
    else:
        assert session.receive(data) == message
        assert session.state is expected


@pytest.mark.parametrize("state", list(ClientState))
def test_end_from_any_client_state_goes_to_ready(state: ClientState) -> None:
    """Spec, client State: * ANY: END goes to READY."""
    session = _client(state)
    session.receive(EndMessage(EndReason.STOPPED, 1, 2).encode())
    assert session.state is ClientState.READY


def test_client_sends_only_what_its_state_allows() -> None:
    """THINKING sends PASS/EXCHANGE/PLAY; AWAIT_AGENT_CHALLENGE sends NO_CHALLENGE/CHALLENGE."""
    session = ClientSession()
    with pytest.raises(LocalProtocolError):
        session.send(PassMove())
    assert session.send(Name("a")) == b"\x00a"
    assert session.state is ClientState.READY
    for state, message, following in [
        (C.THINKING, PassMove(), C.IDLE),
        (C.THINKING, ExchangeMove("A"), C.AWAIT_EXCHANGE_RESPONSE),
        (C.THINKING, PlayMove(8, 8, 0, "AB", 4), C.AWAIT_PLAY_RESPONSE),
        (C.AWAIT_AGENT_CHALLENGE, NoChallenge(), C.THINKING),
        (C.AWAIT_AGENT_CHALLENGE, ChallengeMove(), C.AWAIT_CHALLENGE_RESPONSE),
    ]:
        session = _client(state)
        session.send(message)
        assert session.state is following
    with pytest.raises(LocalProtocolError):
        _client(C.IDLE).send(NoChallenge())
    session = _client(C.IDLE)
    session.connection_lost()
    assert session.state is C.INIT


@given(st.lists(st.sampled_from(SERVER_MESSAGES) | st.binary(max_size=30), max_size=30))
def test_random_server_orders_never_break_the_client(messages: list[object]) -> None:
    """Any order of server messages (or junk) leaves the client in a known state."""
    session = ClientSession()
    for message in messages:
        data = message if isinstance(message, bytes) else message.encode()  # type: ignore[attr-defined]
        before = session.state
        try:
            session.receive(data)
        except ProtocolError:
            assert session.state is before
        assert session.state in ClientState


@given(
    st.lists(
        st.tuples(
            st.sampled_from(sorted(CLIENT_MESSAGES)) | st.binary(max_size=20).map(repr),
            st.booleans(),
            st.booleans(),
        ),
        max_size=30,
    ),
    st.sampled_from(list(ServerState)),
)
def test_random_client_orders_only_raise_remote_errors(
    items: list[tuple[str, bool, bool]], state: ServerState
) -> None:
    """Any order of client messages or junk: a message or a RemoteProtocolError, never a crash."""
    machine = _machine(state)
    for kind, named, on_turn in items:
        data = CLIENT_MESSAGES.get(kind, kind.encode())
        with contextlib.suppress(RemoteProtocolError):
            machine.receive(data, named=named, on_turn=on_turn)
        assert machine.state is state

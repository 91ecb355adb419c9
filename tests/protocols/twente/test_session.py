"""Twente sessions: a client and a server session paired in memory, and every refusal."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from meeple.games.scrabble.board import Direction
from meeple.protocols.twente import (
    Announce,
    Chat,
    ClientSession,
    Command,
    ConnectionClosed,
    Enqueue,
    Error,
    ErrorCode,
    Exchange,
    Flag,
    GameOver,
    GameOverReason,
    Ignored,
    InformQueue,
    InformSwap,
    InformWord,
    Join,
    LocalProtocolError,
    MakeSwap,
    MakeWord,
    Message,
    NewTiles,
    NotifyChat,
    NotifyTurn,
    Pass,
    PeerError,
    PlayerDisconnected,
    PlayWord,
    Rejected,
    RequestGame,
    SendChat,
    ServerSession,
    StartGame,
    State,
    Welcome,
)
from meeple.protocols.twente.messages import CLIENT_COMMANDS
from meeple.protocols.twente.session import CLIENT_SENDS, OUT_OF_STATE, SERVER_SENDS

from .strategies import client_messages

E = ErrorCode
CHAT = frozenset({Flag.CHAT})
ACROSS = Direction.ACROSS


class Pair:
    """A client session wired to a server session, with no sockets in between."""

    def __init__(self) -> None:
        self.client = ClientSession()
        self.server = ServerSession()

    def up(self, message: Message) -> list[object]:
        """The client sends; the server receives."""
        assert isinstance(message, Announce | RequestGame | MakeWord | MakeSwap | SendChat | Error)
        return list(self.server.receive_data(self.client.send(message)))

    def down(self, message: Message) -> list[object]:
        """The server sends; the client receives."""
        return list(self.client.receive_data(self.server.send(message)))  # type: ignore[arg-type]

    def states(self) -> tuple[State, State]:
        return self.client.state, self.server.state


def welcomed(
    name: str, flags: frozenset[Flag] = frozenset(), server_flags: frozenset[Flag] = CHAT
) -> Pair:
    pair = Pair()
    assert pair.up(Announce(name, flags)) == [Join(name, flags)]
    assert pair.states() == (State.ANNOUNCING, State.ANNOUNCING)
    assert pair.down(Welcome(name, server_flags)) == [Welcome(name, server_flags)]
    assert pair.states() == (State.LOBBY, State.LOBBY)
    return pair


def test_whole_flow_two_players() -> None:
    """Happy flow (spec and ERRATA order): announce, queue, start, moves, game over, again."""
    alice = welcomed("Alice")
    bob = welcomed("Bob", CHAT)
    assert alice.client.server_flags == CHAT
    assert not alice.client.has_extension(Flag.CHAT)
    assert bob.server.has_extension(Flag.CHAT)

    assert alice.up(RequestGame(2)) == [Enqueue(2)]
    assert alice.down(InformQueue(1, 2)) == [InformQueue(1, 2)]
    assert bob.up(RequestGame()) == [Enqueue(2)]
    for pair in (alice, bob):
        assert pair.states() == (State.QUEUED, State.QUEUED)
        assert pair.down(InformQueue(2, 2)) == [InformQueue(2, 2)]
        assert pair.down(StartGame(("Alice", "Bob"))) == [StartGame(("Alice", "Bob"))]
        assert pair.states() == (State.GAME, State.GAME)
        assert pair.client.players == ("Alice", "Bob")
    assert alice.down(NewTiles("DOGSAVE")) == [NewTiles("DOGSAVE")]
    assert bob.down(NewTiles("PQGTRIE")) == [NewTiles("PQGTRIE")]
    alice.down(NotifyTurn(True, "Alice"))
    bob.down(NotifyTurn(False, "Alice"))
    assert alice.client.your_turn
    assert not bob.client.your_turn

    # Bob's client refuses to move out of turn; a client that does it anyway gets E009.
    with pytest.raises(LocalProtocolError) as info:
        bob.client.send(MakeSwap("PQG"))
    assert info.value.code is E.NOT_YOUR_TURN
    [rejected] = bob.server.receive_data(MakeSwap("PQG").encode())
    assert isinstance(rejected, Rejected)
    assert rejected.data == b"ERROR\x1fE009\x1e"

    assert alice.up(MakeWord(7, 7, ACROSS, "DOG")) == [PlayWord(7, 7, ACROSS, "DOG")]
    assert not alice.client.your_turn
    alice.down(NewTiles("HFK"))
    for pair in (alice, bob):
        pair.down(InformWord("Alice", 7, 7, ACROSS, "DOG"))
    alice.down(NotifyTurn(False, "Bob"))
    bob.down(NotifyTurn(True, "Bob"))

    assert bob.up(MakeSwap("PQG")) == [Exchange("PQG")]
    bob.down(NewTiles("ACA"))
    for pair in (alice, bob):
        pair.down(InformSwap("Bob", 3))
    alice.down(NotifyTurn(True, "Alice"))
    bob.down(NotifyTurn(False, "Alice"))

    assert alice.up(MakeSwap("")) == [Pass()]
    for pair in (alice, bob):
        pair.down(InformSwap("Alice", 0))
    assert bob.up(SendChat("gg")) == [Chat("gg")]
    bob.down(NotifyChat("Bob", "gg"))
    with pytest.raises(LocalProtocolError):
        alice.server.send(NotifyChat("Bob", "gg"))  # Alice did not announce CHAT

    result = GameOver(GameOverReason.WIN, (("Alice", 257), ("Bob", 332)))
    for pair in (alice, bob):
        assert pair.down(result) == [result]
        assert pair.states() == (State.LOBBY, State.LOBBY)
        assert not pair.client.your_turn
        assert pair.client.players == ()

    assert alice.up(RequestGame()) == [Enqueue(2)]
    assert alice.states() == (State.QUEUED, State.QUEUED)


def test_disconnect_flow() -> None:
    """ERRATA: PLAYERDISCONNECTED to the others, then GAMEOVER DISCONNECT."""
    bob = welcomed("Bob")
    bob.up(RequestGame())
    bob.down(StartGame(("Alice", "Bob")))
    bob.down(PlayerDisconnected("Alice"))
    over = GameOver(GameOverReason.DISCONNECT, (("Alice", 0), ("Bob", 12)))
    assert bob.down(over) == [over]
    assert bob.states() == (State.LOBBY, State.LOBBY)


def test_eof() -> None:
    """The end of the stream is one ConnectionClosed; afterwards nothing may be sent."""
    pair = welcomed("Alice")
    assert pair.server.receive_eof() == [ConnectionClosed()]
    assert pair.server.receive_eof() == []
    assert pair.server.state is State.CLOSED
    with pytest.raises(LocalProtocolError):
        pair.server.send(Error(E.INVALID_ARGUMENT))
    with pytest.raises(LocalProtocolError):
        pair.server.receive_data(b"REQUESTGAME\x1e")
    assert pair.client.receive_eof() == [ConnectionClosed()]
    assert pair.client.receive_eof() == []
    with pytest.raises(LocalProtocolError):
        pair.client.send(RequestGame())


# --- announcing -----------------------------------------------------------------------


def test_messages_after_announce_wait_for_its_reply() -> None:
    """Pipelined messages after ANNOUNCE are held, then judged in the state WELCOME makes."""
    server = ServerSession()
    assert server.receive_data(b"ANNOUNCE\x1fAlice\x1eREQUESTGAME\x1eANNOUNCE\x1fA\x1e") == [
        Join("Alice", frozenset())
    ]
    assert server.held == 2
    server.send(Welcome("Alice"))
    events = server.receive_data(b"")
    assert events[0] == Enqueue(2)
    assert isinstance(events[1], Rejected)
    assert events[1].code is E.ALREADY_ANNOUNCED
    assert server.held == 0


def test_name_taken_returns_to_new() -> None:
    """spec E001: after the refusal the client is not announced and may try again."""
    pair = Pair()
    pair.up(Announce("Alice", CHAT))
    held = pair.server.receive_data(b"REQUESTGAME\x1e")
    assert held == []
    assert pair.down(Error(E.NAME_TAKEN)) == [Error(E.NAME_TAKEN)]
    assert pair.states() == (State.NEW, State.NEW)
    assert pair.server.client_flags == frozenset()
    [rejected] = pair.server.receive_data(b"")
    assert isinstance(rejected, Rejected)
    assert rejected.code is E.NOT_ANNOUNCED
    assert pair.up(Announce("Alicia")) == [Join("Alicia", frozenset())]


def test_held_messages_are_bounded() -> None:
    """A client pipelining many messages before WELCOME cannot grow the hold queue."""
    server = ServerSession(max_held=4)
    server.receive_data(b"ANNOUNCE\x1fAlice\x1e" + b"REQUESTGAME\x1e" * 100)
    assert server.held == 4
    assert server.dropped == 96


def test_e001_only_answers_an_announce() -> None:
    """Sending E001 outside ANNOUNCING is a local bug."""
    pair = welcomed("Alice")
    with pytest.raises(LocalProtocolError):
        pair.server.send(Error(E.NAME_TAKEN))


# --- refusals -------------------------------------------------------------------------


def server_in(
    state: State, *, flags: frozenset[Flag] = frozenset(), teamplay: bool = False
) -> ServerSession:
    """A server session brought to ``state`` by the happy flow."""
    server = ServerSession()
    if state is State.NEW:
        return server
    server.receive_data(Announce("Alice", flags).encode())
    if state is State.ANNOUNCING:
        return server
    server_flags = CHAT | ({Flag.TEAMPLAY} if teamplay else set())
    server.send(Welcome("Alice", frozenset(server_flags)))
    if state is State.LOBBY:
        return server
    server.receive_data(b"REQUESTGAME\x1e")
    server.send(InformQueue(1, 2))
    if state is State.QUEUED:
        return server
    server.send(StartGame(("Bob", "Alice")))
    assert server.state is State.GAME
    return server


REFUSALS = [
    (State.NEW, b"REQUESTGAME\x1e", E.NOT_ANNOUNCED),
    (State.NEW, b"MAKEMOVE\x1fSWAP\x1fA\x1e", E.NOT_ANNOUNCED),
    (State.NEW, b"SENDCHAT\x1fhi\x1e", E.NOT_ANNOUNCED),
    (State.LOBBY, b"ANNOUNCE\x1fAlice\x1e", E.ALREADY_ANNOUNCED),
    (State.LOBBY, b"MAKEMOVE\x1fWORD\x1fH8\x1fH\x1fDOG\x1e", E.NOT_IN_GAME),
    (State.LOBBY, b"SENDCHAT\x1fhi\x1e", E.UNKNOWN_COMMAND),  # CHAT not announced
    (State.LOBBY, b"REQUESTGAME\x1f3\x1e", E.INVALID_ARGUMENT),  # no TEAMPLAY
    (State.LOBBY, b"REQUESTGAME\x1f9\x1e", E.INVALID_ARGUMENT),
    (State.QUEUED, b"ANNOUNCE\x1fBob\x1e", E.ALREADY_ANNOUNCED),
    (State.QUEUED, b"MAKEMOVE\x1fPASS\x1e", E.NOT_IN_GAME),
    (State.GAME, b"ANNOUNCE\x1fAlice\x1e", E.ALREADY_ANNOUNCED),
    (State.GAME, b"REQUESTGAME\x1e", E.GAME_ALREADY_STARTED),
    (State.GAME, b"MAKEMOVE\x1fWORD\x1fH8\x1fH\x1fDOG\x1e", E.NOT_YOUR_TURN),  # no NOTIFYTURN
    (State.GAME, b"MAKEMOVE\x1fSWAP\x1e", E.NOT_YOUR_TURN),  # the state is judged first
    (State.GAME, b"WELCOME\x1fAlice\x1e", E.UNKNOWN_COMMAND),  # a server's command
    (State.GAME, b"FOO\x1e", E.UNKNOWN_COMMAND),
    (State.NEW, b"ANNOUNCE\x1e", E.INVALID_ARGUMENT),
    (State.NEW, b"ANNOUNCE\x1f\x7fAl\x1e", E.INVALID_ARGUMENT),
    (State.NEW, b"ANNOUNCE\x1f\xc3\x28\x1e", E.INVALID_ARGUMENT),  # not UTF-8
    (State.LOBBY, b"SENDCHAT\x1f" + b"x" * 5000 + b"\x1e", E.INVALID_ARGUMENT),  # too long
]


@pytest.mark.parametrize(("state", "data", "code"), REFUSALS)
def test_refusals_reply_with_the_spec_code_and_keep_the_state(
    state: State, data: bytes, code: ErrorCode
) -> None:
    """Each message not allowed gets ERROR with its code; the session stays where it was."""
    server = server_in(state)
    [event] = server.receive_data(data)
    assert isinstance(event, Rejected)
    assert event.code is code
    assert event.data == Error(code).encode()
    assert server.state is state


def test_turn_checks_follow_notifyturn() -> None:
    """spec E009: a move is accepted only between NOTIFYTURN 1 and this player's move."""
    server = server_in(State.GAME)
    server.send(NotifyTurn(True, "Alice"))
    assert server.receive_data(b"MAKEMOVE\x1fSWAP\x1fAB\x1e") == [Exchange("AB")]
    assert server.your_turn  # the room has not answered yet
    server.send(Error(E.TOO_FEW_TILES_IN_BAG))  # refused: still Alice's turn
    assert server.receive_data(b"MAKEMOVE\x1fPASS\x1e") == [Pass()]
    server.send(InformSwap("Alice", 0))
    assert not server.your_turn
    [event] = server.receive_data(b"MAKEMOVE\x1fPASS\x1e")
    assert isinstance(event, Rejected)
    assert event.code is E.NOT_YOUR_TURN


def test_bad_move_arguments_in_turn() -> None:
    """In turn, argument errors come through: E003 direction, E004 coordinate (spec)."""
    server = server_in(State.GAME)
    server.send(NotifyTurn(True, "Alice"))
    events = server.receive_data(
        b"MAKEMOVE\x1fSWAP\x1e"
        b"MAKEMOVE\x1fWORD\x1fC10\x1fD\x1fDOG\x1e"
        b"MAKEMOVE\x1fWORD\x1fC16\x1fH\x1fDOG\x1e"
    )
    assert [e.code for e in events if isinstance(e, Rejected)] == [
        E.INVALID_ARGUMENT,
        E.INVALID_ARGUMENT,
        E.INVALID_COORDINATE,
    ]


def test_teamplay_allows_bigger_games() -> None:
    """ERRATA: with TEAMPLAY announced by the server, 3 and 4 players may be requested."""
    server = server_in(State.LOBBY, teamplay=True)
    assert server.receive_data(b"REQUESTGAME\x1f4\x1e") == [Enqueue(4)]


def test_chat_with_chat_announced() -> None:
    """SENDCHAT from a client that announced CHAT (to a CHAT server) is a Chat request."""
    server = server_in(State.QUEUED, flags=CHAT)
    assert server.receive_data(b"SENDCHAT\x1fhello \xe2\x82\xac\x1e") == [Chat("hello €")]


def test_client_error_is_reported() -> None:
    """ERROR from a client (e.g. E002 to an unexpected command) is a PeerError in any state."""
    server = server_in(State.NEW)
    assert server.receive_data(b"ERROR\x1fE002\x1e") == [PeerError(E.UNKNOWN_COMMAND)]
    server = server_in(State.GAME)
    assert server.receive_data(b"ERROR\x1fE010\x1f3\x1e") == [
        PeerError(E.WRONG_NUMBER_OF_PLAYERS, 3)
    ]


@pytest.mark.parametrize("code", [E.WRONG_NUMBER_OF_PLAYERS, E.GAME_ALREADY_STARTED])
def test_queue_refusal_returns_to_lobby(code: ErrorCode) -> None:
    """spec E010/E015: a refused REQUESTGAME leaves both sides in the lobby."""
    pair = welcomed("Alice", server_flags=frozenset({Flag.TEAMPLAY}))
    pair.up(RequestGame(3))
    refusal = Error(code, 2 if code is E.WRONG_NUMBER_OF_PLAYERS else None)
    assert pair.down(refusal) == [refusal]
    assert pair.states() == (State.LOBBY, State.LOBBY)


def test_error_after_queue_acknowledged_keeps_queue() -> None:
    """Once INFORMQUEUE acknowledged the request, an ERROR does not take the player out."""
    pair = welcomed("Alice")
    pair.up(RequestGame())
    pair.down(InformQueue(1, 2))
    pair.down(Error(E.GAME_ALREADY_STARTED))
    assert pair.states() == (State.QUEUED, State.QUEUED)


@pytest.mark.parametrize(
    "message",
    [
        StartGame(("Alice", "Bob")),  # not queued
        InformQueue(1, 2),
        NewTiles("ABC"),
        GameOver(GameOverReason.WIN, (("Alice", 1), ("Bob", 2))),
        NotifyChat("Bob", "hi"),  # Alice did not announce CHAT
        Welcome("Alice"),  # already welcomed
        Announce("Alice"),  # a client's command
        Error(E.WRONG_NUMBER_OF_PLAYERS),  # E010 without its count
    ],
)
def test_server_cannot_send_what_the_state_forbids(message: Message) -> None:
    """send() raises LocalProtocolError and leaves the state alone."""
    server = server_in(State.LOBBY)
    with pytest.raises(LocalProtocolError):
        server.send(message)  # type: ignore[arg-type]
    assert server.state is State.LOBBY


@pytest.mark.parametrize(
    "message",
    [
        StartGame(("Bob", "Carol")),  # without the client
        NotifyTurn(True, "Bob"),  # "your turn" naming someone else
        NotifyTurn(False, "Alice"),
    ],
)
def test_server_messages_must_fit_the_client(message: Message) -> None:
    """A STARTGAME without the client, or a NOTIFYTURN flag that contradicts the name."""
    server = server_in(State.GAME) if isinstance(message, NotifyTurn) else server_in(State.QUEUED)
    with pytest.raises(LocalProtocolError):
        server.send(message)  # type: ignore[arg-type]


# --- client side ----------------------------------------------------------------------


def test_client_answers_chat_it_did_not_announce_with_e002() -> None:
    """spec E002 example: NOTIFYCHAT to a client without CHAT gets 'Unknown command'."""
    pair = welcomed("Alice")
    [event] = pair.client.receive_data(b"NOTIFYCHAT\x1fBob\x1fhi\x1e")
    assert isinstance(event, Rejected)
    assert event.data == b"ERROR\x1fE002\x1e"


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"MAKEMOVE\x1fPASS\x1e", E.UNKNOWN_COMMAND),  # a client's command
        (b"BOGUS\x1e", E.UNKNOWN_COMMAND),
        (b"NEWTILES\x1fab\x1e", E.INVALID_ARGUMENT),
        (b"\xff\x1e", E.INVALID_ARGUMENT),
    ],
)
def test_client_rejects_malformed_server_messages(data: bytes, code: ErrorCode) -> None:
    """The client session turns bad server input into a Rejected with a reply code."""
    pair = welcomed("Alice")
    [event] = pair.client.receive_data(data)
    assert isinstance(event, Rejected)
    assert event.code is code
    assert pair.client.state is State.LOBBY


def test_client_ignores_messages_out_of_state() -> None:
    """A well-formed server message that makes no sense now is Ignored, state unchanged."""
    pair = welcomed("Alice")
    [event] = pair.client.receive_data(b"NEWTILES\x1fABC\x1e")
    assert isinstance(event, Ignored)
    assert event.message == NewTiles("ABC")
    assert pair.client.state is State.LOBBY


def test_refused_move_gives_the_turn_back() -> None:
    """After ERROR for our move (e.g. E006) it is still our turn, so we may try again."""
    pair = welcomed("Alice")
    pair.up(RequestGame())
    pair.down(StartGame(("Alice", "Bob")))
    pair.down(NotifyTurn(True, "Alice"))
    pair.up(MakeWord(7, 7, ACROSS, "DOK"))
    assert not pair.client.your_turn
    pair.down(Error(E.UNKNOWN_WORD))
    assert pair.client.your_turn
    assert pair.up(MakeWord(7, 7, ACROSS, "DOG")) == [PlayWord(7, 7, ACROSS, "DOG")]


@pytest.mark.parametrize(
    ("message", "code"),
    [
        (RequestGame(3), E.INVALID_ARGUMENT),  # the server has no TEAMPLAY
        (SendChat("hi"), E.UNKNOWN_COMMAND),  # CHAT not on both sides
        (Announce("Alice"), E.ALREADY_ANNOUNCED),
        (MakeSwap("A"), E.NOT_IN_GAME),
    ],
)
def test_client_cannot_send_what_the_state_forbids(message: Message, code: ErrorCode) -> None:
    """The client session refuses to send a message the server would refuse anyway."""
    pair = welcomed("Alice", CHAT, server_flags=frozenset())
    with pytest.raises(LocalProtocolError) as info:
        pair.client.send(message)  # type: ignore[arg-type]
    assert info.value.code is code


def test_client_must_wait_for_welcome() -> None:
    """REQUESTGAME before WELCOME is refused locally (E013)."""
    client = ClientSession()
    client.send(Announce("Alice"))
    with pytest.raises(LocalProtocolError) as info:
        client.send(RequestGame())
    assert info.value.code is E.NOT_ANNOUNCED


# --- the tables -----------------------------------------------------------------------


@pytest.mark.parametrize("state", [s for s in State if s is not State.CLOSED])
def test_every_client_command_has_an_answer_in_every_state(state: State) -> None:
    """Each client command is either allowed or has its refusal code, never both."""
    for command in CLIENT_COMMANDS:
        allowed = command in CLIENT_SENDS[state]
        refused = command in OUT_OF_STATE[state]
        assert allowed != refused, (state, command)


def test_tables_cover_every_state() -> None:
    """The transition tables name every state, and every target is a state."""
    for table in (CLIENT_SENDS, SERVER_SENDS, OUT_OF_STATE):
        assert set(table) == set(State)
    assert all(
        isinstance(target, State)
        for table in (CLIENT_SENDS, SERVER_SENDS)
        for row in table.values()
        for target in row.values()
    )
    assert SERVER_SENDS[State.GAME][Command.GAMEOVER] is State.LOBBY


# --- properties -----------------------------------------------------------------------

_PIECES = [
    b"ANNOUNCE\x1fAlice\x1fCHAT\x1e",
    b"REQUESTGAME\x1e",
    b"REQUESTGAME\x1f3\x1e",
    b"MAKEMOVE\x1fWORD\x1fH8\x1fH\x1fDOG\x1e",
    b"MAKEMOVE\x1fSWAP\x1f\x1e",
    b"SENDCHAT\x1fhi\x1e",
    b"ERROR\x1fE002\x1e",
    b"\x1f",
    b"\x1e",
    b"\r\n",
]
streams = st.lists(st.one_of(st.sampled_from(_PIECES), st.binary(max_size=40)), max_size=30)


@settings(max_examples=300)
@given(streams, st.sampled_from([State.NEW, State.LOBBY, State.QUEUED, State.GAME]))
def test_random_bytes_only_produce_documented_events(pieces: list[bytes], state: State) -> None:
    """Any byte stream gives requests or Rejected replies, never an exception, bounded."""
    server = server_in(state, flags=CHAT)
    server.max_held = 8
    for piece in pieces:
        for event in server.receive_data(piece):
            if isinstance(event, Rejected):
                assert event.data.startswith(b"ERROR\x1fE0")
            else:
                assert isinstance(
                    event, Join | Enqueue | PlayWord | Exchange | Pass | Chat | PeerError
                )
        assert server.buffered <= server._framer.max_message_size
        assert server.held <= 8
        if server.state is State.ANNOUNCING:
            server.send(Welcome("Alice", CHAT))
            server.receive_data(b"")


class SessionMachine(RuleBasedStateMachine):
    """Random valid messages in random order: right code when refused, table-true states."""

    def __init__(self) -> None:
        super().__init__()
        self.server = ServerSession()

    @rule(message=client_messages)
    def client_sends(self, message: Message) -> None:
        before = self.server.state
        events = self.server.receive_data(message.encode())
        if before is State.ANNOUNCING:
            assert events == []
            return
        [event] = events
        allowed = CLIENT_SENDS[before].get(message.command)
        if isinstance(event, Rejected):
            assert self.server.state is before
            if allowed is None:
                assert event.code is OUT_OF_STATE[before][message.command]
        else:
            assert allowed is not None
            assert self.server.state is allowed

    @precondition(lambda self: self.server.state is State.ANNOUNCING)
    @rule(accept=st.booleans())
    def answer_announce(self, accept: bool) -> None:
        reply = Welcome("Alice", CHAT) if accept else Error(E.NAME_TAKEN)
        self.server.send(reply)
        assert self.server.state is (State.LOBBY if accept else State.NEW)
        self.client_backlog()

    def client_backlog(self) -> None:
        for event in self.server.receive_data(b""):
            # Held messages after a refused ANNOUNCE: refused (E011), a new ANNOUNCE, or
            # the client's own ERROR report, which is allowed in every state.
            assert isinstance(event, Rejected | PeerError) or self.server.state is not State.NEW

    @precondition(lambda self: self.server.state is State.QUEUED)
    @rule(start=st.booleans())
    def queue_moves(self, start: bool) -> None:
        if start:
            self.server.send(StartGame(("Alice", "Zed")))
            assert self.server.state is State.GAME
        else:
            self.server.send(InformQueue(1, 2))
            assert self.server.state is State.QUEUED

    @precondition(lambda self: self.server.state is State.GAME)
    @rule(mine=st.booleans(), over=st.booleans())
    def game_moves(self, mine: bool, over: bool) -> None:
        if over:
            self.server.send(GameOver(GameOverReason.WIN, (("Alice", 1), ("Zed", 2))))
            assert self.server.state is State.LOBBY
        else:
            self.server.send(NotifyTurn(mine, "Alice" if mine else "Zed"))
            assert self.server.your_turn is mine

    @invariant()
    def bounded(self) -> None:
        assert self.server.buffered == 0
        assert self.server.held <= self.server.max_held


TestSessionMachine = SessionMachine.TestCase
TestSessionMachine.settings = settings(max_examples=100, stateful_step_count=30)


def test_an_unreadable_client_error_is_not_answered_either() -> None:
    """An ERROR with an unknown code or no code is still the peer's error report: a
    PeerError without a code, never an ERROR back (no bounce between two peers)."""
    for data in (b"ERROR\x1fE999\x1e", b"ERROR\x1e", b"error\x1fjunk\x1fmore\x1e"):
        server = server_in(State.LOBBY)
        assert server.receive_data(data) == [PeerError(None)]
        assert server.state is State.LOBBY

"""A hypothesis state machine: a Clarkson client and server session, paired in memory, agree."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from meeple.games.scrabble.board import Board
from meeple.games.scrabble.moves import Placement
from meeple.protocols.clarkson.messages import (
    BoardPush,
    ClientMessage,
    Exchange,
    Goodbye,
    Hello,
    Nok,
    Ok,
    Pass,
    Place,
    Quit,
    Ready,
    Score,
    ServerMessage,
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
    SERVER_SENDS,
    TURN_COMMANDS,
    ClientSession,
    Close,
    Greeted,
    Reply,
    ServerSession,
)

CLIENT_MESSAGES: list[ClientMessage] = [
    Hello("1.0.1", "Linux", "Python/3.11", "t"),
    Hello("2.0", "Linux", "Python/3.11", "t"),
    UserSet("Al"),
    UserSet("Bo"),
    Ready(),
    Place((Placement(7, 7, "A"),)),
    Pass(),
    Exchange(),
    Exchange("A"),
    Quit(),
]
SERVER_MESSAGES: list[ServerMessage] = [
    Ok("fine"),
    Nok("no"),
    UserJoin("zed"),
    UserChange("zed", "Zoe"),
    Starting(),
    Score(3, "zed"),
    BoardPush.from_board(Board()),
    Tiles("ABC"),
    Winner(3, "zed"),
    Goodbye(),
]


class PairedSessions(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.server = ServerSession()
        self.client = ClientSession()
        self.server.name = self.client.name = "10.0.0.1"
        self.client.receive_data(self.server.send(Hello("1.0.1", "x", "Python/3", "meeple")))

    @precondition(lambda self: not self.server.closed)
    @rule(message=st.sampled_from(CLIENT_MESSAGES))
    def client_sends(self, message: ClientMessage) -> None:
        """The client sends what its session allows; the server answers as a handler would."""
        allowed = type(message) in CLIENT_SENDS[self.client.state]
        if not allowed or (isinstance(message, TURN_COMMANDS) and not self.client.your_turn):
            return
        for event in self.server.receive_data(self.client.send(message)):
            if isinstance(event, Greeted | Reply | Close):
                self.client.receive_data(event.data)
            elif isinstance(event, UserSet):
                change = UserChange(self.server.name or "", event.name)
                self.client.receive_data(self.server.send(change))
            elif isinstance(event, Ready):
                self.client.receive_data(self.server.send(Ok("wait")))
            else:  # a turn: the room would answer; here it is simply accepted
                self.client.receive_data(self.server.send(Ok("done")))

    @precondition(lambda self: not self.server.closed)
    @rule(message=st.sampled_from(SERVER_MESSAGES), turn=st.booleans(), mine=st.booleans())
    def server_sends(self, message: ServerMessage, turn: bool, mine: bool) -> None:
        """The server sends what its table allows now; the client reads it in the same state."""
        if turn:
            message = Turn(self.server.name if mine and self.server.name else "zed")
        if type(message) not in SERVER_SENDS[self.server.state]:
            return
        events = self.client.receive_data(self.server.send(message))
        assert events == [message]

    @rule(data=st.sampled_from([b"READY\r\n", b"\x00" * 64, b"\r\n", b"QUIT"]))
    def stray_bytes_after_close(self, data: bytes) -> None:
        """Once closed, the server session reads nothing more (lines after QUIT are dropped)."""
        if self.server.closed:
            assert self.server.receive_data(data) == []

    @invariant()
    def both_sides_agree(self) -> None:
        assert self.client.state == self.server.state
        assert self.client.name == self.server.name
        assert self.client.your_turn == self.server.your_turn


PairedSessions.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
TestPairedSessions = PairedSessions.TestCase

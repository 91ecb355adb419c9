"""Inputs ``make fuzz`` found that raised something other than the protocol's own error."""

from __future__ import annotations

from meeple.protocols.spectrangle import (
    ClientSession,
    Connect,
    ProtocolViolation,
    Rejected,
    ServerSession,
)


def test_server_chat_line_with_a_lone_carriage_return_is_a_violation() -> None:
    """``chat <name> a\\rb`` from a server: a ProtocolViolation, not a ValueError from the
    message's own check (fuzz input ``\\x01chat :hello  th\\x1ee\\rre\\n``)."""
    client = ClientSession()
    client.send(Connect("ann", ("chat",)))
    for line in (b"chat :hello  th\x1ee\rre\n", b"chat bob a\rb\n"):
        [event] = client.receive_data(line)
        assert isinstance(event, ProtocolViolation)


def test_client_chat_line_with_a_lone_carriage_return_is_invalid_command() -> None:
    """``chat a\\rb`` from a client: the session's invalidCommand, not a ValueError from
    the message's own check (643 fuzz inputs, e.g. ``chat ch\\xc2\\xaeat\\rz``)."""
    server = ServerSession()
    server.receive_data(b"connect ann chat\n")
    server.send(server.welcome())
    for line in (b" chat ch\xc2\xaeat\rz\x00\x00\n", b"chat a\rb\n"):
        [event] = server.receive_data(line)
        assert isinstance(event, Rejected)
        assert event.data == b"invalidCommand\n"

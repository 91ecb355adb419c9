"""Inputs ``make fuzz`` found that raised something other than the protocol's own error."""

from __future__ import annotations

from meeple.protocols.spectrangle import ClientSession, Connect, ProtocolViolation


def test_server_chat_line_with_a_lone_carriage_return_is_a_violation() -> None:
    """``chat <name> a\\rb`` from a server: a ProtocolViolation, not a ValueError from the
    message's own check (fuzz input ``\\x01chat :hello  th\\x1ee\\rre\\n``)."""
    client = ClientSession()
    client.send(Connect("ann", ("chat",)))
    for line in (b"chat :hello  th\x1ee\rre\n", b"chat bob a\rb\n"):
        [event] = client.receive_data(line)
        assert isinstance(event, ProtocolViolation)

"""The browser protocol's Scrabble challenge actions (issue 13): ``challenge``, ``accept``."""

from __future__ import annotations

import json

import pytest

from meeple.protocols.web import ErrorCode, Play, decode
from meeple.protocols.web.errors import RemoteProtocolError


@pytest.mark.parametrize("kind", ["challenge", "accept"])
def test_challenge_and_accept_are_plays_without_fields(kind: str) -> None:
    """They name no player and no play: the seat is the sender, the play the pending one."""
    assert decode(json.dumps({"type": "play", "action": {"kind": kind}})) == Play(kind, ())
    with pytest.raises(RemoteProtocolError) as refused:
        decode(json.dumps({"type": "play", "action": {"kind": kind, "player": 1}}))
    assert refused.value.code is ErrorCode.BAD_MESSAGE

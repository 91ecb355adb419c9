"""An edge's relay of spectator views (meeple.node.views.ViewRelay): whether a room runs,
for ``/games/<uid>`` (the live page or the stored replay). The CI run on 562ea3b: a page
asked for in the moment between a game's end and its room's close cached the owner's
snapshot, and the edge served the live page of a finished game from then on."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.bus import LocalBus, Namespace, schema
from meeple.bus.base import Subscription
from meeple.node import wire
from meeple.node.views import ViewRelay


def _snapshot(finished: bool, n: int) -> bytes:
    data = {"finished": finished, "view": {"board": [[0] * 3] * 3, "moves": n}}
    return schema.encode(
        schema.ViewFrame(at=(n, 1, n), data=msgspec.Raw(msgspec.json.encode(data)))
    )


@settings(max_examples=10, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=4))
async def test_a_room_runs_only_while_its_owner_answers_with_a_game_not_over(
    finished: list[bool],
) -> None:
    """The owner answers the edge's asks with snapshots (each finished or not), then the
    room closes. The room runs while the last answer is of a game not over; once the
    room is gone, it does not, whatever the edge heard of it before."""
    ns = Namespace("vr")
    bus = LocalBus()
    relay = ViewRelay(bus, ns)
    answers = iter(enumerate(finished, start=1))
    serving: Subscription | None = None

    async def owner(_s: str, _request: object) -> bytes:
        n, over = next(answers)
        return _snapshot(over, n)

    try:
        serving = await bus.answer(ns.room_commands("r1"), owner, wire.registry())
        for over in finished:
            assert await relay.exists("r1") is not over
        await serving.close()
        serving = None
        assert await relay.exists("r1") is False
        assert await relay.exists("r1") is False
    finally:
        if serving is not None:
            await serving.close()
        relay.close()
        await bus.close()

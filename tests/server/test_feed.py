"""The feed: snapshots built once, handed to every subscriber, bounded for slow viewers."""

from __future__ import annotations

import asyncio

from meeple.server.feed import Feed, game_topic


async def test_subscriber_gets_the_last_snapshot_then_new_ones() -> None:
    """A new subscriber starts with the topic's last snapshot, then sees each new one."""
    feed = Feed()
    feed.publish("lobby", lambda: {"n": 1})
    sub = feed.subscribe("lobby")
    assert (await sub.get()).data == {"n": 1}
    feed.publish("lobby", lambda: {"n": 2})
    item = await sub.get()
    assert (item.seq, item.data) == (2, {"n": 2})


async def test_unchanged_snapshot_is_not_handed_out_again() -> None:
    """Publishing an equal snapshot does nothing (the room publishes after every command)."""
    feed = Feed()
    sub = feed.subscribe("t")
    assert feed.publish("t", lambda: {"a": 1}) is not None
    assert feed.publish("t", lambda: {"a": 1}) is None
    assert sub.pending() == 1


async def test_builder_runs_once_for_all_subscribers_and_json_is_shared() -> None:
    """One build and one JSON text, however many subscribers."""
    feed = Feed()
    subs = [feed.subscribe("t") for _ in range(50)]
    builds = []
    feed.publish("t", lambda: builds.append(1) or {"x": 1})
    items = [s.get_nowait() for s in subs]
    assert len(builds) == 1
    assert all(i is items[0] for i in items)
    assert items[0].json() == '{"x":1}'


async def test_a_slow_subscriber_keeps_only_the_newest_snapshot_per_topic() -> None:
    """A viewer that does not read holds one item per topic, the newest; it is told to resync."""
    feed = Feed(limit=4)
    slow = feed.subscribe("t")
    for n in range(1000):
        feed.publish("t", lambda n=n: {"n": n})
    assert slow.pending() == 1
    assert slow.get_nowait().data == {"n": 999}  # type: ignore[union-attr]
    assert slow.resync
    assert slow.dropped == 999


async def test_queue_is_bounded_across_topics() -> None:
    """With many topics the oldest items go once the limit is reached."""
    feed = Feed(limit=3)
    sub = feed.subscribe(*(f"t{i}" for i in range(10)))
    for i in range(10):
        feed.publish(f"t{i}", lambda i=i: {"i": i})
    assert sub.pending() == 3
    assert [sub.get_nowait().data["i"] for _ in range(3)] == [7, 8, 9]  # type: ignore[union-attr]


async def test_a_failing_builder_does_not_raise_into_the_publisher() -> None:
    """A bug in a view is logged; the room that published goes on."""
    feed = Feed()

    def broken() -> dict[str, object]:
        raise RuntimeError("view bug")

    assert feed.publish("t", broken) is None


async def test_close_wakes_a_waiting_reader_and_unsubscribes() -> None:
    """get() ends with EOFError once the subscription is closed."""
    feed = Feed()
    sub = feed.subscribe(game_topic("ab"))
    waiter = asyncio.create_task(sub.get())
    await asyncio.sleep(0)
    sub.close()
    try:
        await waiter
    except EOFError:
        pass
    else:
        raise AssertionError("get() returned after close")
    assert feed.subscribers(game_topic("ab")) == 0


async def test_remove_drops_a_topic_and_its_queued_items() -> None:
    """Unsubscribing from one topic keeps the others."""
    feed = Feed()
    sub = feed.subscribe("a", "b")
    feed.publish("a", lambda: {"a": 1})
    feed.publish("b", lambda: {"b": 1})
    sub.remove("a")
    assert sub.pending() == 1
    assert sub.get_nowait().topic == "b"  # type: ignore[union-attr]
    feed.forget("b")
    assert feed.last("b") is None

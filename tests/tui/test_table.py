"""tui/table.py: what every game's table keeps alike, in one place (issue 32): the shared
events are one class in every game, and they change every game's table the same way."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from meeple.tui import table
from meeple.tui.santorini import events as santorini_events
from meeple.tui.scrabble import events as scrabble_events
from meeple.tui.scrabble.table import Table as ScrabbleTable
from meeple.tui.spectrangle import events as spectrangle_events
from meeple.tui.spectrangle.table import Table as SpectrangleTable
from meeple.tui.table import (
    MAX_LOG,
    ChatReceived,
    ConnectionLost,
    Phase,
    Refused,
    standings,
)


def test_the_shared_events_are_one_class_in_every_game() -> None:
    for name in ("Welcomed", "Refused", "ChatReceived", "ConnectionLost", "Say"):
        assert getattr(scrabble_events, name) is getattr(table, name)
        assert getattr(spectrangle_events, name) is getattr(table, name)
    assert santorini_events.ConnectionLost is table.ConnectionLost


@given(
    events=st.lists(
        st.one_of(
            st.builds(Refused, st.text(max_size=4), st.text(max_size=20)),
            st.builds(ChatReceived, st.text(max_size=8), st.text(max_size=20)),
        ),
        max_size=30,
    ),
    reason=st.text(max_size=20),
)
def test_shared_events_change_every_table_alike(
    events: list[Refused | ChatReceived], reason: str
) -> None:
    """Refusals, chat lines and the end of the connection leave a Scrabble and a
    Spectrangle table in the same shared state."""
    tables = [ScrabbleTable(name="ann"), SpectrangleTable(name="ann")]
    for t in tables:
        for event in events:
            t.apply(event)
        t.apply(ConnectionLost(reason))
    first, second = tables
    for t in tables:
        assert t.phase is Phase.CLOSED
        assert t.closed_reason == reason
        assert not t.my_turn
        assert len(t.chat_lines) <= MAX_LOG
    assert first.log == second.log
    assert first.chat_lines == second.chat_lines
    assert first.refusal == second.refusal


@given(st.lists(st.tuples(st.text(min_size=1, max_size=6), st.integers(-50, 500)), max_size=5))
def test_standings_name_the_winner_or_a_tie(scores: list[tuple[str, int]]) -> None:
    ranked = sorted(scores, key=lambda s: -s[1])
    line = standings(ranked)
    if not ranked:
        assert line == ": a tie"
    elif [s for _, s in ranked].count(ranked[0][1]) == 1:
        assert line.endswith(f": {ranked[0][0]} wins")
    else:
        assert line.endswith(": a tie")

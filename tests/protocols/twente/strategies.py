"""Hypothesis strategies for Twente values and messages, shared by the test modules."""

from __future__ import annotations

import string

from hypothesis import strategies as st

from meeple.games.scrabble.board import Direction
from meeple.protocols.twente import messages as m

# Letters, digits, punctuation and symbols from all of Unicode; inner spaces allowed.
_NAME_CHARS = st.characters(categories=["L", "N", "P", "S", "Zs"])
names = st.text(_NAME_CHARS, min_size=1, max_size=m.MAX_NAME_LENGTH).filter(
    lambda s: s == s.strip()
)
flags = st.frozensets(st.sampled_from(m.Flag))
coordinates = st.integers(0, 14)
directions = st.sampled_from(Direction)
words = st.text(string.ascii_letters, min_size=1, max_size=15)
rack_tiles = st.text(string.ascii_uppercase + "!", min_size=0, max_size=m.RACK_SIZE)
player_counts = st.integers(m.MIN_PLAYERS, m.MAX_PLAYERS)
scores = st.integers(-999, 99_999)
chat_texts = st.text(
    st.characters(exclude_characters="\x1e\x1f", exclude_categories=["Cs"]),
    min_size=1,
    max_size=m.MAX_CHAT_LENGTH,
)
player_lists = st.lists(names, min_size=2, max_size=4, unique=True).map(tuple)


@st.composite
def game_overs(draw: st.DrawFn) -> m.GameOver:
    players = draw(player_lists)
    reason = draw(st.sampled_from(m.GameOverReason))
    return m.GameOver(reason, tuple((p, draw(scores)) for p in players))


@st.composite
def inform_queues(draw: st.DrawFn) -> m.InformQueue:
    required = draw(player_counts)
    return m.InformQueue(draw(st.integers(0, required)), required)


errors = st.one_of(
    st.builds(m.Error, st.sampled_from([c for c in m.ErrorCode if c.value != "E010"])),
    st.builds(m.Error, st.just(m.ErrorCode.WRONG_NUMBER_OF_PLAYERS), player_counts),
)

client_messages = st.one_of(
    st.builds(m.Announce, names, flags),
    st.builds(m.RequestGame, st.none() | player_counts),
    st.builds(m.MakeWord, coordinates, coordinates, directions, words),
    st.builds(m.MakeSwap, rack_tiles),
    st.builds(m.SendChat, chat_texts),
    errors,
)

server_messages = st.one_of(
    st.builds(m.Welcome, names, flags),
    inform_queues(),
    st.builds(m.StartGame, player_lists),
    st.builds(m.NewTiles, rack_tiles),
    st.builds(m.NotifyTurn, st.booleans(), names),
    st.builds(m.InformWord, names, coordinates, coordinates, directions, words),
    st.builds(m.InformSwap, names, st.integers(0, m.RACK_SIZE)),
    game_overs(),
    st.builds(m.PlayerDisconnected, names),
    st.builds(m.NotifyChat, names, chat_texts),
    errors,
)

all_messages = st.one_of(client_messages, server_messages)

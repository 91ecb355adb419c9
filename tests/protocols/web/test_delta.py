"""The spectators' deltas: RFC 6902 patches between two snapshots (protocols/web/delta.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.protocols.web import Delta, PatchError, Subscribe, apply_patch, decode, diff
from meeple.protocols.web.delta import pointer

# JSON values as the feed's snapshots hold them: keys with / and ~ too (pointer escapes).
SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-2, 2) | st.text(max_size=4)
KEYS = st.sampled_from(["a", "b", "c", "a/b", "~0", "", "moves", "view"])
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=25,
)


def _json_equal(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@given(JSON, JSON)
def test_a_patch_turns_the_old_snapshot_into_the_new_one(old: Any, new: Any) -> None:
    """Any two documents: the patch applied to the old one gives the new one exactly
    (true is not 1, 1.0 is not 1), or there is no patch and the whole is sent."""
    ops = diff(old, new)
    if ops is None:
        return
    assert _json_equal(apply_patch(old, ops), new)
    assert json.loads(json.dumps(ops)) == ops  # plain JSON on the wire


@given(st.dictionaries(KEYS, JSON, max_size=5), st.data())
def test_a_small_change_to_a_big_snapshot_is_a_small_patch(base: dict[str, Any], data: Any) -> None:
    """Appending one move to a long log is one add of that move, far smaller than the log."""
    moves = [{"player": i % 2, "text": f"8D WORD{i}", "score": i} for i in range(30)]
    old = {**base, "moves": moves}
    new = {**base, "moves": [*moves, {"player": 0, "text": "H8 ZAX", "score": 50}]}
    ops = diff(old, new)
    assert ops == [{"op": "add", "path": "/moves/-", "value": new["moves"][-1]}]


def test_no_patch_when_the_whole_is_no_larger() -> None:
    """A changed scalar root, or a change of type, is sent whole."""
    assert diff(1, 2) is None
    assert diff({"a": 1}, [1]) is None
    assert diff({"a": [1, 2, 3]}, {"b": 0}) is None  # the patch would be longer
    assert diff({"a": 1}, {"a": 1}) == []


def test_bool_and_number_are_different_values() -> None:
    """JSON's true and 1 differ, though Python's == says they are equal."""
    ops = diff({"x": 1, "pad": "p" * 40}, {"x": True, "pad": "p" * 40})
    assert ops == [{"op": "replace", "path": "/x", "value": True}]


@pytest.mark.parametrize(
    "ops",
    [
        "not a list",
        [{"op": "replace", "path": "/nope/0", "value": 1}],
        [{"op": "remove", "path": "/a/9"}],
        [{"op": "move", "path": "/a", "from": "/b"}],
        [{"op": "add", "path": "a", "value": 1}],
        [{"op": "replace", "path": "/a/01", "value": 1}],
        [{"op": "add", "path": "", "value": 1}],
        [{"op": "replace", "path": "/missing", "value": 1}],
        [{"op": "add", "path": "/a/-"}],
    ],
)
def test_a_patch_that_does_not_fit_is_refused(ops: Any) -> None:
    """A wrong pointer, index or operation raises PatchError; the document is untouched."""
    doc = {"a": [1, 2], "b": {"c": 3}}
    with pytest.raises(PatchError):
        apply_patch(doc, ops)
    assert doc == {"a": [1, 2], "b": {"c": 3}}


def test_pointers_escape_tilde_and_slash() -> None:
    """RFC 6901 §3: ~ is ~0 and / is ~1 in a pointer's token."""
    assert pointer("a/b", "~c", 3) == "/a~1b/~0c/3"
    assert apply_patch(
        {"a/b": {"~c": [0, 0, 0, 0]}}, [{"op": "replace", "path": "/a~1b/~0c/3", "value": 9}]
    ) == {"a/b": {"~c": [0, 0, 0, 9]}}


def test_subscribe_takes_delta_and_a_delta_encodes_its_base() -> None:
    """``delta`` is an optional boolean of subscribe; a delta names the seq it applies to."""
    assert decode('{"type":"subscribe","topic":"game","uid":"ab","delta":true}') == Subscribe(
        "game", "ab", delta=True
    )
    assert decode('{"type":"subscribe","topic":"lobby"}') == Subscribe("lobby")
    with pytest.raises(Exception, match="delta must be"):
        decode('{"type":"subscribe","topic":"lobby","delta":1}')
    message = json.loads(Delta("game", "ab", 7, 6, '[{"op":"remove","path":"/a"}]').encode())
    assert message == {
        "type": "game",
        "uid": "ab",
        "seq": 7,
        "base": 6,
        "patch": [{"op": "remove", "path": "/a"}],
    }

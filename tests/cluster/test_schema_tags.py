"""Every message of the bus schema carries its kind (``t``) from schema 2 on: a payload
without it, or with another kind's, is refused, not taken for the kind the reader asked
for (msgspec alone would take an untagged payload as the one tagged type it decodes)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.bus.codec import WireError
from meeple.bus.schema import SCHEMA, NameValue, WatchChatLine, decode, encode

LINE = WatchChatLine(origin="x.1", uid="abc123", sender="ann", text="hi")


def _with(payload: bytes, **changes: object) -> bytes:
    obj = json.loads(payload)
    for key, value in changes.items():
        if value is None:
            obj.pop(key, None)
        else:
            obj[key] = value
    return json.dumps(obj).encode()


def test_a_message_reads_back_as_itself() -> None:
    assert decode(encode(LINE), WatchChatLine) == LINE


@given(tag=st.one_of(st.none(), st.text(max_size=20).filter(lambda t: t != "watchchat")))
def test_a_payload_without_its_kind_or_of_another_kind_is_refused(tag: str | None) -> None:
    payload = _with(encode(LINE), t=tag)
    with pytest.raises(WireError) as refused:
        decode(payload, WatchChatLine)
    assert refused.value.kind in {"tag", "type"}


def test_an_unknown_field_is_ignored_as_the_version_rule_says() -> None:
    assert decode(_with(encode(LINE), later="field"), WatchChatLine) == LINE


def test_a_kept_value_of_schema_one_reads_without_a_tag() -> None:
    """Schema 1 wrote values without ``t`` or ``v``: a kept value (a KV bucket's) of
    that schema still reads, as the version rule promises."""
    value = NameValue(name="ann", holder="edge-1")
    old = _with(encode(value), t=None, v=None)
    assert decode(old, NameValue) == value
    assert SCHEMA >= 2

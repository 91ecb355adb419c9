"""Issue 31, the kit core without sockets: set-up steps, verdicts, transport faults by
name, tolerances, root causes and the one-screen summary."""

from __future__ import annotations

import codecs

from hypothesis import given
from hypothesis import strategies as st

from meeple.check.core import (
    CheckFailed,
    Context,
    Fault,
    Level,
    Result,
    Status,
    Target,
    registry,
    run_checks,
)
from meeple.check.report import causes, exit_status, to_text
from meeple.check.wire import diagnose, joined_or_split, missing

RS = b"\x1e"
TARGET = Target("127.0.0.1", 9, {})


async def _run(*scenarios: tuple[str, str]) -> list[Result]:
    """Run checks named ``id`` in ``section`` whose scenarios are the module's ``_<kind>``."""
    checks, check = registry("t.server")
    for id_, section in scenarios:
        check(id_, section, Level.MUST, id_)(KINDS[id_.split("-")[0]])
    return await run_checks(checks, TARGET, wait=0.1)


async def _setup_fails(ctx: Context) -> None:
    with ctx.setup("ANNOUNCE x", "ANNOUNCE"):
        raise CheckFailed("x: expected WELCOME, got 'HELLO'", got=b"HELLO\x1e")


async def _utf16(ctx: Context) -> None:
    fault = diagnose(codecs.BOM_UTF16_LE + "WELCOME".encode("utf-16-le"), RS, "Delimiters")
    raise CheckFailed("x: message is not UTF-8", got=b"\xff\xfe", fault=fault)


async def _quirk(ctx: Context) -> None:
    ctx.tolerate(Fault("NUL padding", "send only the message", tolerated=True))
    ctx.passed()


async def _nothing(ctx: Context) -> None:
    """Decides nothing."""


async def _slow(ctx: Context) -> None:
    import asyncio

    await asyncio.sleep(0.12)
    ctx.passed()


KINDS = {"setup": _setup_fails, "utf16": _utf16, "quirk": _quirk, "nothing": _nothing}


async def test_a_failed_setup_step_fails_only_the_check_of_its_section() -> None:
    """The step's own rule FAILs; another rule's check could not test, naming the step."""
    own, other = await _run(("setup-own", "ANNOUNCE"), ("setup-other", "E001"))
    assert own.status is Status.FAIL
    assert other.status is Status.COULD_NOT_TEST
    assert other.step is not None
    assert other.step.what == "ANNOUNCE x"
    assert other.got == b"HELLO\x1e"
    assert "set-up step 'ANNOUNCE x' (ANNOUNCE)" in other.detail
    (cause,) = causes([own, other])
    assert (cause.failed, cause.blocked) == (1, 1)
    assert cause.section == "ANNOUNCE"


async def test_a_transport_fault_fails_its_framing_rule_and_blocks_the_rest() -> None:
    """UTF-16 FAILs the Delimiters check; every other check is blocked by it, one cause."""
    framing, other = await _run(("utf16-framing", "Delimiters"), ("utf16-other", "E002"))
    assert framing.status is Status.FAIL
    assert other.status is Status.COULD_NOT_TEST
    assert other.detail.startswith("blocked by UTF-16 text (little-endian, with a BOM)")
    (cause,) = causes([framing, other])
    assert cause.title == "UTF-16 text (little-endian, with a BOM)"
    text = to_text("t", [framing, other])
    assert "UTF-16 text (little-endian, with a BOM)" in text.splitlines()[2]


async def test_a_tolerated_quirk_is_reported_never_failed() -> None:
    """A pass that needed an ERRATA tolerance is "tolerated"; it counts as a pass."""
    (r,) = await _run(("quirk-a", "2 Grammar"))
    assert r.status is Status.TOLERATED
    assert exit_status([r]) == 0
    assert not causes([r])
    assert "Tolerated (ERRATA, nothing to fix): NUL padding (1 checks)" in to_text("t", [r])


async def test_a_check_that_decides_nothing_could_not_test() -> None:
    (r,) = await _run(("nothing-a", "X"))
    assert r.status is Status.COULD_NOT_TEST


async def test_a_long_check_gets_progress_lines() -> None:
    """``waiting`` hears of a check still running, every ``progress_every`` seconds."""
    checks, check = registry("t.server")
    check("slow", "X", Level.MUST, "slow")(_slow)
    heard: list[float] = []
    results = await run_checks(
        checks, TARGET, wait=0.1, waiting=lambda c, s: heard.append(s), progress_every=0.05
    )
    assert results[0].status is Status.PASS
    assert heard
    assert heard == sorted(heard)


def test_the_summary_fits_one_screen_with_many_causes() -> None:
    """Forty distinct failures: at most 50 lines, none wider than 110 characters."""
    checks, check = registry("t.server")
    results = [
        Result(
            c,
            Status.FAIL,
            f"expected X{i}, got {'y' * 300}",
            got=f"Y{i}".encode() * 80,
        )
        for i, c in enumerate(
            check(f"c{i}", f"S{i}", Level.MUST, "t" * 200)(_nothing) and checks[-1]
            for i in range(40)
        )
    ]
    text = to_text("t", results)
    assert len(text.splitlines()) <= 50
    assert max(len(line) for line in text.splitlines()) <= 110
    assert "more causes" in text


NAMED = {
    codecs.BOM_UTF16_LE
    + "WELCOME\x1e".encode("utf-16-le"): "UTF-16 text (little-endian, with a BOM)",
    codecs.BOM_UTF16_BE + "WELCOME\x1e".encode("utf-16-be"): "UTF-16 text (big-endian, with a BOM)",
    "WELCOME\x1fname\x1e".encode("utf-16-le"): "UTF-16 text (little-endian, no BOM)",
    "WELCOME\x1fname\x1e".encode("utf-16-be"): "UTF-16 text (big-endian, no BOM)",
    "WELCOME\x1fJosé\x1e".encode("latin-1")
    + b"INFORMQUEUE\x1f1\x1f2\x1e": "Latin-1 text (not UTF-8)",
    b"WELCOME\x1fname\n": "a line end instead of RS",
    b"WELCOME\x1fname\x1e\nINFORMQUEUE\x1f1\x1f2\x1e\n": "a line end after RS",
    b"WELCOME\x1fname\x1e\r\n": "a line end after RS",
    b"HELLO 1.0.1,a,b/1,c\r\n" + b"\x00" * 40: "NUL padding",
}


def test_diagnose_names_each_transport_fault() -> None:
    """Each fault class by name, from the bytes; well-formed bytes: no fault."""
    for data, name in NAMED.items():
        fault = diagnose(data, RS, "Delimiters")
        assert fault is not None, (data, name)
        assert fault.name == name, (data, fault)
        assert fault.sections == ("Delimiters",)
        assert fault.evidence
    assert diagnose(b"WELCOME\x1fname\x1eINFORMQUEUE\x1f1\x1f2\x1e", RS, "Delimiters") is None
    assert diagnose(b"HELLO 1.0.1,a,b/1,c\r\nOK\r\n", b"\n", "2 Grammar") is None
    bare = diagnose(
        b"HELLO 1.0.1,a,b/1,c\nOK\n",
        b"\n",
        "2 Grammar",
        frozenset({"a bare LF as the line end"}),
        b"\r\n",
    )
    assert bare is not None
    assert bare.tolerated
    assert bare.sections == ()
    cr = diagnose(b"HELLO 1.0.1,a,b/1,c\rOK\r", b"\n", "2 Grammar")
    assert diagnose(b"waiting a\nstart with a b\n", b"\n", "T") is None  # LF is the line end
    assert cr is not None
    assert cr.name == "CR alone as the line end"


def test_joined_and_split_messages_are_named() -> None:
    joined = joined_or_split("INFORMQUEUE", "WELCOME\x1fnameINFORMQUEUE\x1f1\x1f2", "Delimiters")
    assert joined is not None
    assert joined.name == "two messages joined"
    split = joined_or_split("WELCOME", "WELC", "Delimiters")
    assert split is not None
    assert split.name == "a message split in two"
    assert joined_or_split("WELCOME", "ERROR\x1fE001", "Delimiters") is None


@given(st.binary(max_size=3000), st.sampled_from([RS, b"\n"]))
def test_diagnose_is_total(data: bytes, terminator: bytes) -> None:
    """Any bytes in: a Fault or None, never an exception; evidence bounded."""
    fault = diagnose(data, terminator, "S")
    assert fault is None or len(fault.evidence) <= 64


@given(st.text(max_size=200), st.text(max_size=200))
def test_joined_or_split_is_total(word: str, got: str) -> None:
    joined_or_split(word, got, "S")


def test_what_did_not_come_is_said_without_a_stray_article() -> None:
    """Issue 31: "no reply", never "no a reply"; "the move's lines did not come"."""
    assert missing("a reply") == "no reply"
    assert missing("an answer") == "no answer"
    assert missing("WELCOME") == "no WELCOME"
    assert missing("the move's lines") == "the move's lines did not come"


@given(st.text(max_size=40))
def test_missing_never_says_no_an_article(what: str) -> None:
    """Whatever the kit waits for, the words never read "no a ", "no an " or "no the "."""
    said = missing(what)
    assert not said.startswith(("no a ", "no an ", "no the "))

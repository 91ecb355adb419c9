"""scripts/fetch_axe.py: the browser tests' axe-core is the pinned release, whole, or
nothing (issue 34: axe-core 4.14 in the browser tests). No network here: the package is
made in memory; the real one is fetched by `make test`."""

from __future__ import annotations

import base64
import hashlib
import io
import sys
import tarfile

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.scripts import load_script
from tests.web.helpers import AXE_SCRIPT

fetch_axe = load_script("scripts/fetch_axe.py")


def _package(member: str, body: bytes) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo(member)
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    return out.getvalue()


def _integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def test_the_pinned_package_gives_its_axe_min_js() -> None:
    body = f"/*! axe v{fetch_axe.VERSION}\n */ axe = {{}};".encode()
    package = _package(fetch_axe.MEMBER, body)
    fetch_axe.check(package, _integrity(package))
    assert fetch_axe.axe_min_js(package) == body


@given(flip=st.integers(min_value=0))
def test_a_package_that_is_not_the_pinned_one_is_refused(flip: int) -> None:
    package = _package(fetch_axe.MEMBER, b"/*! axe v" + fetch_axe.VERSION.encode())
    pinned = _integrity(package)
    changed = bytearray(package)
    changed[flip % len(changed)] ^= 0x01
    with pytest.raises(SystemExit, match="integrity mismatch"):
        fetch_axe.check(bytes(changed), pinned)


def test_another_release_or_another_file_is_refused() -> None:
    older = _package(fetch_axe.MEMBER, b"/*! axe v4.12.1\n */")
    with pytest.raises(SystemExit, match="does not say"):
        fetch_axe.axe_min_js(older)
    with pytest.raises(KeyError):
        fetch_axe.axe_min_js(_package("package/other.js", b"x"))


def test_the_tests_run_the_pinned_release() -> None:
    """What `make test` fetched is what the browser tests inject (not the wrapper's)."""
    head = AXE_SCRIPT.read_text(encoding="utf-8")[:200]
    assert f"axe v{fetch_axe.VERSION}" in head, (AXE_SCRIPT, head)
    assert sys.prefix in str(AXE_SCRIPT)

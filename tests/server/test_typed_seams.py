"""Issue 32.1: the seams between the server's parts are typed. What listeners share is a
typed field of ``Services`` (no string-keyed lookup), and the dialects, the server and
the web hold no ``# type: ignore``: mypy --strict checks what each user gets."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from meeple.server.app import Services

SRC = Path(__file__).resolve().parents[2] / "src" / "meeple"
TYPED = ("server", "protocols", "web")
# Where meeple subclasses uvicorn's protocols: uvicorn's own H11Protocol narrows asyncio's
# transport the same way, and its WebSocket types its logger as a Logger.
UVICORN = {"web/listener.py": 2}


def test_services_has_no_string_keyed_lookup() -> None:
    """Every shared object is a named, typed field; no method takes a name to fetch one."""
    assert not [n for n in ("resource", "get", "has_resource") if hasattr(Services, n)]
    fields = {f.name: f.type for f in dataclasses.fields(Services)}
    assert not [n for n, t in fields.items() if "Any" in str(t)]
    calls = re.compile(r"\.resource\(\s*[\"'A-Z]")
    found = [
        f"{path.relative_to(SRC)}:{n}"
        for path in sorted(SRC.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if calls.search(line)
    ]
    assert found == []


def test_no_type_ignore_in_the_dialects_the_server_and_the_web() -> None:
    """A cast hides a seam mypy should check; where a value's type is known the code says
    it (a port, a narrowed union), so none is left in these folders."""
    found = {
        str(path.relative_to(SRC)): text.count("type: ignore")
        for folder in TYPED
        for path in sorted((SRC / folder).rglob("*.py"))
        if "type: ignore" in (text := path.read_text())
    }
    assert found == UVICORN

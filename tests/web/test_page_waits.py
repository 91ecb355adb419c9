"""Browser tests wait on a page's state through tests/web/helpers.py ``wait_for``, which
checks every ``POLL_MS``: Playwright's ``wait_for_function`` on its default polling
("raf") keeps Chromium drawing a frame every 16 ms for as long as a test waits, the
largest avoidable part of the browser tests' CPU (issue 33)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.web import helpers

TESTS = Path(__file__).resolve().parents[1]
CALL = re.compile(r"\.wait_for_function\(")


def test_no_browser_test_waits_on_every_animation_frame() -> None:
    found = [
        f"{path.relative_to(TESTS)}:{number}"
        for path in sorted(TESTS.rglob("*.py"))
        if path != Path(helpers.__file__).resolve()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if CALL.search(line)
    ]
    assert found == [], "use tests.web.helpers.wait_for: " + ", ".join(found)
    assert 0 < helpers.POLL_MS <= 100

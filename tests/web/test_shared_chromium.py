"""The worker's shared Chromium (tests/web/helpers.py ``SharedChromium``): stopped, it
leaves no browser process behind, whatever started it (issue 33)."""

from __future__ import annotations

from pathlib import Path

import psutil
from tests.web.helpers import SharedChromium


def test_stop_leaves_no_browser_process_and_ends_the_drainer(tmp_path: Path) -> None:
    chromium = SharedChromium(tmp_path / "profile")
    assert chromium.endpoint().startswith("ws://127.0.0.1:")
    process = chromium._process
    assert process is not None
    tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
    drainer = chromium._drainer
    chromium.stop()
    _gone, alive = psutil.wait_procs(tree, timeout=30)
    assert not alive, alive
    assert drainer is not None
    assert not drainer.is_alive()

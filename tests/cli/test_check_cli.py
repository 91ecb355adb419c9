"""``meeple check``: the commands, their reports in three formats and their exit status."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from tests.cli.conftest import ServerFactory

from meeple.cli.main import main
from meeple.clients.scrabble_bot import configure, play_twente
from meeple.games.scrabble.lexicon import Lexicon


def test_check_server_writes_text_json_and_junit(
    threaded_server: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run against meeple: the table per section on stdout, JSON and JUnit files, exit 0."""
    server = threaded_server("twente")
    port = server.ports["twente"]
    out_json, out_xml, out_html = tmp_path / "r.json", tmp_path / "r.xml", tmp_path / "r.html"
    code = main(
        [
            "check",
            "server",
            "twente",
            f"127.0.0.1:{port}",
            "--only",
            "e00*",
            "--lexicon",
            "gcide",  # the fixture server's
            "--json",
            str(out_json),
            "--junit",
            str(out_xml),
            "--html",
            str(out_html),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "Nothing to fix" in text.splitlines()[1]
    page = out_html.read_text(encoding="utf-8")
    assert "E001 - Name already taken" in page
    assert "twente.server.e009" in page
    data = json.loads(out_json.read_text())
    assert data["exit_status"] == 0
    assert {r["id"] for r in data["results"]} >= {"twente.server.e001", "twente.server.e009"}
    suites = ET.parse(out_xml).getroot()
    assert suites.tag == "testsuites"
    assert any(s.get("name") == "E004 - Invalid coordinate" for s in suites)


def test_check_server_exits_1_when_nothing_listens(capsys: pytest.CaptureFixture[str]) -> None:
    """No server: every check could not test (or failed), none passed; the exit status is 1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert (
        main(
            [
                "check",
                "server",
                "clarkson",
                f"127.0.0.1:{port}",
                "--wait",
                "0.3",
                "--only",
                "clarkson.server.hello*",
            ]
        )
        == 1
    )
    out = capsys.readouterr().out
    assert "could not test" in out
    assert f"nothing accepts connections at 127.0.0.1:{port}" in out.splitlines()[2]


def test_check_server_fresh_says_when_its_command_fails(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--fresh COMMAND: a command that exits at once is the first cause, with its stderr;
    nothing passed, so the exit status is 1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = f"{sys.executable} -c \"import sys; sys.exit('cannot bind')\""
    argv = ["check", "server", "santorini", f"127.0.0.1:{port}", "--fresh", command]
    assert main([*argv, "--wait", "0.3", "--only", "serverstate"]) == 1
    out = capsys.readouterr().out
    assert "the --fresh command did not start the server" in out.splitlines()[2], out
    assert "cannot bind" in out, out


def test_check_server_refuses_a_bad_address(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "server", "twente", "localhost"]) == 2


def test_check_client_grades_meeples_bot(
    gcide: Lexicon, capsys: pytest.CaptureFixture[str]
) -> None:
    """``check client twente --port N --games 1`` with meeple's bot connecting: exit 0."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def bot() -> None:
        import asyncio
        import time

        async def play() -> None:
            for _ in range(100):
                try:
                    with configure("greedy", 0):
                        await play_twente("127.0.0.1", port, "Zed", gcide, games=1)
                    return
                except OSError:
                    time.sleep(0.05)

        asyncio.run(play())

    thread = threading.Thread(target=bot, daemon=True)
    thread.start()
    code = main(
        [
            "check",
            "client",
            "twente",
            "--port",
            str(port),
            "--games",
            "1",
            "--timeout",
            "60",
            "--turn-wait",
            "10",
        ]
    )
    thread.join(10)
    out = capsys.readouterr().out
    assert f"connect your client to 127.0.0.1:{port}" in out
    assert code == 0, out
    assert "MUST failures: 0" in out


@pytest.mark.parametrize(
    ("protocol", "address", "only"),
    [
        ("santorini", "127.0.0.1:{port}", "santorini.server.register*"),
        ("cmpn402", "ws://127.0.0.1:{port}/", "cmpn402.server.name"),
        ("cmpn402", "127.0.0.1:{port}", "cmpn402.server.start"),
    ],
)
def test_the_new_kits_take_their_addresses_and_exit_1_when_nothing_listens(
    protocol: str, address: str, only: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """AM27 takes HOST:PORT, CMPN402 a ws:// URL or HOST:PORT; nothing there: exit 1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = main(
        ["check", "server", protocol, address.format(port=port), "--wait", "0.3", "--only", only]
    )
    assert code == 1
    assert "could not test" in capsys.readouterr().out


def test_a_bad_cmpn402_url_is_a_usage_error() -> None:
    assert main(["check", "server", "cmpn402", "ws://:99999/"]) == 2


def test_check_server_web_adds_the_ws_path(
    threaded_server: ServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """`meeple check server web HOST:PORT` talks to ws://HOST:PORT/ws."""
    server = threaded_server("web")
    code = main(
        ["check", "server", "web", f"127.0.0.1:{server.ports['web']}", "--only", "web.server.ping"]
    )
    assert code == 0
    assert "pass" in capsys.readouterr().out


def test_a_slow_word_list_load_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], gcide: Lexicon
) -> None:
    """Issue 31.7: a load that takes longer than the progress delay (the first run's
    compile) prints a line on stderr instead of sitting silent; a quick one prints none."""
    import io
    import sys

    import meeple.cli.check as cli
    import meeple.games.scrabble.lexicon as lexicon

    said = threading.Event()

    class Err(io.StringIO):
        def write(self, text: str) -> int:
            if "compiling the word list" in text:
                said.set()
            return super().write(text)

    err = Err()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(cli, "PROGRESS_AFTER", 0.01)

    def slow(name: str) -> Lexicon:
        assert said.wait(10), "no progress line while the load was running"
        return gcide

    monkeypatch.setattr(lexicon, "load_lexicon", slow)
    assert cli._lexicon("gcide") is gcide
    assert "meeple check: compiling the word list gcide" in err.getvalue()

    quick = Err()
    monkeypatch.setattr(sys, "stderr", quick)
    monkeypatch.setattr(cli, "PROGRESS_AFTER", 5.0)
    monkeypatch.setattr(lexicon, "load_lexicon", lambda name: gcide)
    assert cli._lexicon("gcide") is gcide
    assert quick.getvalue() == ""


OPTIONS = ("--lexicon", "gcide", "--timeout", "120")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_check_client_stopped_by_a_signal_removes_its_temporary_database(
    sig: signal.Signals, gcide: Lexicon, tmp_path: Path
) -> None:
    """Issue 31: ``meeple check client`` runs a meeple server on a throw-away database in
    a temporary directory; stopped with SIGTERM (or Ctrl-C) while it waits for the
    client, it stops that server and removes the directory, as at a normal end (SIGTERM
    used to kill it with the directory left behind)."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(src)}
    kit = subprocess.Popen(
        [sys.executable, "-m", "meeple", "check", "client", "cmpn402", "--port", "0", *OPTIONS],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert kit.stdout is not None
        line = kit.stdout.readline()  # blocks until the kit is ready (or exits)
        assert "connect your client to" in line, (line, kit.stderr.read() if kit.stderr else "")
        assert [p.name for p in temp.iterdir() if p.name.startswith("meeple-check-")]
        kit.send_signal(sig)
        out, err = kit.communicate(timeout=60)
    finally:
        if kit.poll() is None:
            kit.kill()
            kit.wait()
    assert not list(temp.iterdir()), (list(temp.iterdir()), err)
    assert kit.returncode == 128 + sig, (kit.returncode, out, err)
    assert "Traceback" not in err, err

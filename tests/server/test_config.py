"""Server settings: defaults, TOML files and flags, with clear errors."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import meeple
from meeple.cli.main import build_parser
from meeple.cli.serve import config_from_args
from meeple.server.config import (
    ClusterConfig,
    ConfigError,
    ServerConfig,
    config_from_mapping,
    load_config,
)


def test_defaults_name_every_protocol_port() -> None:
    """Without a file, the ports are those ARCHITECTURE.md gives."""
    config = load_config(None)
    assert {n: lc.port for n, lc in config.listeners.items()} == {
        "twente": 7777,
        "clarkson": 9000,
        "cmpn402": 8765,
        "santorini": 7778,
        "spectrangle": 4000,
        "web": 8000,
    }
    assert config.host == "127.0.0.1"


def test_web_table_sets_the_listener_and_the_message_limit(tmp_path: Path) -> None:
    """[web] port/enabled go to the web listener; max_message_size is checked."""
    path = tmp_path / "meeple.toml"
    path.write_text("[web]\nport = 8080\nenabled = false\nmax_message_size = 1024\n")
    config = load_config(path)
    assert (config.listeners["web"].port, config.listeners["web"].enabled) == (8080, False)
    assert config.web.max_message_size == 1024
    path.write_text("[web]\nmax_message_size = 10\n")
    with pytest.raises(ConfigError, match="max_message_size"):
        load_config(path)
    path.write_text("[web]\nbogus = 1\n")
    with pytest.raises(ConfigError, match="unknown keys"):
        load_config(path)


def test_toml_file_overrides_defaults(tmp_path: Path) -> None:
    """Keys in the file replace defaults; listeners not named keep theirs."""
    path = tmp_path / "meeple.toml"
    path.write_text(
        'host = "0.0.0.0"\nidle_timeout = 30\n[listeners.twente]\nport = 17777\n'
        "[listeners.clarkson]\nenabled = false\n"
    )
    config = load_config(path)
    assert config.host == "0.0.0.0"
    assert config.idle_timeout == 30
    assert config.listeners["twente"].port == 17777
    assert config.listeners["clarkson"].enabled is False
    assert config.listeners["clarkson"].port == 9000
    assert config.rejoin_grace == 30  # the default grace period of a dropped seat
    path.write_text("rejoin_grace = 5.5\n")
    assert load_config(path).rejoin_grace == 5.5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hots = 'x'\n", "unknown config keys: hots"),
        ("idle_timeout = 'soon'\n", "wrong type"),
        ("idle_timeout = -1\n", "must be positive"),
        ("[listeners.chess]\nport = 1\n", "no listener named 'chess'"),
        ("[listeners.twente]\nport = 70000\n", "0–65535"),
        ("[listeners.twente]\nprot = 1\n", "unknown keys in [listeners.twente]"),
        ("host = \n", "not valid TOML"),
        ("rejoin_grace = -1\n", "rejoin_grace must be between"),
        ("rejoin_grace = 'long'\n", "wrong type"),
    ],
)
def test_bad_files_are_refused_with_the_reason(tmp_path: Path, text: str, message: str) -> None:
    """A typo or a wrong value is an error naming it, never a silent default."""
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_config(path)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    """A config path that does not exist is reported, not a traceback."""
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "nope.toml")


def test_flags_override_the_file(tmp_path: Path) -> None:
    """Command-line flags win over the config file."""
    path = tmp_path / "meeple.toml"
    path.write_text('host = "0.0.0.0"\n[listeners.twente]\nport = 1234\n')
    args = build_parser().parse_args(
        [
            *("serve", "--config", str(path), "--twente-port", "0"),
            *("--host", "127.0.0.1", "--disable", "spectrangle"),
        ]
    )
    config = config_from_args(args)
    assert config.host == "127.0.0.1"
    assert config.listeners["twente"].port == 0
    assert config.listeners["spectrangle"].enabled is False


def test_with_overrides_ignores_unset_values() -> None:
    """None stands for a flag the user did not give."""
    assert ServerConfig().with_overrides(host=None, lexicon="x").lexicon == "x"


def test_only_runs_the_named_listeners_on_free_ports() -> None:
    """only(): the named listeners on port 0, every other one off; an unknown name fails."""
    config = ServerConfig().only("twente", "spectrangle")
    assert {n for n, c in config.listeners.items() if c.enabled} == {"twente", "spectrangle"}
    assert all(c.port == 0 for c in config.listeners.values())
    with pytest.raises(ConfigError):
        ServerConfig().only("gopher")


def test_web_port_and_disable_flags() -> None:
    """--web-port moves the web listener; --disable web turns it off."""
    args = build_parser().parse_args(["serve", "--web-port", "8123"])
    assert config_from_args(args).listeners["web"].port == 8123
    args = build_parser().parse_args(["serve", "--disable", "web"])
    assert config_from_args(args).listeners["web"].enabled is False


# --- [cluster]: the timings of meeple node (issue 32.4) --------------------------------

_CLUSTER_KEYS = [f.name for f in dataclasses.fields(ClusterConfig)]
_VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**9), 10**9),
    st.booleans(),
    st.text(max_size=5),
    st.none(),
)


def test_the_cluster_table_sets_the_node_timings() -> None:
    config = config_from_mapping({"cluster": {"heartbeat": 2, "ask_patience": 30.5}})
    assert config.cluster.heartbeat == 2.0
    assert config.cluster.ask_patience == 30.5
    assert config.cluster.ask_wait == ClusterConfig().ask_wait
    with pytest.raises(ConfigError, match="unknown keys in \\[cluster\\]: heartbeet"):
        config_from_mapping({"cluster": {"heartbeet": 2}})


@settings(max_examples=200, deadline=None)
@given(
    table=st.dictionaries(
        st.one_of(st.sampled_from(_CLUSTER_KEYS), st.text(max_size=12)), _VALUES, max_size=6
    )
)
def test_any_cluster_table_is_a_valid_config_or_a_config_error(table: dict[str, object]) -> None:
    """A ``[cluster]`` table of any keys and values gives timings that are all positive
    and finite (at most a week), or a ConfigError; never another exception."""
    try:
        config = config_from_mapping({"cluster": table})
    except ConfigError:
        return
    for key in _CLUSTER_KEYS:
        value = getattr(config.cluster, key)
        assert isinstance(value, float)
        assert 0 < value <= 7 * 24 * 3600
        if key in table:
            assert value == float(table[key])  # type: ignore[arg-type]


def test_the_jetstream_and_store_retry_timings_are_cluster_keys() -> None:
    """The waits that were constants of node/ and cluster/ are [cluster] keys with the
    same defaults (issue 32.4); a first retry pause above its cap is refused."""
    config = config_from_mapping(
        {"cluster": {"jetstream_wait": 8, "store_retry": 1, "open_poll": 0.5, "stop_wait": 4}}
    )
    assert (config.cluster.jetstream_wait, config.cluster.store_retry) == (8.0, 1.0)
    assert (config.cluster.open_poll, config.cluster.stop_wait) == (0.5, 4.0)
    default = ClusterConfig()
    assert (default.duplicate_window, default.lapse_marker, default.watch_sweep) == (120, 60, 1)
    assert (default.store_retry, default.store_retry_max) == (0.5, 10.0)
    with pytest.raises(ConfigError, match="store_retry"):
        config_from_mapping({"cluster": {"store_retry": 20}})


# The node roles' modules (not `meeple cluster`'s process launcher, nor the nats-server
# runner, which are command-line tools): every pause is the config's.
_ROLES = [
    p
    for d in ("node", "bus", "cluster")
    for p in sorted((Path(meeple.__file__).parent / d).glob("*.py"))
    if p.name not in ("cluster.py", "launch.py", "natsserver.py")
]


@pytest.mark.parametrize("path", _ROLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_node_role_has_no_timing_constant_of_its_own(path: Path) -> None:
    """No ``sleep(<number>)`` and no module-level constant of seconds in node/, bus/ and
    cluster/: their waits, pauses and windows are ClusterConfig's (STYLE rule 15).
    ``sleep(0)`` is no wait: it yields to the loop once (the local backplane's writer
    waits so for its group commit)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "sleep":
            assert not any(isinstance(a, ast.Constant) and a.value != 0 for a in node.args), (
                f"{path.name}:{node.lineno}: sleep of a constant"
            )
    for statement in tree.body:
        if isinstance(statement, ast.Assign | ast.AnnAssign):
            value = statement.value
            values = value.elts if isinstance(value, ast.Tuple) else [value]
            floats = [v for v in values if isinstance(v, ast.Constant) and type(v.value) is float]
            assert not floats, f"{path.name}:{statement.lineno}: a module-level number of seconds"

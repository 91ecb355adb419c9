"""Spectrangle 1.4 as a sans-I/O protocol: line framing, typed messages, session state
machines for both ends, and the dialect that ties them to the engine.

Read ``docs/protocols/spectrangle.md`` for how meeple reads the spec.
"""

from __future__ import annotations

from meeple.protocols.spectrangle import dialect, errors, framing, messages, session, states
from meeple.protocols.spectrangle.dialect import *  # noqa: F403
from meeple.protocols.spectrangle.errors import *  # noqa: F403
from meeple.protocols.spectrangle.framing import *  # noqa: F403
from meeple.protocols.spectrangle.messages import *  # noqa: F403
from meeple.protocols.spectrangle.session import *  # noqa: F403
from meeple.protocols.spectrangle.states import *  # noqa: F403

DEFAULT_PORT = 4000  # "Agreed upon socket port: 4000" (spec, General information)

__all__ = [
    "DEFAULT_PORT",
    *dialect.__all__,
    *errors.__all__,
    *framing.__all__,
    *messages.__all__,
    *session.__all__,
    *states.__all__,
]

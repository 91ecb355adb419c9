"""The Clarkson Scrabble protocol (RFC draft v1.0.1): CRLF text lines over TCP, port 9000.

Sans-I/O, like h11: :mod:`~meeple.protocols.clarkson.framing` cuts bytes into lines,
:mod:`~meeple.protocols.clarkson.messages` reads and writes each message,
:mod:`~meeple.protocols.clarkson.session` walks the conversation on either side, and
:mod:`~meeple.protocols.clarkson.replies` holds the OK/NOK texts. No I/O happens here;
the server's listener is :mod:`meeple.server.edge.clarkson`, the client library
:mod:`meeple.clients.clarkson`. How meeple reads the RFC: docs/protocols/clarkson.md.
"""

from __future__ import annotations

from meeple.protocols.clarkson import errors, framing, messages, replies, session
from meeple.protocols.clarkson.errors import *  # noqa: F403
from meeple.protocols.clarkson.framing import *  # noqa: F403
from meeple.protocols.clarkson.messages import *  # noqa: F403
from meeple.protocols.clarkson.replies import *  # noqa: F403
from meeple.protocols.clarkson.session import *  # noqa: F403

__all__ = [*errors.__all__, *framing.__all__, *messages.__all__, *replies.__all__, *session.__all__]

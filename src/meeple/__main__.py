"""``python -m meeple`` is the ``meeple`` command."""

from __future__ import annotations

import sys

from meeple.cli.main import main

sys.exit(main())

"""The ``meeple`` command."""

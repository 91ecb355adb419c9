"""The store: rooms' action logs, finished games, ratings and accounts.

- :mod:`.database`: the schema and its methods over SQLite (``meeple serve``'s file).
- :mod:`.postgres`: the same over PostgreSQL; :mod:`.pgembed`: a throwaway PostgreSQL
  for tests and benchmarks.
- :mod:`.journal`: every room's log written off the event loop, in order, retried.

On a cluster a room's log is a JetStream stream (:mod:`meeple.cluster.log`) and the
``store`` role writes records to PostgreSQL (:mod:`meeple.node.store`).
"""

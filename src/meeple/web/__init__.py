"""meeple in the browser: the lobby, live games, replays and the contest console.

- :mod:`.listener`: the web listener (uvicorn on the server's loop);
- :mod:`.app`: the Starlette app, its pages and the ``/ws`` WebSocket;
- :mod:`.replays`: finished games for the pages; :mod:`.console`: ``/cmpn402``;
- ``templates/`` and ``static/``: the server-rendered pages and the front end.

See docs/web.md; the browser's protocol is :mod:`meeple.protocols.web`.
"""

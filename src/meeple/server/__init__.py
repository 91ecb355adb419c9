"""The asyncio runtime: listeners, connections, lobby, rooms, clocks and the store."""

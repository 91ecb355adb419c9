"""Players: move choice over the engines, pure computation."""

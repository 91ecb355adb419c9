"""Client libraries (async), one per protocol, and the bot runners built on them."""

"""What every game's board widget does alike: it is focusable, and it redraws when it gains
or loses focus (the cursor shows only while focused) and when its cursor moves."""

from __future__ import annotations

from textual.widget import Widget

__all__ = ["BoardWidget"]


class BoardWidget(Widget, can_focus=True):
    """A focusable board with a ``cursor`` reactive (its type is the game's): a subclass
    declares ``cursor`` and draws it in ``render``; this class redraws when it should."""

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def watch_cursor(self) -> None:
        self.refresh()

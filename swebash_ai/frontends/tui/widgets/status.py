"""The status bar: provider/model, profile, the approval mode, working directory, session tokens (and how many of
them the provider read from its prompt cache, when any) and cost, a spinner.

Token counts arrive once per model request; the bar re-renders at most when something changed, and the
spinner ticks at 8 frames a second only while the model is working.
"""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.widgets import Static

from swebash_ai.frontends.tui.shown import styled
from swebash_ai.safety.terminal_text import safe
from swebash_ai.storage.locations import short_path

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_MODE_STYLE = {"ask": "$text-muted", "accept-edits": "$text-warning bold", "auto": "$text-error bold",
               "plan": "$text-accent bold"}
MODE_MEANING = {"accept-edits": "edits unasked", "auto": "commands unasked, in the sandbox", "plan": "read-only"}
"""What a mode means, shown beside it for as long as it lasts (ask, the default, needs no word)."""


def format_tokens(count: int) -> str:
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.2f}M"


class StatusBar(Static):
    """One line at the bottom of the main screen."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = "starting…"
        self.profile: str | None = None
        self.mode = "ask"
        self.cwd = ""
        self.tokens = 0
        self.cached = 0
        """The part of the prompt tokens in ``tokens`` read from the provider's prompt cache."""
        self.cost: float | None = None
        self.busy_text = ""
        self.budget = ""
        """What the running turn spent (``step 12 of 300 · 45.2k tokens``); cleared when it ends."""
        self._frame = 0
        self._last: Content | None = None

    def on_mount(self) -> None:
        self._spinner = self.set_interval(1 / 8, self._spin, pause=True)
        self.render_status()

    def set_info(self, model: str, profile: str | None, cwd: Path) -> None:
        # A directory's name, a model or profile name from a file: shown, never obeyed by the terminal.
        self.model = safe(model, visible=True)
        self.profile = safe(profile, visible=True) if profile else profile
        self.cwd = safe(short_path(cwd), visible=True)
        self.render_status()

    def set_mode(self, mode: str) -> None:
        """The approval mode (ask, accept-edits, auto, plan): always on show, since it decides what runs unasked."""
        self.mode = safe(mode, visible=True)
        self.render_status()

    def add_usage(self, prompt_tokens: int, completion_tokens: int, cost: float | None, cached_tokens: int = 0) -> None:
        self.tokens += prompt_tokens + completion_tokens
        self.cached += cached_tokens
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost
        self.render_status()

    def reset_usage(self) -> None:
        self.tokens = self.cached = 0
        self.cached = 0
        """The part of the prompt tokens in ``tokens`` read from the provider's prompt cache."""
        self.cost = None
        self.render_status()

    def set_busy(self, text: str) -> None:
        """``text`` (e.g. "thinking") with a spinner; ``""`` when idle."""
        self.busy_text = text
        if text:
            self._spinner.resume()
        else:
            self._spinner.pause()
            self.budget = ""
        self.render_status()

    def set_budget(self, text: str) -> None:
        """What the running turn spent so far, shown beside the spinner until the turn ends."""
        self.budget = text
        self.render_status()

    def _spin(self) -> None:
        self._frame = (self._frame + 1) % len(SPINNER)
        self.render_status()

    def render_status(self) -> None:
        cost = f" · ${self.cost:.4f}" if self.cost is not None else ""
        cached = f" ({format_tokens(self.cached)} cached)" if self.cached else ""  # why a long session stays cheap
        pieces: list[Content | str | tuple[str, str]] = []
        if self.busy_text:
            pieces += [(f"{SPINNER[self._frame]} {self.busy_text}", "$text-accent bold"), "  "]
            if self.budget:
                pieces += [(self.budget, "$text-muted"), "  "]
        pieces += [
            styled(self.model or "no provider", "bold"),  # markers of invisible characters stand out
            styled(f" · profile {self.profile}" if self.profile else ""),
            "  ",
            (f"{self.mode} mode", _MODE_STYLE.get(self.mode, "")),
            (f" ({MODE_MEANING[self.mode]})" if self.mode in MODE_MEANING else "", "$text-muted"),
            "  ",
            styled(self.cwd, "$text-muted"),
            "  ",
            (f"{format_tokens(self.tokens)} tokens{cached}{cost}", "$text-muted"),
        ]
        content = Content.assemble(*pieces)
        if content != self._last:
            self._last = content
            # One line, always (the stylesheet says so): no re-layout of the screen for a spinner frame.
            self.update(content, layout=False)

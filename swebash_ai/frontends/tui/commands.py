"""Slash commands: names, help, parsing and completion (no UI here; the app dispatches them)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: Every slash command with its argument hint and a one-line description, in help order.
SLASH_COMMANDS: dict[str, tuple[str, str]] = {
    "/help": ("", "show the commands and keys"),
    "/clear": ("", "clear the screen (the conversation is kept)"),
    "/new": ("", "start a new conversation (the current one stays saved)"),
    "/model": ("[NAME]", "show the model, or switch to another (e.g. openai/gpt-4.1)"),
    "/ollama": ("[MODEL]", "use the local Ollama server (its first model, or MODEL)"),
    "/login": ("", "set up a provider: pick it, paste its key, pick a model; tested, then saved as the default"),
    "/profile": ("[NAME]", "show the profiles, or switch to one from the config file"),
    "/tools": ("", "list the tools the model may use"),
    "/agents": ("", "list the agents the model may hand a side task to (task tool), and where each comes from"),
    "/rules": ("[remove N]", "the approval mode and rules in force, where each came from; remove one of yours"),
    "/mcp": ("", "list the MCP servers, their state and tools"),
    "/ps": ("[stop ID]", "list the background processes the model started (and the language servers), or stop one"),
    "/diagnostics": ("[PATH]", "the language servers' errors and warnings of a file, or of every file checked"),
    "/theme": ("[NAME]", "list the themes, or switch to one"),
    "/undo": ("[--force]", "put back what the last turn changed: writes and approved commands (again: the one before)"),
    "/save": ("", "save the conversation now and show where"),
    "/sessions": ("[ID]", "pick a saved session to resume (or resume ID)"),
    "/context": ("", "show the instruction files in force (and refused), and the token budget by part"),
    "/stats": ("", "tool calls, approvals, model latency and tokens of this session (swebash-ai stats: all)"),
    "/compact": ("", "replace older turns with a summary the model writes, to free context"),
    "/exit": ("", "quit"),
}

KEYS_HELP: tuple[tuple[str, str], ...] = (
    ("Enter", "send"),
    ("Ctrl+J / Shift+Enter", "new line"),
    ("Up / Down", "previous / next prompt from the history"),
    ("PageUp / PageDown", "scroll the chat (earlier messages: Enter on the line at its top)"),
    ("Tab", "complete a slash command or an @path"),
    ("Ctrl+G", "after a turn stopped at its tool limit: go on with a fresh budget"),
    ("Shift+Tab", "next approval mode (the status bar shows it): ask (a question before any change), accept-edits "
     "(edits in the workspace unasked), auto (also every command the classifier cannot prove read-only, unasked, "
     "inside the sandbox: the workspace writable, the rest of home and other projects absent, no network; "
     "undo reverts it), plan (read-only)"),
    ("Esc / Ctrl+C", "cancel the running turn (Esc in a pane: back to the prompt)"),
    ("Ctrl+C twice", "quit (on an idle prompt)"),
    ("Ctrl+L", "clear the screen"),
    ("Ctrl+P", "command palette"),
    ("F2", "focus the tool-activity pane (Enter expands an entry; typing goes back to the prompt)"),
)


@dataclass(frozen=True)
class SlashCommand:
    """A parsed ``/name argument`` line."""

    name: str
    argument: str


def parse(text: str) -> SlashCommand | None:
    """``/name arg...`` -> :class:`SlashCommand`; ``None`` when ``text`` is not a slash command."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, arg = stripped.partition(" ")
    return SlashCommand(name.lower(), arg.strip())


def complete(text: str, custom: Iterable[str] = ()) -> list[str]:
    """Commands (built-in, then ``custom`` ones) that start with ``text``, while the first word is typed."""
    if not text.startswith("/") or " " in text or "\n" in text:
        return []
    return [name for name in (*SLASH_COMMANDS, *custom) if name.startswith(text.lower())]


def common_prefix(names: list[str]) -> str:
    """The longest prefix shared by every name (``""`` for none)."""
    if not names:
        return ""
    first, last = min(names), max(names)
    i = 0
    while i < len(first) and i < len(last) and first[i] == last[i]:
        i += 1
    return first[:i]


def help_text(width: int = 100, custom: Sequence[tuple[str, str]] = (), notes: Sequence[str] = ()) -> str:
    """The /help text: commands and keys in aligned columns, descriptions wrapped under themselves to fit
    ``width`` columns (plain text renders instantly). ``custom``: (``/name [ARGS]``, description and origin)
    of the command files in force; ``notes``: files left out and why."""
    rows = [(f"{name} {arg}".rstrip(), desc) for name, (arg, desc) in SLASH_COMMANDS.items()]
    rows.append(("!command", "run a command yourself, through the same safety checks"))
    rows.append(("@path", "attach a file (or a folder's listing) to the message; Tab completes"))
    left_width = max(len(left) for left, _ in (*rows, *custom, *KEYS_HELP)) + 2
    indent = " " * (2 + left_width)
    text_width = max(20, width - len(indent))

    def entry(left: str, desc: str) -> list[str]:
        wrapped = textwrap.wrap(desc, text_width) or [""]
        return [f"  {left:<{left_width}}{wrapped[0]}", *(indent + more for more in wrapped[1:])]

    lines = ["Commands"]
    for left, desc in rows:
        lines += entry(left, desc)
    if custom or notes:
        lines += ["", "Your commands (commands/NAME.md; .swebash-ai/commands/NAME.md in the project wins)"]
        for left, desc in custom:
            lines += entry(left, desc)
        lines += [f"  ! {note}" for note in notes]
    lines += ["", "Keys"]
    for key, desc in KEYS_HELP:
        lines += entry(key, desc)
    return "\n".join(lines)

"""What the user typed, made into the message a turn sends: a custom command expanded, mentions attached.

Both front ends call :func:`prepare_prompt` (through ``Session.prepare``) before a turn, so ``/NAME args``
and ``@path`` behave the same in the TUI and in ``swebash-ai -c``. Only the text the user gave goes through
it: input piped to ``-c`` is added afterwards, so a mention inside a piped file attaches nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a prompt without "/" or "@" needs neither module
    from swebash_ai.agent.custom_commands import CommandSet, CustomCommand
    from swebash_ai.agent.images import ImageAttachment
    from swebash_ai.agent.mentions import Attachment
    from swebash_ai.errors import ImageInputError
    from swebash_ai.tools.registry import ToolContext

__all__ = ["PreparedPrompt", "images_refused", "prepare_prompt"]

GO_ON = ("[swebash-ai] The user gives you a fresh budget for this task. Go on with it where you stopped; if you "
         "were repeating yourself, try another way.")
"""The message of the TUI's "go on" action after a turn stopped at a limit."""


@dataclass(frozen=True)
class PreparedPrompt:
    text: str
    """The user message the model receives."""
    command: CustomCommand | None = None
    attachments: tuple[Attachment, ...] = ()
    notices: tuple[str, ...] = ()
    """For the user (one line each): mentions left as text and why."""
    images: tuple[ImageAttachment, ...] = ()
    """Images mentioned: sent as image parts with the message (``Session.run(text, images)``)."""

    @property
    def lines(self) -> list[str]:
        """Compact lines for the chat or stderr: the command used, then each attachment."""
        used = [f"↳ /{self.command.name} from {self.command.path}"] if self.command is not None else []
        return used + [a.line for a in self.attachments] + [i.line for i in self.images]


def prepare_prompt(
    text: str, ctx: ToolContext, commands: CommandSet | None, *, builtins: Collection[str] | None = None,
    model: str = "",
) -> PreparedPrompt:
    """``/NAME args`` expanded when NAME is a command file of ``commands`` (a built-in's name never is: the
    app's by default), then every mention attached. A project command's own text may only mention files inside
    the project. An image mentioned is downscaled to the limits of ``model``'s provider."""
    command = None
    within: tuple[Path, ...] = ()
    why: tuple[str, ...] = ()
    stripped = text.strip()
    if commands is not None and stripped.startswith("/") and not stripped.startswith("//"):
        from swebash_ai.agent.custom_commands import BUILTIN_COMMANDS

        reserved = BUILTIN_COMMANDS if builtins is None else builtins
        name, _, arguments = stripped[1:].partition(" ")
        found = commands.get(name) if name.lower() not in reserved else None
        if found is not None:
            command, text = found, found.expand(arguments)
            if found.scope == "project":
                within = (found.path.parent.parent.parent,)
        elif name.lower() in commands.left_out:
            why = (commands.left_out[name.lower()],)
    if "@" not in text:  # every mention starts with one
        return PreparedPrompt(text, command, (), why)
    from swebash_ai.agent.mentions import expand_mentions

    expansion = expand_mentions(text, ctx, within=within, model=model)
    return PreparedPrompt(expansion.text, command, expansion.attachments, why + expansion.notices, expansion.images)


def images_refused(model: str, images: Sequence[ImageAttachment]) -> ImageInputError | None:
    """:func:`~swebash_ai.agent.images.refused_for`, loaded only when a turn carries an image."""
    from swebash_ai.agent.images import refused_for

    return refused_for(model, images)

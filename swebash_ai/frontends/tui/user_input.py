"""The TUI's side of custom commands and ``@path`` attachments: what the prompt offers, what /help lists,
and how the chat shows what was sent (one compact line per attachment, never the file itself).

The work itself (reading command files and mentioned files through the path guard) is the session's:
:meth:`~swebash_ai.session.Session.prepare` and :meth:`~swebash_ai.session.Session.custom_commands`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from swebash_ai.agent.conversation import BROKE_OFF, NOTES, STOPPED, UNSAID, is_note_only, user_run, why_incomplete
from swebash_ai.agent.result_store import ASIDE
from swebash_ai.frontends.tui import commands
from swebash_ai.safety.terminal_text import safe

if TYPE_CHECKING:
    from swebash_ai.agent.custom_commands import CommandSet
    from swebash_ai.agent.images import ImageAttachment
    from swebash_ai.agent.user_prompt import PreparedPrompt
    from swebash_ai.frontends.tui.host import ControllerHost
    from swebash_ai.frontends.tui.widgets.chat import ChatPane
    from swebash_ai.session import Session

BUILTINS: frozenset[str] = frozenset(name[1:] for name in commands.SLASH_COMMANDS)
"""The built-in names, which a command file cannot take."""


def prompt_hints(found: CommandSet) -> dict[str, tuple[str, str]]:
    """``/name`` -> (argument hint, description) for the prompt's completion and the palette. A repository
    wrote the description: terminal control sequences are shown as escapes, never sent to the screen."""
    return {f"/{c.name}": ("[ARGS]" if "$ARGUMENTS" in c.template else "",
                           safe(c.description, visible=True) or f"{c.scope} command")
            for c in found.commands.values()}


def help_rows(found: CommandSet) -> tuple[list[tuple[str, str]], list[str]]:
    """(rows, notes) for /help: each command with its description and where it comes from (sanitised)."""
    rows = []
    for c in found.commands.values():
        arg = " [ARGS]" if "$ARGUMENTS" in c.template else ""
        desc = f"{c.description} " if c.description else ""
        rows.append((f"/{c.name}{arg}", safe(f"{desc}({c.origin})", visible=True)))
    return rows, [safe(n, visible=True) for n in found.notices]


def show_prepared(chat: ChatPane, prepared: PreparedPrompt, images: Sequence[ImageAttachment] = ()) -> None:
    """The command used and each attachment as one line (the chips' images after the mentioned ones); each
    mention left as text with its reason."""
    for line in [*prepared.lines, *(image.line for image in images)]:
        chat.add_notice(line, "attachment")
    for notice in prepared.notices:
        chat.add_notice(notice, "warning")


def show_notes(chat: ChatPane, notes: Iterable[str]) -> None:
    """The notes the app gave the model on a saved message, as the notices shown live (processes.watch_exits).
    Without "/ps lists the processes": a resumed session's processes ended with the session that started them."""
    from swebash_ai.tools.background import exits_told

    for note in notes:
        for notice, failed in exits_told(note):
            chat.add_notice(notice if notice.endswith((".", "]")) else f"{notice}.", "warning" if failed else "info")


def show_user_message(chat: ChatPane, content: str) -> None:
    """A saved user message: the typed text, then its attachments as compact lines."""
    from swebash_ai.agent.mentions import split_attachments

    typed, lines = split_attachments(content)
    chat.add_user(typed)
    for line in lines:
        chat.add_notice(line, "attachment")


async def is_custom(app: ControllerHost, name: str) -> bool:
    """``/name`` is a command file in force (read now: a file added a moment ago counts)."""
    session = app.session
    if name in commands.SLASH_COMMANDS or session is None:
        return False
    found = await asyncio.to_thread(session.custom_commands, BUILTINS)
    app.prompt.custom = prompt_hints(found)
    return found.get(name) is not None


async def load_prompt_helpers(app: ControllerHost, session: Session, *, startup: bool = True) -> None:
    """Worker: the command files (for completion; refused ones said once) and the paths ``@`` offers."""
    found = await asyncio.to_thread(session.custom_commands, BUILTINS)
    app.prompt.custom = prompt_hints(found)
    if startup:
        for notice in found.notices:
            app.chat.add_notice(notice + " (/help lists your commands)", "warning")
    await refresh_paths(app, session)


async def refresh_paths(app: ControllerHost, session: Session) -> None:
    """Walk the workspace for ``@`` completion: at start-up, and at the first ``@`` after a turn (its tools
    may have made files)."""
    from swebash_ai.frontends.tui.path_index import PathIndex

    index = PathIndex(session.cwd, session.context.path_policy)
    app.prompt.set_paths(await asyncio.to_thread(index.build))


_INCOMPLETE_NOTICE = {
    STOPPED: "You stopped this answer before its end: it is incomplete.",
    BROKE_OFF: "The model's stream broke off before the end of this answer: it is incomplete.",
    UNSAID: "This answer broke off before its end: it is incomplete.",  # saved before the reason was kept
}
"""What a resumed session says under an answer that did not reach its end, by why (``why_incomplete``)."""

_RESULT_PREFIXES = {"Denied:": "denied", "Error:": "error", "Cancelled:": "cancelled", "Timed out:": "timeout"}
"""How a result the model read begins when its call did not succeed (``ToolResult.for_model``)."""


def _status_of(text: str) -> str:
    return next((s for p, s in _RESULT_PREFIXES.items() if text.startswith(p)), "ok")


def _summary(session: Session, name: str, arguments: str) -> str:
    """The line a live entry showed for this call (its tool's own description); its arguments as they were when
    the tool is not offered now or they do not parse."""
    from swebash_ai.tools.registry import ToolResult

    tool = session.registry.get(name)
    if tool is not None:
        args = tool.parse_arguments(arguments)
        if not isinstance(args, ToolResult):
            return tool.describe(args)
    return arguments[:200]


def render_conversation(app: ControllerHost, session: Session) -> None:
    """Show a resumed conversation: user and assistant text in the chat, tool calls in the tool pane, and the
    exits of background processes the model was told about as the notices shown when they happened. A
    ``!command`` is shown as it was live: the command in the chat, the call and its output in the tool pane."""
    from swebash_ai.frontends.tui.widgets.activity import ToolRecord, format_arguments

    chat = app.chat
    calls: dict[str, ToolRecord] = {}  # shown at once at the end: most stay records (see ActivityPane)
    children = session.conversation.subagents()  # helpers' transcripts, by task call
    with chat.resuming():  # only the newest chapters are mounted for the first frame
        for msg in session.conversation.messages:
            role, content = msg.get("role"), msg.get("content")
            # A note rides on the message the next request ended with (Conversation.add_note): the exits it
            # tells happened before that request, so before the user's message and after a tool's result.
            show_notes(chat, msg.get(NOTES) or ())
            if role == "user" and (ran := user_run(msg)) is not None:
                chat.add_user(ran.shown)
                record = ToolRecord(ran.call_id, ran.name, _summary(session, ran.name, ran.arguments),
                                    format_arguments(ran.arguments))
                record.finish(_status_of(ran.output), ran.output, None, None)
                calls[ran.call_id] = record
            elif role == "user" and isinstance(content, str) and not is_note_only(msg):  # the app's words alone
                show_user_message(chat, content)
            elif role == "assistant":
                if isinstance(content, str) and content.strip():
                    chat.add_assistant(content)
                if (why := why_incomplete(msg)) is not None:
                    chat.add_notice(_INCOMPLETE_NOTICE[why], "warning")
                for call in msg.get("tool_calls") or ():
                    fn = call.get("function", {})
                    args = str(fn.get("arguments", ""))
                    call_id = str(call.get("id", ""))
                    name = str(fn.get("name", "?"))
                    calls[call_id] = ToolRecord(call_id, name, _summary(session, name, args), format_arguments(args))
            elif role == "tool":
                if aside := ASIDE in msg:  # read back for its status; the record keeps no copy (see set_aside)
                    content = session.conversation.full(msg).get("content")
                text = content if isinstance(content, str) else str(content)
                status = _status_of(text)
                call_id, name = str(msg.get("tool_call_id", "")), str(msg.get("name", "?"))
                record = calls.setdefault(call_id, ToolRecord(call_id, name, name, {}))
                record.finish(status, text, None, None)  # the session keeps no duration
                if isinstance(kept := children.get(call_id), dict):  # a helper's group, as it was drawn live
                    from swebash_ai.agent.subagents import transcript_lines

                    record.output = transcript_lines(kept, lambda n, a: _summary(session, n, a), _status_of) or text
                elif aside:
                    record.output, record.aside = "", True
    app.activity.load_history(calls.values())
    from swebash_ai.tools.plan import Plan

    app.plan.show(Plan.from_json(session.conversation.meta.get("plan")))
    chat.add_notice(f"Resumed session {session.conversation.id} ({session.conversation.title}).")

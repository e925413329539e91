"""The approver and the question line of an ACP session: both are ``session/request_permission``.

The editor's answer is the person's answer, and nothing else changes: the policy, the rules, the mode and the
hooks have decided to ask before anything gets here (what the floor denies never does). The options map to the
dialog's: allow once, allow for this session, always allow here (saves the rule the dialog would save; offered
only when the policy proposes one) and deny. The request shows what the dialog shows: the call, the full
command or diff, the working directory, the policy's reasons and the warnings about hidden characters.

A client that cannot answer (it answers the request with an error, or the connection is gone) gets the
non-interactive behaviour from then on: refused, as without a terminal. A cancelled request (the turn was
cancelled) is a denial.

``ask_user`` goes through the same request: one option per choice and "no answer". A question that only takes
a typed answer cannot be put to the editor: it is answered at once that nobody can answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from acp import schema
from acp.exceptions import RequestError

from swebash_ai.agent.approval import Decision
from swebash_ai.agent.events import where_words
from swebash_ai.frontends.acp.updates import CallIds, diff_content, locations, notice_chunk, text_content, tool_kind
from swebash_ai.tools.ask import Answer, Question, nobody_can_answer
from swebash_ai.words import count

if TYPE_CHECKING:
    from pathlib import Path

    from swebash_ai.agent.events import ApprovalRequest

log = logging.getLogger(__name__)

SHOWN_WAIT = 5.0
"""Seconds a question waits for its call's ``tool_call`` update to go out first (it always does, promptly)."""

_DECISIONS = {"allow_once": Decision.ALLOW_ONCE, "allow_session": Decision.ALLOW_SESSION,
              "allow_always": Decision.ALLOW_ALWAYS, "allow_outside": Decision.ALLOW_OUTSIDE,
              "reject": Decision.DENY}


def describe_rule(rule: dict[str, Any]) -> str:
    """What "always allow here" saves, in the words the dialog uses."""
    where = ", ".join(rule.get("workspaces", [])) or "everywhere"
    if "prefix" in rule:
        return f"allow `{' '.join(rule['prefix'])}` (and what follows) in {where}"
    return f"allow {rule.get('tool')} in {where}"


def request_text(request: ApprovalRequest) -> str:
    """The dialog's text in Markdown: the call, what runs (full command or diff, fenced), then one list item
    per fact (warnings, where, each reason, the sandbox, the rule "always" saves): a Markdown renderer merges
    single newlines into one paragraph, and a list keeps each line its own."""
    from swebash_ai.safety.terminal_text import marked_note, safe

    detail = request.detail.rstrip()
    fence = "```"
    while fence in detail:
        fence += "`"
    facts: list[str] = []
    controls, invisible = request.hidden()
    if controls:
        facts.append(f"⚠ holds {count(controls, 'terminal control sequence')}, shown as \\x.. escapes: it may not be "
                     "what it seems")
    if invisible:
        facts.append(f"⚠ {marked_note(invisible)}")
    facts.append(f"in {request.cwd}")
    facts.extend(f"why: {reason}" for reason in request.verdict.reasons)
    if where := where_words(request, yes="'Allow once'", outside="'Allow once, outside the sandbox'"):
        facts.append(where)
    if request.always is not None:
        facts.append(f"always allow here saves a rule: {describe_rule(request.always)}")
    lines = [f"{request.tool} needs your approval: {request.summary}", "", fence, detail, fence, "",
             *(f"- {fact}" for fact in facts)]
    return safe("\n".join(lines), visible=True)


def permission_options(request: ApprovalRequest) -> list[schema.PermissionOption]:
    once = "Allow once, in the sandbox" if request.sandboxed else "Allow once"
    options = [schema.PermissionOption(option_id="allow_once", name=once, kind="allow_once"),
               schema.PermissionOption(option_id="allow_session", name="Allow for this session", kind="allow_always")]
    if request.always is not None:
        options.append(schema.PermissionOption(option_id="allow_always", name="Always allow here (saves a rule)",
                                               kind="allow_always"))
    if request.sandboxed:
        options.append(schema.PermissionOption(option_id="allow_outside", name="Allow once, outside the sandbox "
                                               "(with all of your rights)", kind="allow_once"))
    options.append(schema.PermissionOption(option_id="reject", name="Deny", kind="reject_once"))
    return options


def _duration(seconds: float) -> str:
    return f"{seconds / 60:g} minutes" if seconds >= 120 else f"{seconds:g} seconds"


class EditorApprover:
    """Asks through ``session/request_permission`` on one ACP session."""

    def __init__(self, conn: Any, session_id: str, cwd: Path, *, shown: Callable[[str, str], Awaitable[None]],
                 save_rule: Callable[[str, dict[str, Any]], Awaitable[None]],
                 allowed: Callable[[str, str], Awaitable[None]] | None = None, ids: CallIds | None = None,
                 timeout: float = 600.0,
                 diff_of: Callable[[str, ApprovalRequest], Awaitable[list[Any] | None]] | None = None) -> None:
        """
        Args:
            conn: The SDK's connection to the client (``request_permission``).
            session_id: The ACP session asked about.
            cwd: The session's working directory (locations are absolute).
            shown: Awaited with (session id, the provider's call id) before asking: returns once the call's
                ``tool_call`` update was sent (and its editor id is known).
            save_rule: Awaited with (session id, rule): saves an "always allow here" rule (and tells the person
                where it went).
            allowed: Awaited with (session id, call id) once the person allowed a call (it runs now).
            ids: The session's editor ids of tool calls (the requests name calls by the editor's id).
            timeout: Seconds a request waits for its answer; then it is a refusal, and the editor is told.
            diff_of: Awaited with (session id, request): a write's diff against the editor's buffer, or
                ``None`` (the diff the arguments describe is shown).
        """
        self.conn = conn
        self.session_id = session_id
        self.cwd = cwd
        self.shown = shown
        self.save_rule = save_rule
        self.allowed = allowed
        self.ids = ids or CallIds()
        self.timeout = timeout
        self.diff_of = diff_of
        self.answers = True
        """False once the client failed to answer: from then on nobody can."""
        self.reason = "the editor did not answer the permission request, so no one could approve it"

    @property
    def interactive(self) -> bool:
        return self.answers

    @interactive.setter
    def interactive(self, value: bool) -> None:
        self.answers = value

    async def _ask(self, provider_id: str, make_update: Callable[[str], schema.ToolCallUpdate],
                   options: list[schema.PermissionOption], *, wait_shown: bool = True) -> str | None:
        """The option the person chose; ``None`` for a refusal: a cancelled request, a client that cannot answer,
        no answer within the time limit, or an option that was not offered (an answer is data: it can only
        pick one of the choices put to the person)."""
        if not self.answers:
            return None
        try:
            if wait_shown:  # asyncio.timeout, not wait_for: on 3.11 wait_for can lose a cancel that meets an answer
                async with asyncio.timeout(SHOWN_WAIT):
                    await self.shown(self.session_id, provider_id)
        except TimeoutError:
            log.warning("swebash-ai acp: asking about %s before its tool_call update went out", provider_id)
        update = make_update(self.ids.of(provider_id))  # its editor id is known once its tool_call went out
        try:
            async with asyncio.timeout(self.timeout):
                response = await self.conn.request_permission(session_id=self.session_id, tool_call=update,
                                                              options=options)
        except TimeoutError:
            await self._tell(f"No answer to the request about {update.title} within {_duration(self.timeout)}: "
                             "taken as a refusal (`acp_permission_timeout` sets how long a request waits).")
            return None
        except (RequestError, ConnectionError, ValueError) as exc:  # ValueError: an answer that does not parse
            log.warning("swebash-ai acp: the client could not answer a permission request (%s)", exc)
            self.answers = False
            return None
        outcome = response.outcome
        if not isinstance(outcome, schema.AllowedOutcome):
            return None
        if outcome.option_id not in {option.option_id for option in options}:
            log.warning("swebash-ai acp: the client chose %r, which was not offered", outcome.option_id)
            await self._tell(f"The editor answered with a choice that was not offered ({outcome.option_id!r}): "
                             "taken as a refusal.")
            return None
        return outcome.option_id

    async def _tell(self, text: str) -> None:
        try:
            await self.conn.session_update(session_id=self.session_id, update=notice_chunk(text, "warning"))
        except (ConnectionError, OSError) as exc:
            log.info("swebash-ai acp: could not tell the editor (%s)", exc)

    async def decide(self, request: ApprovalRequest) -> Decision:
        diffs = await self.diff_of(self.session_id, request) if self.diff_of is not None else None
        if diffs is None:
            diffs = diff_content(request.tool, request.arguments, self.cwd)
        content: list[Any] = [*diffs, text_content(request_text(request))]

        def update(call_id: str) -> schema.ToolCallUpdate:
            return schema.ToolCallUpdate(tool_call_id=call_id, title=request.summary, kind=tool_kind(request.tool),
                                         status="pending", content=content,
                                         locations=locations(request.arguments, self.cwd))

        chosen = await self._ask(request.call_id, update, permission_options(request))
        decision = _DECISIONS.get(chosen or "reject", Decision.DENY)
        if decision is Decision.ALLOW_ALWAYS:
            if request.always is not None:
                await self.save_rule(self.session_id, request.always)
            decision = Decision.ALLOW_ONCE
        if decision is not Decision.DENY and self.allowed is not None:
            await self.allowed(self.session_id, self.ids.of(request.call_id))
        return decision

    async def ask_to_start(self, call_id: str, title: str, text: str) -> bool:
        """Whether the person lets a program start unconfined (an editor's MCP server where no sandbox works):
        allow once or reject; no answer, a cancel or a choice never offered is a no. ``call_id``: the editor
        id of the ``tool_call`` already sent for it."""
        options = [schema.PermissionOption(option_id="allow_once", name="Start it, with all of your rights",
                                           kind="allow_once"),
                   schema.PermissionOption(option_id="reject", name="Do not start it", kind="reject_once")]

        def update(editor_id: str) -> schema.ToolCallUpdate:
            return schema.ToolCallUpdate(tool_call_id=editor_id, title=title, kind="execute", status="pending",
                                         content=[text_content(text)])

        return await self._ask(call_id, update, options, wait_shown=False) == "allow_once"

    async def ask(self, question: Question) -> Answer:
        if not question.options:
            return nobody_can_answer("the editor offers choices only, and this question needs a typed answer")
        if not self.answers:
            return nobody_can_answer("the editor did not answer a permission request")
        options = [schema.PermissionOption(option_id=str(n), name=option, kind="allow_once")
                   for n, option in enumerate(question.options, 1)]
        options.append(schema.PermissionOption(option_id="none", name="No answer", kind="reject_once"))
        from swebash_ai.safety.terminal_text import safe

        def update(call_id: str) -> schema.ToolCallUpdate:
            return schema.ToolCallUpdate(tool_call_id=call_id, title=f"The assistant asks: {question.question}",
                                         kind="other", status="pending",
                                         content=[text_content(safe(question.question, visible=True))])

        chosen = await self._ask(question.call_id, update, options)
        if chosen is None and not self.answers:
            return nobody_can_answer("the editor did not answer the question")
        if chosen is None or not chosen.isdigit() or not 1 <= int(chosen) <= len(question.options):
            return Answer(None)
        return Answer(question.options[int(chosen) - 1], option=int(chosen))

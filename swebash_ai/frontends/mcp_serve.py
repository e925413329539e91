"""``swebash-ai mcp serve``: swebash-ai's own guarded tools, served over stdio MCP.

Any MCP client gets the tools with the same path guard, command classifier, timeouts, output caps and audit
log as the app: each ``tools/call`` runs through the agent loop's guarded path (:meth:`Agent.run_tool`), so
nothing here decides what is safe. What the policy asks about is asked through MCP *elicitation* when the
client declares it (a yes/no form showing the call, the reasons and the detail); when the client does not,
the call is denied with the reason. What the policy always denies is denied before anyone is asked.
``ask_user`` is served the same way: its question is an elicitation form (a choice among the options, or a
text field); without elicitation it answers at once that nobody can answer.

The settings (tool families, allow/deny lists, workspace roots, ``tools_confirm``) apply as in the app; no
model provider is used.
"""

from __future__ import annotations

import contextvars
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swebash_ai.agent.approval import Decision
from swebash_ai.tools.ask import Answer, Question, nobody_can_answer

if TYPE_CHECKING:
    from swebash_ai.agent.events import ApprovalRequest
    from swebash_ai.config.settings import LoadedSettings
    from swebash_ai.tools.registry import ToolResult

_REQUEST: contextvars.ContextVar[Any] = contextvars.ContextVar("swebash_mcp_request")
"""The MCP request being served (its context carries the client session to elicit through)."""

_ASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"allow": {"type": "boolean", "title": "Allow this call", "default": False}},
    "required": ["allow"],
}


def _client_elicits(ctx: Any) -> bool:
    from mcp import types

    try:
        return bool(ctx.session.check_client_capability(
            types.ClientCapabilities(elicitation=types.ElicitationCapability())))
    except Exception:  # an unknown client state: nobody can be asked
        return False


class ElicitApprover:
    """Asks the MCP client's user through elicitation; denies with a reason when the client cannot ask."""

    reason = "the MCP client does not support elicitation, so no one could approve it"

    @property
    def interactive(self) -> bool:
        """True while serving a client that can be asked (the loop words a denial by it)."""
        ctx = _REQUEST.get(None)
        return ctx is not None and _client_elicits(ctx)

    @interactive.setter
    def interactive(self, value: bool) -> None:  # the Approver protocol declares a plain attribute
        raise AttributeError("interactive depends on the MCP client being served")

    async def decide(self, request: ApprovalRequest) -> Decision:
        ctx = _REQUEST.get(None)
        if ctx is None or not _client_elicits(ctx):
            return Decision.DENY
        reasons = "; ".join(request.verdict.reasons) or "the policy asks"
        message = (f"swebash-ai: allow {request.summary}?\nWhy it asks: {reasons}\nWorking directory: {request.cwd}\n\n"
                   f"{request.detail[:4000]}")
        try:
            answer = await ctx.session.elicit_form(message, _ASK_SCHEMA, related_request_id=ctx.request_id)
        except Exception:  # a client that fails to answer has not approved
            return Decision.DENY
        content = answer.content or {}
        return Decision.ALLOW_ONCE if answer.action == "accept" and content.get("allow") is True else Decision.DENY

    async def ask(self, question: Question) -> Answer:
        return await _elicit_answer(question)


def _question_schema(question: Question) -> dict[str, Any]:
    field: dict[str, Any] = {"type": "string", "title": "Your answer"}
    if question.options and not question.allow_free_text:
        field["enum"] = list(question.options)
    elif question.options:
        field["description"] = "One of: " + "; ".join(question.options) + " (or your own answer)"
    return {"type": "object", "properties": {"answer": field}, "required": ["answer"]}


async def _elicit_answer(question: Question) -> Answer:
    """``ElicitApprover.ask``: the question as a form; a declined or cancelled form is "no answer"."""
    ctx = _REQUEST.get(None)
    if ctx is None or not _client_elicits(ctx):
        return nobody_can_answer("the MCP client does not support elicitation")
    options = "".join(f"\n{n}. {o}" for n, o in enumerate(question.options, 1))
    try:
        reply = await ctx.session.elicit_form(f"swebash-ai asks: {question.question}{options}",
                                              _question_schema(question), related_request_id=ctx.request_id)
    except Exception as exc:  # a client that fails to answer has not answered
        return nobody_can_answer(f"the MCP client could not ask ({type(exc).__name__})")
    text = (reply.content or {}).get("answer")
    if reply.action != "accept" or not isinstance(text, str) or not text.strip():
        return Answer(None)
    text = text.strip()
    number = int(text) if text.isdigit() else 0
    if 1 <= number <= len(question.options):
        return Answer(question.options[number - 1], option=number)
    if text in question.options:
        return Answer(text, option=question.options.index(text) + 1)
    return Answer(text) if question.allow_free_text else Answer(None)


async def serve(loaded: LoadedSettings, cwd: Path | None = None, streams: tuple[Any, Any] | None = None) -> None:
    """Serve until the client closes stdin (or the given streams)."""
    from mcp import types
    from mcp.server.lowlevel import Server

    from swebash_ai import __version__
    from swebash_ai.agent import ToolCallFinished
    from swebash_ai.agent.conversation import Conversation
    from swebash_ai.providers.scripted import ScriptedProvider
    from swebash_ai.session import Session

    session = Session(loaded, approver=ElicitApprover(), cwd=cwd, provider=ScriptedProvider(model=""),
                      probe_ollama=False)
    agent = session.agent
    assert agent is not None

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        tools = []
        for name in session.registry.names():
            t = session.registry.get(name)
            assert t is not None
            tools.append(types.Tool(name=t.name, description=t.description, input_schema=t.parameters))
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        token = _REQUEST.set(ctx)
        result: ToolResult | None = None
        try:
            # A fresh conversation per call: the tools are stateless, and nothing here is saved.
            async for event in agent.run_tool(Conversation(), params.name, dict(params.arguments or {})):
                if isinstance(event, ToolCallFinished):
                    result = event.result
        finally:
            _REQUEST.reset(token)
        if result is None:
            return types.CallToolResult(content=[types.TextContent(type="text", text="No result.")], is_error=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text=result.for_model())],
                                    is_error=not result.ok)

    server: Server[Any] = Server("swebash-ai", version=__version__, on_list_tools=list_tools,
                                 on_call_tool=call_tool)
    try:
        if streams is not None:
            await server.run(streams[0], streams[1], server.create_initialization_options())
            return
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:  # background processes started through run_command end with the server
        await session.aclose()


def run_mcp_serve(loaded: LoadedSettings, cwd: Path | None) -> int:
    import anyio

    anyio.run(serve, loaded, cwd)
    return 0

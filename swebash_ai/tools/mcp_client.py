"""MCP servers as tool sources, under the same approval path as every other tool.

Contract:

* :class:`McpHost` starts every enabled ``[mcp_servers.NAME]`` server in parallel, each bounded by its
  ``startup_timeout``; a server that fails to start, hangs or crashes gets a state and a message a person can
  read, and the others keep working. :meth:`McpHost.aclose` ends every server process (the stdio transport
  closes stdin, then stops the server's whole contained tree: :mod:`swebash_ai.tools.mcp_stdio`); it also
  runs when the session's task is cancelled.
* Each server tool becomes an :class:`McpTool` named ``mcp__<server>__<tool>`` (letters, digits, ``_``, ``-``,
  at most 64 characters, no collisions). It is a :class:`~swebash_ai.tools.registry.Tool`, so the loop treats
  it like any other: arguments validated (here against the server's JSON Schema, with ``jsonschema``), then
  the policy (``ask`` unless the tool is in the server's ``auto_approve``), the approver, the audit log.
  Annotations such as ``readOnlyHint`` are shown to the person who approves; they are the server's claim, so
  they never change the verdict.
* Results: text and structured content go back to the model, capped at ``exec_max_output`` characters;
  images, audio and blobs are described, never dumped; ``isError`` is a tool error; a call past ``timeout``
  is a ``timeout`` result. A stdio server's answer over :data:`~swebash_ai.tools.mcp_stdio.MAX_MESSAGE_BYTES`
  is never held whole (:mod:`swebash_ai.tools.mcp_stdio`): the result is the start of its text, cut with a note.
* A server that exits during a call: that call is a one-line tool error, the turn goes on, and the server's
  tools answer "not running" for the rest of the session (no restart: a server that crashes on a call
  would likely crash again on the model's retry, and a restart would hide that).

The ``mcp`` SDK is imported only in here and only when a server is configured (``swebash_ai.session`` imports
this module lazily), so a run without MCP servers pays nothing for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from swebash_ai.config.mcp import McpServerConfig
from swebash_ai.safety.verdict import Verdict
from swebash_ai.tools.registry import Tool, ToolContext, ToolResult
from swebash_ai.words import count

log = logging.getLogger(__name__)

State = Literal["starting", "ready", "failed", "crashed", "stopped"]
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64


def tool_name(server: str, tool: str, taken: set[str]) -> str:
    """``mcp__<server>__<tool>`` made acceptable to every provider and unique among ``taken``."""
    base = _UNSAFE.sub("_", f"mcp__{server}__{tool}")[:MAX_NAME]
    name, n = base, 2
    while name in taken:
        suffix = f"_{n}"
        name, n = base[: MAX_NAME - len(suffix)] + suffix, n + 1
    taken.add(name)
    return name


class McpArgs(BaseModel):
    """The arguments of an MCP call: whatever the server's schema accepted (validated by ``jsonschema``)."""

    model_config = ConfigDict(extra="allow")


@dataclass
class McpServer:
    """One configured server: its state, its tools, and (while ready) its client session."""

    config: McpServerConfig
    state: State = "starting"
    message: str = ""
    tools: list[McpTool] = field(default_factory=list)
    server_name: str = ""
    session: Any = None
    started: float = 0.0
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self.config.name

    def summary(self) -> str:
        """One line for ``/mcp``, ``mcp list`` and ``doctor``."""
        what = self.config.command or self.config.url or ""
        if self.state == "ready":
            note = f"; {self.message}" if self.message else ""
            return f"{self.name}: ready, {count(len(self.tools), 'tool')}{note} ({self.config.transport}: {what})"
        why = f": {self.message}" if self.message else ""
        return f"{self.name}: {self.state}{why} ({self.config.transport}: {what})"


class McpTool(Tool):
    """A tool of an MCP server, offered to the model; see the module docstring."""

    def __init__(self, server: McpServer, spec: Any, name: str, validator: Any) -> None:
        # Not Tool.__init__: there is no Python function to read a signature from; the server's schema is it.
        self.server = server
        self.remote_name: str = spec.name
        self.name = name
        self.category = "mcp"  # type: ignore[assignment]
        self.annotations = spec.annotations
        desc = (spec.description or spec.title or "").strip()
        self.description = f"[MCP server {server.name}] {desc}".strip()
        self.parameters: dict[str, Any] = dict(spec.input_schema or {"type": "object", "properties": {}})
        self.parameters.setdefault("type", "object")
        self.parameters.setdefault("properties", {})
        self._validator = validator
        self.args_model = McpArgs

    def hints(self) -> str:
        """The server's annotations, as claims (shown to people, never trusted)."""
        a = self.annotations
        if a is None:
            return ""
        said = [
            label
            for label, value in (
                ("read-only", a.read_only_hint),
                ("destructive", a.destructive_hint),
                ("idempotent", a.idempotent_hint),
                ("open-world", a.open_world_hint),
            )
            if value
        ]
        return f"the server says: {', '.join(said)} (not verified)" if said else ""

    def parse_arguments(self, raw: str | Mapping[str, Any] | None) -> BaseModel | ToolResult:
        data = self.decode_arguments(raw)  # then the server's JSON Schema, not a pydantic model, validates
        if isinstance(data, ToolResult):
            return data
        problems = sorted(self._validator.iter_errors(data), key=lambda e: list(e.absolute_path))
        if problems:
            said = "; ".join(
                f"'{'.'.join(str(p) for p in e.absolute_path) or 'arguments'}': {e.message}" for e in problems[:5]
            )
            schema = json.dumps(self.parameters, ensure_ascii=False)[:1000]
            return ToolResult.error(f"Invalid arguments for {self.name}: {said}. Schema: {schema}")
        return McpArgs.model_validate(data)

    def check(self, ctx: ToolContext, args: BaseModel) -> Verdict:
        if self.remote_name in self.server.config.auto_approve:
            return Verdict.allow(f"'{self.remote_name}' is in auto_approve of MCP server {self.server.name}",
                                 rule="mcp.auto_approve")
        hint = self.hints()
        return Verdict.ask(
            f"MCP server {self.server.name} tool {self.remote_name}" + (f"; {hint}" if hint else ""), rule="mcp.ask"
        )

    def describe(self, args: BaseModel) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in args.model_dump().items())
        return f"{self.server.name}: {self.remote_name}({shown[:200]})"

    def preview(self, ctx: ToolContext, args: BaseModel) -> str | None:
        hint = self.hints()
        body = json.dumps(args.model_dump(), indent=2, ensure_ascii=False)
        return f"MCP server: {self.server.name}\ntool: {self.remote_name}\n" + (f"{hint}\n" if hint else "") + body

    def session_key(self, ctx: ToolContext, args: BaseModel) -> str | None:
        return f"{self.name}:{args.model_dump_json()}"

    async def invoke(self, ctx: ToolContext, args: BaseModel) -> ToolResult:
        start = time.monotonic()
        result = await self._call(ctx, args.model_dump())
        meta = dict(result.metadata, mcp_server=self.server.name, mcp_tool=self.remote_name)
        return ToolResult(result.ok, result.content, result.status, None, time.monotonic() - start,
                          result.truncated, meta)

    async def _call(self, ctx: ToolContext, arguments: dict[str, Any]) -> ToolResult:
        from mcp.shared.exceptions import MCPError

        from swebash_ai.tools.mcp_stdio import OVERSIZE

        server = self.server
        if server.state != "ready" or server.session is None:
            return ToolResult.error(f"MCP server {server.name} is not running ({server.state}: {server.message}).")
        timeout = server.config.timeout
        try:
            # The SDK's own read timeout, and asyncio's as a backstop should the transport itself stall.
            out = await asyncio.wait_for(
                server.session.call_tool(self.remote_name, arguments, read_timeout_seconds=timeout), timeout + 2
            )
        except TimeoutError:
            return ToolResult(False, f"{self.name}: MCP server {server.name} did not answer within {timeout:g}s "
                              "(its 'timeout'). Nothing is known about whether it acted.", "timeout")
        except MCPError as exc:
            if exc.code == OVERSIZE:
                return self._oversize(exc.data, ctx.settings.exec_max_output)
            if exc.code == -32001:  # REQUEST_TIMEOUT, from the SDK's read timeout
                return ToolResult(False, f"{self.name}: MCP server {server.name} did not answer within "
                                  f"{timeout:g}s (its 'timeout').", "timeout")
            if exc.code == -32000:  # CONNECTION_CLOSED: the server process went away
                server.state, server.message = "crashed", "the server stopped during a call"
                return ToolResult.error(f"MCP server {server.name} stopped during the call to {self.remote_name}; "
                                        "its tools are unavailable for the rest of this session.")
            return ToolResult.error(f"MCP server {server.name} refused {self.remote_name}: {exc.message}")
        except Exception as exc:  # a broken connection must become a tool result, not end the turn
            said = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]  # one line
            if server._task is not None and server._task.done():
                server.state, server.message = "crashed", said
            return ToolResult.error(f"MCP call {self.remote_name} on {server.name} failed: {said}")
        return convert_result(out, ctx.settings.exec_max_output, self.name)

    def _oversize(self, data: Any, cap: int) -> ToolResult:
        """The result of an answer too big to hold: the start of its text, cut with a note."""
        from swebash_ai.tools.mcp_stdio import MAX_MESSAGE_BYTES

        data = data if isinstance(data, dict) else {}
        size, text = data.get("bytes", 0), str(data.get("text") or "")
        said = (f"MCP server {self.server.name} answered {self.remote_name} with {size} bytes, more than the "
                f"{MAX_MESSAGE_BYTES} bytes read of one answer")
        if not text:
            return ToolResult.error(f"{said}; its start held no text. Ask for less.")
        return ToolResult.success(f"{text[:cap]}\n[... cut: {said}; this is the start of its text; ask for less]",
                                  truncated=True)


def convert_result(out: Any, cap: int, name: str) -> ToolResult:
    """An MCP ``CallToolResult`` as a :class:`ToolResult`: text kept, blobs described, capped."""
    parts: list[str] = []
    for item in getattr(out, "content", None) or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        elif kind in ("image", "audio"):
            size = len(item.data) * 3 // 4  # base64
            parts.append(f"[{kind}: {item.mime_type}, about {size} bytes, not shown]")
        elif kind == "resource":
            res = item.resource
            text = getattr(res, "text", None)
            if text is not None:
                parts.append(f"[resource {res.uri}]\n{text}")
            else:
                blob = getattr(res, "blob", "") or ""
                parts.append(f"[resource {res.uri}: {res.mime_type or 'binary'}, about {len(blob) * 3 // 4} bytes, "
                             "not shown]")
        elif kind == "resource_link":
            parts.append(f"[resource link: {item.uri} ({item.name})]")
        else:
            parts.append(f"[{kind or 'unknown'} content, not shown]")
    text = "\n".join(parts)
    structured = getattr(out, "structured_content", None)
    if structured:
        dumped = json.dumps(structured, ensure_ascii=False)
        echoes_text = list(structured.values()) == [text] if isinstance(structured, dict) else False
        if not text:
            text = dumped
        elif dumped != text and not echoes_text:
            text += "\n[structured content]\n" + dumped
    truncated = len(text) > cap
    if truncated:
        text = text[:cap] + f"\n[... cut at {cap} characters of {len(text)}; ask for less]"
    if getattr(out, "is_error", False):
        return ToolResult(False, f"{name} reported an error: {text or '(no message)'}", "error", truncated=truncated)
    return ToolResult.success(text, truncated=truncated)


class McpHost:
    """The MCP servers of one session (see the module docstring)."""

    def __init__(self, configs: Mapping[str, McpServerConfig], environ: Mapping[str, str] | None = None,
                 confine: Any = None) -> None:
        """
        Args:
            configs: The servers, by name.
            environ: Where ``bearer_token_env`` is looked up.
            confine: Renders a server's argv in the OS sandbox (:data:`~swebash_ai.tools.mcp_stdio.Confine`),
                for the servers whose ``sandbox`` is set; without it such a server does not start.
        """
        self.servers = [McpServer(c) for c in configs.values() if c.enabled]
        self.disabled = [c.name for c in configs.values() if not c.enabled]
        self._environ = os.environ if environ is None else environ
        self._confine = confine

    @property
    def tools(self) -> list[McpTool]:
        taken: list[McpTool] = []
        for s in self.servers:
            if s.state == "ready":
                taken.extend(s.tools)
        return taken

    async def start(self, taken_names: Sequence[str] = ()) -> list[str]:
        """Start every server in parallel; returns a message per server that did not come up."""
        await asyncio.gather(*(self._start_one(s) for s in self.servers))
        taken = set(taken_names)
        for s in self.servers:
            for t in s.tools:
                t.name = tool_name(s.name, t.remote_name, taken)
        return [f"MCP server {s.summary()}" for s in self.servers if s.state != "ready"]

    async def _start_one(self, server: McpServer) -> None:
        ready = asyncio.Event()
        server.started = time.monotonic()
        server._task = asyncio.create_task(self._run(server, ready), name=f"mcp-{server.name}")
        try:
            await asyncio.wait_for(ready.wait(), server.config.startup_timeout)
        except TimeoutError:
            server.state = "failed"
            config = server.config
            server.message = f"did not start within {config.startup_timeout:g}s ({config._startup_setting})"
            server._task.cancel()  # cancelling the transport's context ends the process
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(server._task, 8)

    async def _run(self, server: McpServer, ready: asyncio.Event) -> None:
        errlog = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        try:
            # jsonschema comes with the mcp SDK (which validates results with it); it ships no type hints.
            from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
            from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
            from mcp.client.session import ClientSession
            from mcp.types import PaginatedRequestParams

            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(server.config, errlog))
                session = await stack.enter_async_context(ClientSession(read, write))
                init = await session.initialize()
                server.server_name = getattr(init.server_info, "name", "") or ""
                specs: list[Any] = []
                cursor: str | None = None
                for _page in range(50):  # bounded: a server that pages forever cannot hold the start
                    listing = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
                    specs.extend(listing.tools)
                    cursor = listing.next_cursor
                    if not cursor:
                        break
                skipped = []
                for spec in specs:
                    schema = spec.input_schema or {"type": "object", "properties": {}}
                    try:
                        Draft202012Validator.check_schema(schema)
                    except SchemaError as exc:
                        skipped.append(f"{spec.name} (invalid input schema: {exc.message})")
                        continue
                    server.tools.append(McpTool(server, spec, spec.name, Draft202012Validator(schema)))
                server.session, server.state = session, "ready"
                server.message = ("skipped " + "; ".join(skipped)) if skipped else ""
                ready.set()
                await server._stop.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            server.state = "crashed" if server.state == "ready" else "failed"
            server.message = _explain(exc, errlog)
            log.info("MCP server %s: %s", server.name, server.message)
        finally:
            server.session = None
            if server.state in ("ready", "starting"):
                server.state = "stopped"
            errlog.close()
            ready.set()

    def _transport(self, config: McpServerConfig, errlog: Any) -> Any:
        if config.command is not None:
            from mcp.client.stdio import StdioServerParameters

            from swebash_ai.tools.mcp_stdio import bounded_stdio_client

            params = StdioServerParameters(
                command=config.command, args=list(config.args), env=dict(config.env) or None, cwd=config.cwd
            )
            if config.sandbox and self._confine is None:
                raise RuntimeError("it must run in the sandbox, and this session has none to give it")
            return bounded_stdio_client(params, errlog, self._confine if config.sandbox else None)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client  # the SDK's own client, with its timeouts

        headers = dict(config.headers)
        if config.bearer_token_env:
            token = self._environ.get(config.bearer_token_env)
            if not token:
                raise RuntimeError(f"the environment variable {config.bearer_token_env} (bearer_token_env) is not set")
            headers["Authorization"] = f"Bearer {token}"
        assert config.url is not None
        return streamable_http_client(config.url, http_client=create_mcp_http_client(headers=headers))

    async def _stop_one(self, server: McpServer) -> None:
        server._stop.set()
        task = server._task
        if task is None or task.done():
            return
        try:
            # The transport's own shutdown waits a few seconds for the process before terminating it.
            await asyncio.wait_for(asyncio.shield(task), 8)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        except BaseException:  # noqa: S110 - the server's failure is recorded in its state
            pass

    async def aclose(self) -> None:
        """End every server (parallel). Safe to call twice."""
        await asyncio.gather(*(self._stop_one(s) for s in self.servers), return_exceptions=True)
        for s in self.servers:
            if s.state == "ready":
                s.state = "stopped"


def _explain(exc: BaseException, errlog: Any) -> str:
    inner: BaseException = exc
    while isinstance(inner, BaseExceptionGroup) and inner.exceptions:
        inner = inner.exceptions[0]
    text = str(inner) or type(inner).__name__
    if isinstance(inner, FileNotFoundError):
        text = f"cannot run the command: {inner}"
    try:
        errlog.flush()
        errlog.seek(0)
        tail = errlog.read()[-400:].strip().splitlines()
    except (OSError, ValueError):
        tail = []
    if tail:
        text += f" (server's last output: {tail[-1][:200]})"
    return text

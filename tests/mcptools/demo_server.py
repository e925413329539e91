"""A real MCP server written with the SDK, for the tests (stdio). Behaviour chosen by tool and by argv."""

from __future__ import annotations

import os
import shutil
import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ImageContent, TextContent, ToolAnnotations

server = MCPServer("demo")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str, times: int = 1) -> str:
    """Repeat a text."""
    return " ".join([text] * times)


@server.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool()
def big(n: int) -> str:
    """A result of n characters."""
    return "x" * n


@server.tool()
def picture() -> list[TextContent | ImageContent]:
    """Text and an image."""
    dot = ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png")
    return [TextContent(type="text", text="here is a dot"), dot]


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("the demo tool failed on purpose")


@server.tool()
def hang(seconds: float) -> str:
    """Sleep (blocking the server) for a while."""
    time.sleep(seconds)
    return "woke"


@server.tool()
def headers(ctx: Context) -> str:
    """The HTTP request's Authorization and X-Test headers (streamable HTTP only)."""
    request = ctx.request_context.request
    got = getattr(request, "headers", {}) or {}
    return f"{got.get('authorization', '')}|{got.get('x-test', '')}"


@server.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    os._exit(3)


@server.tool()
def torn() -> str:
    """Exit in the middle of writing the answer: the client reads half a message, then the end of the pipe."""
    os.write(1, b'{"jsonrpc": "2.0", "id": 99, "result": {"content": [{"type": "text", "text": "half of it')
    os._exit(3)


def start_daemon(pidfile: str, duration: str) -> None:
    """Record this server's pid, then leave a sleeper behind the way a daemon does: a double fork and a
    session of its own (out of our process group and tree); it records its pid and sleeps ``duration``."""
    with open(pidfile, "a") as f:
        f.write(f"{os.getpid()}\n")
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(pidfile, "a") as f:
                f.write(f"{os.getpid()}\n")
            sleep = shutil.which("sleep") or "/bin/sleep"
            os.execv(sleep, [sleep, duration])
        os._exit(0)
    os.wait()


if __name__ == "__main__":
    if "--daemon" in sys.argv:  # --daemon PIDFILE DURATION
        at = sys.argv.index("--daemon")
        start_daemon(sys.argv[at + 1], sys.argv[at + 2])
    if "--hang-at-start" in sys.argv:
        time.sleep(60)
    if "--die-at-start" in sys.argv:
        sys.exit(1)
    if "--bad-schema" in sys.argv:  # a tool whose input schema is not valid JSON Schema
        broken = server._tool_manager.get_tool("big")
        assert broken is not None
        broken.parameters = {"type": "object", "properties": {"n": {"type": "nonsense"}}}
    if "--http" in sys.argv:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[sys.argv.index("--http") + 1]))
    else:
        server.run()

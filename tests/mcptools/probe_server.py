"""A real MCP server written with the SDK, for the tests (stdio): one tool that tries to create a file, to show
where a server may write (a sandboxed one only in its workspace)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("probe")


@server.tool()
def touch(path: str) -> str:
    """Create a file: "made", or why not."""
    try:
        with open(path, "a"):
            pass
    except OSError as exc:
        return f"refused: {exc.strerror}"
    return "made"


if __name__ == "__main__":
    server.run()

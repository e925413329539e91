"""``[mcp_servers.NAME]`` tables: the MCP servers a session takes tools from, validated with pydantic only.

The tables sit in the config file's top level and inside profiles; a profile's table for a server replaces
the file's table of the same name. Each server is either a stdio server (``command``, ``args``, ``env``,
``cwd``) or a streamable-HTTP server (``url``, ``headers``, ``bearer_token_env``), never both. A bad table is a
:class:`ConfigError` naming the server and the key, so the user fixes the line rather than reading a trace.

This module never imports the ``mcp`` SDK: with no server configured, nothing of it is loaded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from swebash_ai.errors import ConfigError

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


class McpServerConfig(BaseModel):
    """One ``[mcp_servers.NAME]`` table."""

    # Built at the first table read: most configurations have none, and a start would pay for it anyway.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str = ""
    command: str | None = None
    """stdio: the program that runs the server (looked up on PATH)."""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    """stdio: extra environment variables for the server (over a minimal safe environment)."""
    cwd: str | None = None
    url: str | None = None
    """streamable HTTP: the server's endpoint."""
    headers: dict[str, str] = Field(default_factory=dict)
    bearer_token_env: str | None = None
    """streamable HTTP: the environment variable holding a bearer token (never the token itself)."""
    auto_approve: list[str] = Field(default_factory=list)
    """Tool names (as the server calls them) that run without asking; every other tool asks."""
    timeout: float = Field(60.0, gt=0, le=3600)
    """Seconds one tool call may take."""
    startup_timeout: float = Field(20.0, gt=0, le=600)
    """Seconds the server may take to start and list its tools."""
    _startup_setting: str = PrivateAttr("its 'startup_timeout'")
    """What a person changes to give the server longer (said when it does not start in time)."""
    enabled: bool = True
    sandbox: bool = False
    """stdio: run the server inside the OS sandbox, as a command that runs unasked (the workspace writable,
    the network only to ``sandbox_allow_hosts`` through the proxy); where no sandbox works it does not start.
    The servers an editor names (``swebash-ai acp``) always do."""

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either 'command' (a stdio server) or 'url' (a streamable-HTTP server)")
        if self.command is not None and (self.headers or self.bearer_token_env):
            raise ValueError("'headers' and 'bearer_token_env' apply to 'url' servers only")
        if self.url is not None:
            if self.args or self.env or self.cwd or self.sandbox:
                raise ValueError("'args', 'env', 'cwd' and 'sandbox' apply to 'command' servers only")
            if not self.url.startswith(("http://", "https://")):
                raise ValueError(f"'url' must start with http:// or https:// (got {self.url!r})")
        return self

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"


def parse_mcp_servers(
    file_table: Any, profile_table: Any, where: str, profile: str | None = None
) -> dict[str, McpServerConfig]:
    """Validate the file's and the profile's ``mcp_servers`` tables; the profile's servers replace the file's.

    Raises:
        ConfigError: not a table of tables, a bad server name, an unknown key or a bad value (names the server).
    """
    merged: dict[str, tuple[Any, str]] = {}
    for table, label in ((file_table, "[mcp_servers]"), (profile_table, f"[profiles.{profile}.mcp_servers]")):
        if table is None:
            continue
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where}: {label} must be a table of [mcp_servers.NAME] tables.")
        for name, body in table.items():
            merged[str(name)] = (body, label)
    servers: dict[str, McpServerConfig] = {}
    for name, (body, label) in merged.items():
        what = f"{where}: MCP server '{name}' ({label[:-1]}.{name}])"
        if not _NAME.match(name):
            raise ConfigError(f"{what}: a server name is 1-32 letters, digits, '_' or '-'.")
        if not isinstance(body, Mapping):
            raise ConfigError(f"{what}: must be a table (command = ... or url = ...).")
        if "name" in body:
            raise ConfigError(f"{what}: unknown key 'name' (the table's name is the server's name).")
        try:
            servers[name] = McpServerConfig(name=name, **dict(body))
        except ValidationError as exc:
            problems = []
            for err in exc.errors():
                loc = ".".join(str(p) for p in err["loc"])
                if err["type"] == "extra_forbidden":
                    problems.append(f"unknown key '{loc}'")
                else:
                    msg = str(err["msg"]).removeprefix("Value error, ")
                    problems.append(f"'{loc}': {msg}" if loc else msg)
            raise ConfigError(
                f"{what}: " + "; ".join(problems) + ".",
                hint="See docs/mcp.md for the keys an MCP server table takes.",
            ) from None
    return servers

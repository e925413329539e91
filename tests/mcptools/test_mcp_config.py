"""``[mcp_servers.NAME]`` tables: validation with errors that name the server, profiles, and tool names."""

from __future__ import annotations

from pathlib import Path

import pytest

from swebash_ai.config.settings import load_settings
from swebash_ai.errors import ConfigError
from swebash_ai.tools.mcp_client import tool_name


def test_stdio_and_http_servers_load(config_toml: Path) -> None:
    config_toml.write_text(
        '[mcp_servers.git]\ncommand = "mcp-server-git"\nargs = ["--repository", "."]\n'
        'auto_approve = ["git_log"]\ntimeout = 30\n'
        '[mcp_servers.tracker]\nurl = "https://example.invalid/mcp"\nbearer_token_env = "TOKEN"\nenabled = false\n'
    )
    servers = load_settings().mcp_servers
    assert servers["git"].transport == "stdio" and servers["git"].args == ["--repository", "."]
    assert servers["git"].auto_approve == ["git_log"] and servers["git"].timeout == 30
    assert servers["tracker"].transport == "http" and not servers["tracker"].enabled


def test_a_profile_replaces_and_adds_servers(config_toml: Path) -> None:
    config_toml.write_text(
        '[mcp_servers.a]\ncommand = "one"\n'
        '[profiles.work.mcp_servers.a]\ncommand = "two"\n[profiles.work.mcp_servers.b]\nurl = "http://127.0.0.1:1/mcp"\n'
    )
    assert load_settings().mcp_servers["a"].command == "one"
    work = load_settings(profile="work").mcp_servers
    assert work["a"].command == "two" and set(work) == {"a", "b"}


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ('command = "x"\ntimout = 3\n', "unknown key 'timout'"),  # a typo is named, not ignored
        ('command = "x"\ntimeout = -1\n', "'timeout'"),  # a bad value names the key
        ('args = ["x"]\n', "either 'command'"),  # neither transport
        ('command = "x"\nurl = "http://h/mcp"\n', "either 'command'"),  # both transports
        ('url = "ftp://h/mcp"\n', "http://"),  # not an HTTP URL
        ('command = "x"\nheaders = {a = "b"}\n', "'url' servers only"),  # HTTP key on a stdio server
    ],
)
def test_bad_tables_are_errors_naming_the_server(config_toml: Path, table: str, said: str) -> None:
    config_toml.write_text("[mcp_servers.broken]\n" + table)
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "MCP server 'broken'" in err.value.message and said in err.value.message


def test_the_cli_exits_2_on_a_bad_table(config_toml: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from swebash_ai.frontends.cli import main

    config_toml.write_text('[mcp_servers.broken]\ncommand = "x"\nbogus = 1\n')
    assert main(["mcp", "list"]) == 2
    assert "broken" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("server", "tool", "taken", "expected"),
    [
        ("git", "git_log", set(), "mcp__git__git_log"),
        ("my.srv", "do it!", set(), "mcp__my_srv__do_it_"),  # unsafe characters become _
        ("git", "log", {"mcp__git__log"}, "mcp__git__log_2"),  # a collision gets a suffix
        ("s", "t" * 100, set(), "mcp__s__" + "t" * 56),  # at most 64 characters
        ("s", "t" * 100, {"mcp__s__" + "t" * 56}, "mcp__s__" + "t" * 54 + "_2"),  # still 64 with a suffix
    ],
)
def test_tool_names(server: str, tool: str, taken: set[str], expected: str) -> None:
    assert tool_name(server, tool, set(taken)) == expected

"""Start-up stays lazy: ``--help`` imports nothing heavy, and a one-shot answer from an OpenAI-compatible
endpoint into a pipe never imports litellm, textual, prompt_toolkit or our Markdown rendering (rich.markdown).

``rich.console`` itself may still load on that path through the front end's output; httpx's own command-line
module (rich and click) is kept out by the provider (tests/providers/test_http_provider.py). No tool's pydantic
argument model is built on that path either."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

# "mcp" and "jsonschema": with no [mcp_servers] configured nothing of the MCP SDK loads (issue 13).
# "acp": the Agent Client Protocol SDK (0.4 s of pydantic models) loads for `swebash-ai acp` only (issue 41).
# "psutil": 12 ms of CPU, for a command's process tree only (issue 23).
# "pydantic_settings": 30 ms; load_settings layers the sources itself. "swebash_ai.safety.commands": the command
# classifier, 8 ms, built when a command is first judged (issue 23).
# The tool implementations, the snapshot machinery and the shell parser: an answer that calls no tool needs none of
# them; a built-in tool is offered from its generated data and its module imported at its first call (issue 23).
# The process machinery (and its spare supervisor), the secret scanners, ask_user, plan, custom commands,
# mentions, hooks and MCP settings load with their first use: an answer alone, in a folder without AGENTS.md,
# needs none of them (issue 23, 25 ms of a `-c hi` with the supervisor a turn no longer starts).
# Images (agent.images, Pillow as "PIL"): loaded for an image attached, never for a question alone (issue 42).
LAZY = ("swebash_ai.tools.fs", "swebash_ai.tools.fs_write", "swebash_ai.tools.search", "swebash_ai.tools.find",
        "swebash_ai.tools.exec", "swebash_ai.tools.web", "swebash_ai.tools.snapshots", "swebash_ai.safety.shell_parse",
        "swebash_ai.tools.process", "swebash_ai.tools.containment", "swebash_ai.safety.secrets",
        "swebash_ai.safety.redact", "swebash_ai.tools.ask", "swebash_ai.tools.plan", "swebash_ai.agent.mentions",
        "swebash_ai.agent.custom_commands", "swebash_ai.agent.hooks", "swebash_ai.config.hooks",
        "swebash_ai.config.mcp", "swebash_ai.agent.hook_files", "swebash_ai.agent.images")
HEAVY = ("litellm", "textual", "prompt_toolkit", "rich.markdown", "mcp", "jsonschema", "psutil", "pydantic_settings",
         "PIL", "swebash_ai.safety.commands", "acp", "swebash_ai.frontends.acp", *LAZY)

_PROBE = """
import sys
import importlib.metadata
scanned = []
def spy(name, real):
    def call(*args, **kwargs):
        scanned.append(name)
        return real(*args, **kwargs)
    return call
for name in ("entry_points", "distributions"):  # how pydantic 2.14 and 2.13 look for their plugins
    setattr(importlib.metadata, name, spy(name, getattr(importlib.metadata, name)))
from swebash_ai.frontends.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
loaded = sorted(h for h in {heavy!r} if h in sys.modules)
if scanned:  # pydantic looked for its plugins (see cli.skip_pydantic_plugins)
    loaded.append("pydantic plugins")
from swebash_ai.tools import builtin_tools
# A tool's argument model is built at its first call, not at the start (its schema is data: tools/schemas.py).
loaded += ["model of " + t.name for t in builtin_tools() if t._args_model is not None]
print("HEAVY:" + ",".join(loaded), file=sys.stderr)
sys.exit(code)
"""


def test_cli_module_imports_nothing_heavy() -> None:
    names = (*HEAVY, "rich", "openai", "pydantic", "httpx")
    code = f"import sys, swebash_ai.frontends.cli; print(','.join(h for h in {names!r} if h in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_oneshot_into_a_pipe_imports_no_heavy_module(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                     workspace: Any) -> None:
    llm_env.enqueue(Reply.text("hello"))
    res = subprocess.run([sys.executable, "-c", _PROBE.format(heavy=HEAVY), "-c", "hi"], capture_output=True,
                         text=True, env=cli_env, cwd=workspace, stdin=subprocess.DEVNULL, timeout=60,
                         start_new_session=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "hello\n"
    assert res.stderr.strip().splitlines()[-1] == "HEAVY:"

"""Start-up stays lazy: ``--help`` imports nothing heavy, and a one-shot answer from an OpenAI-compatible
endpoint into a pipe never imports litellm, textual, rich or prompt_toolkit."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

HEAVY = ("litellm", "textual", "rich", "prompt_toolkit")

_PROBE = """
import sys
from swebash_ai.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set({heavy!r}))
print("HEAVY:" + ",".join(loaded), file=sys.stderr)
sys.exit(code)
"""


def test_cli_module_imports_nothing_heavy() -> None:
    code = ("import sys, swebash_ai.cli; bad = sorted({m.split('.')[0] for m in sys.modules} & "
            f"set({(*HEAVY, 'openai', 'pydantic', 'httpx')!r})); print(','.join(bad))")
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

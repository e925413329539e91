"""The core is headless and light: importing it loads no UI library and no provider SDK."""

from __future__ import annotations

import subprocess
import sys


def loaded_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint(','.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(out.stdout.strip().split(","))


def test_core_imports_no_ui_library() -> None:
    mods = loaded_after(
        "import swebash_ai.agent, swebash_ai.tools, swebash_ai.safety, swebash_ai.providers, "
        "swebash_ai.config.settings, swebash_ai.session\nfrom swebash_ai.tools import builtin_tools\nbuiltin_tools()"
    )
    assert not mods & {"textual", "rich", "prompt_toolkit"}, mods & {"textual", "rich", "prompt_toolkit"}


def test_core_import_loads_no_provider_sdk() -> None:
    mods = loaded_after("import swebash_ai.session, swebash_ai.providers")
    assert not mods & {"litellm", "openai", "ddgs", "httpx"}, mods & {"litellm", "openai", "ddgs", "httpx"}

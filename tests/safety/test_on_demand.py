"""The session's command classifier is imported and built at its first use, and is then the real policy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from swebash_ai.safety.commands import CommandPolicy
from swebash_ai.safety.on_demand import CommandPolicyOnDemand
from swebash_ai.safety.paths import PathPolicy


def test_it_judges_as_the_classifier_does(tmp_path: Path) -> None:
    paths = PathPolicy(roots=[tmp_path])
    lazy, real = CommandPolicyOnDemand(paths), CommandPolicy(paths)
    assert lazy._policy is None
    for command in ("ls -la", "rm -rf /", "cat ~/.ssh/id_rsa", "git status && git push"):
        assert lazy.assess(command, str(tmp_path)) == real.assess(command, str(tmp_path)), command
        assert lazy.session_key(command) == real.session_key(command)
    assert isinstance(lazy._policy, CommandPolicy)
    assert lazy.paths is paths


def test_building_a_session_context_imports_no_classifier(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from swebash_ai.config.settings import load_settings\n"
        "from swebash_ai.session import Session\n"
        f"s = Session(load_settings(), cwd=Path({str(tmp_path)!r}), probe_ollama=False)\n"
        "print(type(s.context.command_policy).__name__, 'swebash_ai.safety.commands' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["CommandPolicyOnDemand", "False"]

"""Prove the sandbox works here: run a probe command confined, and check what it could not do.

Contract:
    :func:`self_test` builds a throw-away workspace and home (outside ``/tmp``, which the sandbox replaces),
    confines a small bash script with the backend chosen for ``backend`` and reports what held: a write in the
    workspace succeeds; a write outside it is refused; ``~/.ssh/id_rsa`` of the throw-away home cannot be read;
    a TCP connection to a server this process listens on (loopback) fails. ``doctor`` prints it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from swebash_ai.errors import ToolError
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.sandbox import detect
from swebash_ai.sandbox.confine import wrap
from swebash_ai.sandbox.policy import build_policy

__all__ = ["SelfTest", "self_test"]

_SCRIPT = """
echo ok > "$WS/inside" || echo FAIL_WORKSPACE
echo x 2>/dev/null > "$OUT/outside" && echo FAIL_OUTSIDE
grep -q SECRET "$KEY" 2>/dev/null && echo FAIL_HIDDEN
(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && echo FAIL_NETWORK
echo DONE
"""
_FAILS = {
    "FAIL_WORKSPACE": "a write inside the workspace failed",
    "FAIL_OUTSIDE": "a write outside the workspace got through",
    "FAIL_HIDDEN": "a hidden file (~/.ssh/id_rsa) could be read",
    "FAIL_NETWORK": "a TCP connection to this machine's loopback got through",
}


@dataclass(frozen=True)
class SelfTest:
    """What the probe showed: ``ok`` when every rule held; ``detail`` says which did not, or why it could not run."""

    ok: bool
    backend: str
    detail: str


def _base() -> str | None:
    # not /tmp: the sandbox has its own, so a probe there would prove nothing
    for candidate in ("/var/tmp", os.path.expanduser("~/.cache")):  # noqa: S108
        if os.path.isdir(candidate) and os.access(candidate, os.W_OK):
            return candidate
    return None


def self_test(backend: str = "auto", timeout: float = 20.0) -> SelfTest:
    """Run the probe (see the module docstring)."""
    choice = detect.choose(backend)
    if choice.backend is None:
        return SelfTest(False, "none", choice.problem)
    bash = shutil.which("bash")
    if bash is None:
        return SelfTest(False, choice.backend, "bash is not on PATH")
    top = Path(tempfile.mkdtemp(prefix="swebash-ai-sandbox-test-", dir=_base()))
    server = socket.socket()
    try:
        ws, home, out = top / "ws", top / "home", top / "out"
        for d in (ws, home / ".ssh", out):
            d.mkdir(parents=True)
        (home / ".ssh" / "id_rsa").write_text("SECRET\n")
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        policy = build_policy(PathPolicy(roots=[ws], home=home))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "WS": str(ws), "OUT": str(out),
               "KEY": str(home / ".ssh" / "id_rsa"), "PORT": str(server.getsockname()[1])}
        argv = wrap(policy, [bash, "--noprofile", "--norc", "-c", _SCRIPT], cwd=ws, backend=choice.backend)
        res = subprocess.run(argv, cwd=ws, env=env, capture_output=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SelfTest(False, choice.backend, f"the probe could not run: {exc}")
    except ToolError as exc:
        return SelfTest(False, choice.backend, exc.message)
    finally:
        server.close()
        shutil.rmtree(top, ignore_errors=True)
    said = res.stdout.decode("utf-8", "replace")
    failed = [why for mark, why in _FAILS.items() if mark in said]
    if "DONE" not in said:
        err = res.stderr.decode("utf-8", "replace").strip().splitlines()
        failed.append(f"the probe did not finish (exit {res.returncode}: {err[-1] if err else 'no message'})")
    if failed:
        return SelfTest(False, choice.backend, "; ".join(failed))
    return SelfTest(True, choice.backend, "a write outside the workspace refused, a hidden file unreadable, "
                    "no network")

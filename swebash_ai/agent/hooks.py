"""Running the user's hooks: a program, a JSON object on its stdin, an opinion back.

Contract:
    :func:`run_hook` never raises. It returns an :class:`Opinion`: ``decision`` ``deny``/``ask``/``allow``
    with a reason, or ``None`` (no opinion), and ``output`` to show (after_tool, turn_end). A hook that
    cannot start, exits with an unexpected code, prints something that is not the expected JSON, or runs
    past its timeout has no opinion and a ``problem`` the user is told about: a broken hook never crashes a
    turn, and never allows anything.

    Exit codes: 0 and no output (or output that is not a JSON object): no opinion; 0 and a JSON object with
    ``"decision"`` (and ``"reason"``): that decision; 2: deny, stderr as the reason; anything else: a failure.

Why through ``run_process``:
    It is the one place that starts processes (process-group kill at the timeout, a scrubbed environment,
    no terminal). Its children get no stdin, so the JSON goes in a private temporary file redirected to
    the hook's standard input.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swebash_ai.config.hooks import Hook
from swebash_ai.errors import SwebashError
from swebash_ai.tools.process import run_process

_DECISIONS = frozenset({"allow", "ask", "deny"})
MAX_OUTPUT = 20_000


@dataclass(frozen=True)
class Opinion:
    decision: str | None = None
    reason: str = ""
    output: str = ""
    problem: str = ""


async def run_hook(hook: Hook, payload: dict[str, Any], cwd: Path) -> Opinion:
    """Run ``hook`` in ``cwd`` with ``payload`` on stdin (see the module docstring)."""
    fd, name = tempfile.mkstemp(prefix="swebash-hook-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, ensure_ascii=False, default=str)
        command = f"{shlex.join(hook.command)} < {shlex.quote(name)}"
        try:
            done = await run_process(command, cwd=cwd, timeout=hook.timeout, max_output=MAX_OUTPUT)
        except SwebashError as exc:
            return Opinion(problem=f"could not start: {exc}")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)
    if done.timed_out:
        return Opinion(problem=f"did not finish within {hook.timeout:g} s and was stopped")
    out, err = done.stdout.strip(), done.stderr.strip()
    if done.exit_code == 2:
        return Opinion("deny", _line(err) or "the hook refused it (exit 2)", output=out)
    if done.exit_code != 0:
        detail = _line(err) or _line(out)
        return Opinion(output=out, problem=f"failed (exit {done.exit_code}{': ' + detail if detail else ''})")
    if out.startswith("{"):
        try:
            data = json.loads(out)
        except json.JSONDecodeError:
            return Opinion(output=out)
        decision = data.get("decision") if isinstance(data, dict) else None
        if decision is None:
            return Opinion(output=out)
        if decision not in _DECISIONS:
            return Opinion(problem=f"answered an unknown decision {decision!r} (allow, ask or deny)")
        return Opinion(str(decision), _line(str(data.get("reason") or "")))
    return Opinion(output="\n".join(p for p in (out, err) if p))


def _line(text: str) -> str:
    """A reason: its first line, bounded (it reaches the model and the approval dialog)."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first[:300]

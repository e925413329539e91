"""Diagnostics as the model and people read them: errors first, capped, and never a silence that reads clean.

Contract:
    :func:`render` turns a :class:`~swebash_ai.lsp.service.FileCheck` into a few lines for a tool result and
    the same as data for front ends (``--json``, ACP, the tool pane). Errors come first, then warnings; at most
    :data:`PER_FILE` of the edited file and :data:`OTHER_FILES` of other files' new errors are listed, then
    "N more". Every line is ``path:line:col: severity[code] (source) message``.

    A check that could not see the file's diagnostics says so in one sentence ("no diagnostics: the server
    timed out after 5 s"); no output at all only for a file no server checks.

    The messages come from the project (a server repeats names and strings of its code), so they are
    untrusted: each is cut to :data:`MESSAGE_CHARS`, its terminal controls removed and invisible characters
    marked (``safety.terminal_text``), and its credential-looking values masked (``safety.secrets``) here, so
    the data front ends receive is as clean as the text the loop scans again.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from swebash_ai.lsp.client import Diag
from swebash_ai.lsp.service import FileCheck

__all__ = ["MESSAGE_CHARS", "OTHER_FILES", "PER_FILE", "clean_message", "diag_line", "render"]

PER_FILE = 10
OTHER_FILES = 5
MESSAGE_CHARS = 300
_SEVERITY = {1: "error", 2: "warning", 3: "info", 4: "hint"}


def clean_message(text: str) -> str:
    """A diagnostic's text made safe to show and to send: one line, capped, controls gone, secrets masked."""
    from swebash_ai.safety.secrets import mask_secrets
    from swebash_ai.safety.terminal_text import safe

    one = " ".join(safe(text).split())  # controls removed whole, invisible characters shown as markers
    if len(one) > MESSAGE_CHARS:
        one = one[:MESSAGE_CHARS] + "…"
    return mask_secrets(one).text


def _rel(path: str, cwd: Path) -> str:
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def diag_line(d: Diag, cwd: Path) -> str:
    code = f"[{clean_message(d.code)}]" if d.code else ""
    source = f" ({clean_message(d.source)})" if d.source else ""
    return f"{clean_message(_rel(d.path, cwd))}:{d.line}:{d.col}: {_SEVERITY.get(d.severity, 'error')}{code}{source} " \
           f"{clean_message(d.message)}"


def _ordered(diags: Sequence[Diag]) -> list[Diag]:
    return sorted(diags, key=lambda d: (d.severity, d.line, d.col))


def _data(d: Diag, cwd: Path) -> dict[str, Any]:
    return {"path": clean_message(_rel(d.path, cwd)), "line": d.line, "col": d.col,
            "severity": _SEVERITY.get(d.severity, "error"), "code": clean_message(d.code),
            "source": clean_message(d.source), "message": clean_message(d.message)}


def _counts(diags: Sequence[Diag]) -> str:
    errors = sum(1 for d in diags if d.severity == 1)
    warnings = sum(1 for d in diags if d.severity == 2)
    other = len(diags) - errors - warnings
    parts = [f"{errors} error{'s' * (errors != 1)}", f"{warnings} warning{'s' * (warnings != 1)}"]
    if other:
        parts.append(f"{other} note{'s' * (other != 1)}")
    return ", ".join(parts)


def render(check: FileCheck, cwd: Path) -> tuple[str, dict[str, Any]]:
    """``(text, data)`` of one check: text for the tool result (empty when no server checks such files), and
    the same as data for ``metadata["diagnostics"]``."""
    name = clean_message(_rel(str(check.path), cwd))
    data: dict[str, Any] = {"status": check.status, "server": check.server, "path": name,
                            "seconds": round(check.seconds, 3)}
    if check.status == "none":
        return "", data
    if check.status == "pending":
        return "", data
    if check.status != "ok":
        why = {
            "timeout": f"the server ({check.server}) timed out after {check.limit:g} s",
            "crashed": f"the server ({check.server}) crashed: {check.detail}",
            "missing": check.detail,
            "failed": check.detail,
        }.get(check.status, check.detail)
        sentence = f"no diagnostics for {name}: {clean_message(why)}."
        if check.status == "timeout":
            sentence += " This is not a clean result: the file was not checked."
        data["note"] = sentence
        return f"\n\n{sentence}", data
    ordered = _ordered(check.diags)
    shown = ordered[:PER_FILE]
    data.update(errors=sum(1 for d in ordered if d.severity == 1), warnings=sum(1 for d in ordered if d.severity == 2),
                items=[_data(d, cwd) for d in shown], more=len(ordered) - len(shown))
    if not ordered:
        lines = [f"Diagnostics ({check.server}): no problems in {name}."]
    else:
        lines = [f"Diagnostics ({check.server}) for {name}: {_counts(ordered)}"]
        lines += [f"  {diag_line(d, cwd)}" for d in shown]
        if len(ordered) > len(shown):
            lines.append(f"  ... {len(ordered) - len(shown)} more")
    if check.new_elsewhere:
        other = _ordered(check.new_elsewhere)
        lines.append(f"New errors in other files after this change: {len(other)}")
        lines += [f"  {diag_line(d, cwd)}" for d in other[:OTHER_FILES]]
        if len(other) > OTHER_FILES:
            lines.append(f"  ... {len(other) - OTHER_FILES} more")
        data["elsewhere"] = [_data(d, cwd) for d in other[:OTHER_FILES]]
        data["elsewhere_more"] = max(0, len(other) - OTHER_FILES)
    return "\n\n" + "\n".join(lines), data

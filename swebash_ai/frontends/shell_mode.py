"""``swebash-ai --shell -c WORDS``: plain words in, exactly one shell command out, never run.

The contract, relied on by the key bindings of :mod:`swebash_ai.frontends.shell_init`:

* **stdout** is the proposed command on one line and nothing else; exit code 0. When no command can be
  obtained (the model failed, or its answer holds no command) stdout is empty, stderr says why, exit code 1
  (a configuration error keeps its usual 2).
* **Nothing runs but read-only tools.** The model may look around (list files, read a name) with the tools
  the policy allows without asking; anything that needs approval is denied silently, with a reason the model
  reads, never a prompt: the key binding has no room for a question and the user runs the command anyway.
* **Never a control character on the line.** An answer holding an escape sequence or a control character
  (a prompt-injected model can hide a second command behind a carriage return, or drive the terminal) is
  refused: stderr says so (the command shown with escapes), stdout stays empty, exit code 1.
* **stderr**, when it is a terminal, gets one short line with the safety classifier's verdict of the proposed
  command (``would ask: ...``), so the user knows before pressing Enter.

The model's answer is turned into one line by :func:`extract_command` (fences, ``$`` prompts and prose
removed). The request is not kept as a saved session: ``--resume`` keeps continuing the user's conversation.
This module imports only the standard library at module level, like :mod:`swebash_ai.frontends.oneshot`.
"""

from __future__ import annotations

import os
import platform
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from swebash_ai.agent.approval import Decision
    from swebash_ai.agent.events import ApprovalRequest
    from swebash_ai.config.settings import LoadedSettings
    from swebash_ai.safety.verdict import Verdict
    from swebash_ai.session import Session

VERDICT_ENV = "SWEBASH_AI_SHELL_VERDICT"
"""Set (by the zsh binding, which shows stderr in its own message area) to print the verdict to a pipe too."""

_FENCE_RE = re.compile(r"^[ \t]*(```+|~~~+)[ \t]*([\w+-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)
_PROMPT_RE = re.compile(r"^(?:\$|%|❯|>)\s+")
_INLINE_RE = re.compile(r"`([^`\n]+)`")
_PROSE_END = (".", ":", "!", "?", ")")
# A line ending in one of these continues on the next line with a space, not a `;` (`do;` is a syntax error).
_OPENERS = ("do", "then", "else", "{", "(", "|", "&&", "||", "in")
_NOT_SHELL = {"python", "py", "json", "yaml", "toml", "text", "txt", "markdown", "md", "diff", "output"}


def extract_command(answer: str) -> str | None:
    """The one runnable line in a model's answer, or ``None`` when there is none.

    The first fenced block (a shell one, or one with no language) wins; without fences, lines shown with a
    ``$`` prompt win, then lines that do not read as prose; an answer that is one sentence with an inline
    ``code`` span gives that span. Several lines become one: ``\\`` continuations are joined, separate
    commands are chained with ``; `` (or a space after ``do``, ``then``, a pipe...).
    """
    text = answer.replace("\r\n", "\n").strip()
    if not text:
        return None
    lines: list[str] = []
    for match in _FENCE_RE.finditer(text):
        if match.group(2).lower() in _NOT_SHELL:
            continue
        block = match.group(3).splitlines()
        prompted = [ln for ln in block if _PROMPT_RE.match(ln.strip())]
        lines = _command_lines(prompted or block)  # a console transcript: its commands, not its output
        if lines:
            break
    if not lines and "```" not in text:
        raw = text.splitlines()
        prompted = [ln for ln in raw if _PROMPT_RE.match(ln.strip())]
        if prompted:
            lines = _command_lines(prompted)
        else:
            plain = [ln for ln in raw if ln.strip() and not _is_prose(ln.strip())]
            lines = _command_lines(plain[:1] if len(plain) < len([r for r in raw if r.strip()]) else plain)
            if not lines:
                spans = _INLINE_RE.findall(text)
                lines = _command_lines(spans[:1])
    return _join(lines) if lines else None


def _is_prose(line: str) -> bool:
    """A sentence rather than a command: it ends like a sentence and starts with a capitalised word."""
    if _PROMPT_RE.match(line):
        return False
    words = line.split()
    return line.endswith(_PROSE_END) and len(words) > 2 and words[0][:1].isupper() and words[0].isalpha()


def _command_lines(raw: list[str]) -> list[str]:
    out: list[str] = []
    for line in raw:
        stripped = _PROMPT_RE.sub("", line.strip(), count=1).strip()
        if stripped.startswith("`") and stripped.endswith("`") and len(stripped) > 1:
            stripped = stripped.strip("`").strip()
        if stripped and not stripped.startswith("#"):
            out.append(stripped)
    return out


def _join(lines: list[str]) -> str:
    joined = ""
    for line in lines:
        if not joined:
            joined = line
        elif joined.endswith("\\"):
            joined = joined[:-1].rstrip() + " " + line
        elif joined.split()[-1] in _OPENERS or joined.endswith(("|", ";", "&&", "||")):
            joined += " " + line
        else:
            joined += "; " + line
    return joined.rstrip("\\").strip()


def describe_verdict(verdict: Verdict) -> str:
    """One short line for stderr: what swebash-ai itself would do with the command."""
    why = "; ".join(verdict.reasons[:2])
    if verdict.decision == "allow":
        return "would run without asking (read-only)"
    if verdict.decision == "ask":
        return f"would ask: {why}" if why else "would ask before running it"
    return f"would refuse: {why}" if why else "would refuse to run it"


def build_request(words: str, cwd: Path, environ: dict[str, str] | None = None) -> str:
    """The user message: the request plus what the command must fit (shell, system, directory)."""
    env = os.environ if environ is None else environ
    shell = os.path.basename(env.get("SHELL", "") or "sh")
    system = platform.system()
    return (
        f"Turn this request into ONE command for {shell} on {system}, to be run in {cwd}:\n\n{words.strip()}\n\n"
        "Answer with the command alone in one ```sh fenced block: no explanation, no prompt sign, no "
        "placeholder the user must fill in. You may use the read-only tools to look (file names, contents); "
        "do not run or change anything: the user reads the command and runs it."
    )


class _ReadOnlyApprover:
    """Denies, without asking, every call that needs approval: shell mode runs read-only tools only."""

    interactive = False
    reason = "shell mode runs read-only tools only; put the command in your answer instead"

    async def decide(self, request: ApprovalRequest) -> Decision:
        from swebash_ai.agent.approval import Decision

        return Decision.DENY


def run_shell_mode(
    loaded: LoadedSettings,
    words: str,
    *,
    cwd: Path | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Ask for one command, print it on stdout (and its verdict on a terminal's stderr); the exit code."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    if words == "-":  # like -c -: the words come from stdin
        words = sys.stdin.read() if sys.stdin is not None else ""
    if not words.strip():
        err.write("swebash-ai: --shell: nothing to turn into a command.\n")
        return 1
    import asyncio

    from swebash_ai.safety.terminal_text import has_controls, has_invisible, safe

    try:
        answer, session = asyncio.run(_ask(loaded, words, cwd))
    except KeyboardInterrupt:
        err.write("swebash-ai: interrupted\n")
        return 130
    except Exception as exc:
        from swebash_ai.errors import ConfigError, SwebashError
        from swebash_ai.frontends.oneshot_render import format_error

        if not isinstance(exc, SwebashError):
            raise
        err.write(safe(format_error(exc), visible=True) + "\n")  # the one-line form every edge prints
        return 2 if isinstance(exc, ConfigError) else 1
    command = extract_command(answer)
    if command is None:
        err.write("swebash-ai: no command in the model's answer.\n")
        return 1
    if has_controls(answer):  # the whole answer: splitting lines turns a hidden \r into a visible "; "
        shown = safe(command, visible=True)
        err.write("swebash-ai: refused: the model's answer holds terminal control characters, which could hide "
                  f"what the command runs or drive your terminal (shown as escapes): {shown}\n")
        return 1
    if has_invisible(command):  # a bidi override or a zero-width space: the line would not read as it runs
        err.write("swebash-ai: refused: the command holds invisible or direction-changing characters, which "
                  f"make it read unlike what runs (shown as markers): {safe(command, visible=True)}\n")
        return 1
    out.write(command + "\n")
    out.flush()
    if err.isatty() or os.environ.get(VERDICT_ENV):
        verdict = session.context.command_policy.assess(command, str(session.cwd))
        err.write(f"swebash-ai: {describe_verdict(verdict)}\n")
        err.flush()
    return 0


async def _ask(loaded: LoadedSettings, words: str, cwd: Path | None) -> tuple[str, Session]:
    """Run one turn; the final answer's text (a failed turn raises its error)."""
    from swebash_ai.agent import events as ev
    from swebash_ai.providers import no_provider_error
    from swebash_ai.session import Session

    session = Session(loaded, approver=_ReadOnlyApprover(), cwd=cwd)
    if not session.has_provider:
        raise no_provider_error()
    answer = ""
    try:
        async for event in session.run(build_request(words, session.cwd)):
            if isinstance(event, ev.TurnFailed):
                raise event.error
            if isinstance(event, ev.TurnFinished):
                answer = event.text
    finally:
        # Not a conversation to continue: keep --resume pointing at the user's own sessions.
        session.session_file.unlink(missing_ok=True)
    return answer, session

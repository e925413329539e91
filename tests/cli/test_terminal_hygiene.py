"""The command line never lets the model's text drive the user's terminal: ``-c`` in a pipe and on a
terminal, ``--raw``, ``--json``, ``--shell -c``, ``export --format markdown`` and the approval question."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent.events import ApprovalRequest
from swebash_ai.frontends.prompt_approver import _reverse_markers, format_request
from swebash_ai.safety.terminal_text import sanitize
from swebash_ai.safety.verdict import Verdict
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from ._helpers import command

ESC, BEL, ST = "\x1b", "\x07", "\x1b\\"
HOSTILE = (
    "Here is the summary.\n\n"
    f"{ESC}]0;PWNED-TITLE{BEL}{ESC}]2;PWNED-TITLE-2{ST}{ESC}]52;c;Q0xJUEJPQVJE{BEL}"
    f"Read {ESC}]8;;https://evil.example/{ST}https://docs.python.org{ESC}]8;;{ST} for more.\n\n"
    f"{ESC}[2J{ESC}[H{ESC}[10;5H{ESC}[3Aafter the wipe\n\n"
    "ls -l\rrm -rf ~\n\n"
    "\x9b2Jeight-bit\n\n"
    f"```sh\necho {ESC}[31mred{ESC}[0m\n```\n\n"
    f"The end{ESC}]0;UNTERMINATED"
)
PAYLOADS = ("PWNED", "Q0xJUEJPQVJE", "evil.example", "UNTERMINATED")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def test_a_pipe_gets_the_text_without_controls_and_a_note(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(
        Reply.tool_calls([("list_dir", {"path": f"no{ESC}]0;PWNED{BEL}such"})]),
        Reply.text(HOSTILE, chunk_size=3),
    )
    res = run_cli("-c", "summarise the page")
    assert res.returncode == 0, res.stderr
    assert res.stdout == sanitize(HOSTILE).text + "\n"
    assert not _CONTROL.search(res.stdout)
    assert "ls -lrm -rf ~" in res.stdout  # what a carriage return would have hidden is there to read
    for payload in PAYLOADS:
        assert payload not in res.stdout
    # stderr: the activity line shows the call's escapes as text, and a note says what was removed.
    assert not _CONTROL.search(res.stderr), res.stderr
    assert "no\\x1b]0;PWNED\\x07such" in res.stderr
    assert "14 terminal control sequences were removed from the answer (--raw keeps them)" in res.stderr


def test_raw_keeps_the_exact_text(llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path) -> None:
    llm_env.enqueue(Reply.text(HOSTILE, chunk_size=3))
    res = subprocess.run(command("-c", "summarise the page", "--raw"), capture_output=True, cwd=workspace,
                         env=cli_env, stdin=subprocess.DEVNULL, timeout=60)  # bytes: a CR stays a CR
    assert res.returncode == 0, res.stderr
    assert res.stdout == (HOSTILE + "\n").encode()
    assert res.stderr == b""


@pytest.mark.parametrize("args", [["--raw"], ["--shell", "-c", "x", "--raw"], ["-c", "x", "--raw", "--json"]])
def test_raw_outside_a_plain_answer_is_a_usage_error(args: list[str], run_cli: Any) -> None:
    res = run_cli(*args)
    assert res.returncode == 2
    assert "--raw" in res.stderr


def test_json_escapes_c1_controls_too(llm_env: FakeLLMServer, run_cli: Any) -> None:
    text = f"a\x9b2Jb{ESC}]0;t{BEL}c\x7f"
    llm_env.enqueue(Reply.text(text, chunk_size=0))
    res = run_cli("-c", "hi", "--json")
    assert res.returncode == 0, res.stderr
    assert not _CONTROL.search(res.stdout)  # JSON escapes C0; DEL and C1 (8-bit CSI) are escaped as well
    final = [json.loads(line) for line in res.stdout.splitlines() if '"final"' in line]
    assert final[0]["text"] == text  # the exact text, for the program that reads it


@pytest.mark.parametrize("answer", [
    f"```sh\nls -la {ESC}]0;PWNED{BEL}\n```",
    "```sh\nls -l\rrm -rf ~\n```",  # the shell line would show only what comes after the CR
    "```sh\nfind . -name x\x9b2J\n```",
])
def test_shell_mode_refuses_a_command_holding_control_characters(
    answer: str, llm_env: FakeLLMServer, run_cli: Any
) -> None:
    llm_env.enqueue(Reply.text(answer))
    res = run_cli("--shell", "-c", "list the files")
    assert res.returncode == 1
    assert res.stdout == ""
    assert "refused" in res.stderr and "terminal control characters" in res.stderr
    assert not _CONTROL.search(res.stderr)


def test_export_markdown_shows_control_characters_as_escapes(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.text(HOSTILE))
    assert run_cli("-c", "summarise the page").returncode == 0
    res = run_cli("export", "--format", "markdown")
    assert res.returncode == 0, res.stderr
    assert not _CONTROL.search(res.stdout)
    assert "\\x1b]0;PWNED-TITLE\\x07" in res.stdout  # a transcript says what the model wrote


def test_the_approval_question_shows_escapes_and_warns() -> None:
    command = f"echo ok{ESC}[2K\rrm -rf ~/{ESC}]0;PWNED{BEL}"
    request = ApprovalRequest("c1", "run_command", f"$ {command}", command, "/ws", Verdict.ask("deletes files"))
    text = format_request(request)
    assert not _CONTROL.search(text)
    assert "echo ok\\x1b[2K\\rrm -rf ~/\\x1b]0;PWNED\\x07" in text
    assert "holds 3 terminal control sequences" in text  # the summary repeats the detail: counted once


def test_a_terminal_never_gets_the_sequences(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                             workspace: Path) -> None:
    """On a pseudo-terminal the answer is rendered as Markdown: only the renderer's own styling goes out."""
    pexpect = pytest.importorskip("pexpect")
    llm_env.enqueue(Reply.text(HOSTILE, chunk_size=3))
    env = {**cli_env, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    child = pexpect.spawn(sys.executable, ["-m", "swebash_ai", "-c", "summarise the page"], env=env,
                          cwd=str(workspace), encoding="utf-8", timeout=60, dimensions=(30, 100))
    try:
        child.expect(pexpect.EOF)
        out = child.before
    finally:
        child.close()
    assert child.exitstatus == 0, out
    assert "after the wipe" in out and "eight-bit" in out
    assert "removed from the answer" in out  # the note, on stderr (the same terminal)
    assert "\x1b]" not in out and not re.search(r"[\x80-\x9f\x07]", out)  # no OSC, no 8-bit control, no BEL
    assert "\x1b[2J" not in out and "\x1b[H" not in out and "\x1b[10;5H" not in out
    assert "ls -lrm -rf ~" in out  # the model's carriage return is gone (the renderer's own may remain)
    for payload in PAYLOADS:
        assert payload not in out


# --- invisible characters ---------------------------------------------------------------------------------
RLO, ZWJ = "\u202e", "\u200d"


def test_shell_mode_refuses_a_command_holding_a_bidi_override(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.text(f"```sh\ncat notes{RLO}hs.txt\n```"))  # draws as "cat notestxt.sh"
    res = run_cli("--shell", "-c", "show my notes")
    assert res.returncode == 1
    assert res.stdout == ""
    assert "refused" in res.stderr and "cat notes<U+202E>hs.txt" in res.stderr and RLO not in res.stderr


def test_an_answer_marks_invisible_characters_and_keeps_emoji(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.text(f"Run cat notes{RLO}hs.txt 👩{ZWJ}💻", chunk_size=2))
    res = run_cli("-c", "what now?")
    assert res.returncode == 0, res.stderr
    assert res.stdout == f"Run cat notes<U+202E>hs.txt 👩{ZWJ}💻\n"


def test_the_approval_question_marks_invisible_characters_in_reverse_video() -> None:
    command = f"cat notes{RLO}hs.txt"
    request = ApprovalRequest("c1", "run_command", f"$ {command}", command, "/ws", Verdict.ask("reads a file"))
    text = format_request(request)
    assert "cat notes<U+202E>hs.txt" in text and RLO not in text
    assert "holds 1 invisible or direction-changing character," in text
    assert "\x1b[7m<U+202E>\x1b[27m" in _reverse_markers(text)  # the only escape codes the question sends

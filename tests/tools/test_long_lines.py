"""Command output is read at pipe speed whatever its line length (one line of megabytes is ordinary output: a
minified bundle, a base64 blob, a JSON answer from ``curl``), and cleaned as before."""

from __future__ import annotations

import re
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from swebash_ai.tools.output import _ESCAPES, clean_output
from swebash_ai.tools.process import run_process

_OLD_OVERWRITTEN = re.compile(r"[^\n]*\r(?=[^\n\r])")


def _reference(text: str) -> str:
    """The former definition (right, but quadratic in the length of a line without a carriage return)."""
    text = _ESCAPES.sub("", text).replace("\r\n", "\n")
    return _OLD_OVERWRITTEN.sub("", text).replace("\r", "")


@given(st.text(alphabet="ab \r\n\x1b[m0;\x07\x9b", max_size=40))
def test_cleaning_is_what_it_was(text: str) -> None:
    assert clean_output(text) == _reference(text)


def test_what_a_terminal_would_show() -> None:
    assert clean_output("10%\r20%\r30%\ndone\r\n") == "30%\ndone\n"
    assert clean_output("\x1b[31mred\x1b[0m line\r") == "red line"


def test_cleaning_a_long_line_is_linear() -> None:
    """4 MB on one line: the former pattern took minutes; linear code takes well under a second, even loaded."""
    line = "x" * 4_000_000
    start = time.monotonic()
    assert clean_output(line) == line
    assert clean_output(line + "\rdone") == "done"
    assert time.monotonic() - start < 10


async def test_a_long_single_line_command_is_read_at_pipe_speed(tmp_path: Path) -> None:
    """20 MB on one line, with live output on: the whole of it read, head and tail kept, in seconds (before:
    1 MB took six, 20 MB hit the 30 s timeout)."""
    big = tmp_path / "big.txt"
    big.write_bytes(b"head" + b"x" * 20_000_000 + b"tail\n")
    shown: list[str] = []
    start = time.monotonic()
    result = await run_process(f"cat {big}", cwd=tmp_path, timeout=60, max_output=100_000, on_output=shown.append)
    elapsed = time.monotonic() - start
    assert result.exit_code == 0 and not result.timed_out
    assert result.stdout_bytes == big.stat().st_size and result.truncated
    assert result.stdout.startswith("head") and result.stdout.rstrip().endswith("tail")
    assert shown and all(len(text) <= 16_385 for text in shown)
    assert elapsed < 20, elapsed

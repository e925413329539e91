"""The loopback LLM server in a process of its own, as a real provider is (for benchmarks and the tests
that run the app in a real terminal): its Python then does not compete with the app's for the
interpreter lock."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def fake_server_process(script: list[dict[str, Any]], *, echo: bool = False) -> Iterator[str]:
    """Run ``python -m swebash_ai.testing.fake_server`` playing ``script`` (see ``Reply.from_json``;
    ``echo``: then echo the last user message); yield its base URL, stop it on exit."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
        json.dump(script, fh)
    argv = [sys.executable, "-m", "swebash_ai.testing.fake_server", "--script", fh.name]
    proc = subprocess.Popen([*argv, "--echo"] if echo else argv, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        os.unlink(fh.name)

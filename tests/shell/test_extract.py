"""Turning a model's answer into the one command line ``--shell`` prints."""

from __future__ import annotations

import pytest

from swebash_ai.frontends.shell_init import ShellInitError, detect_shell, key_sequence, snippet
from swebash_ai.frontends.shell_mode import describe_verdict, extract_command
from swebash_ai.safety.verdict import Verdict


@pytest.mark.parametrize(
    ("answer", "command"),
    [
        ("```bash\nfind . -size +1M\n```", "find . -size +1M"),
        ("```\n$ du -sh *\n```", "du -sh *"),
        ("find . -type f -size +1M", "find . -type f -size +1M"),
        ("$ ls -la", "ls -la"),
        ("Here is the command:\n\n$ du -sh *\n\nThis lists the sizes.", "du -sh *"),
        ("Here is the command:\n\n```sh\nls -S | head\n```\n\nIt sorts by size.", "ls -S | head"),
        ("You can use `ls -la` to see them.", "ls -la"),
        ("```sh\nfor f in *.txt\ndo\n  wc -l \"$f\"\ndone\n```", 'for f in *.txt; do wc -l "$f"; done'),
        ("```\ntar czf a.tgz \\\n  src\n```", "tar czf a.tgz src"),
        ("```sh\n# make the folder\nmkdir -p out\ncd out\n```", "mkdir -p out; cd out"),
        ("```python\nprint(1)\n```\n```sh\nls\n```", "ls"),
        ("```sh\necho begin\necho end\n```", "echo begin; echo end"),
        ("```sh\nls\n```\n```sh\npwd\n```", "ls"),  # the first command block
        ("To do this, run:\nls -la", "ls -la"),
        ("```console\n$ ls *.log\nbuild.log\n```", "ls *.log"),  # the transcript's output is dropped
    ],
)
def test_extract_command(answer: str, command: str) -> None:
    assert extract_command(answer) == command


@pytest.mark.parametrize("answer", ["", "   ", "I cannot help with that.", "```sh\n# nothing\n```"])
def test_no_command(answer: str) -> None:
    assert extract_command(answer) is None


def test_verdict_lines() -> None:
    assert describe_verdict(Verdict.allow()) == "would run without asking (read-only)"
    assert describe_verdict(Verdict.ask("rm deletes files")) == "would ask: rm deletes files"
    assert describe_verdict(Verdict.deny("touches ~/.ssh")) == "would refuse: touches ~/.ssh"


def test_snippets_bind_the_key_and_never_run_the_line() -> None:
    assert "bind -x '\"\\ee\": __swebash_ai_line'" in snippet("bash", environ={})
    assert "bindkey '^G' __swebash_ai_line" in snippet("zsh", "ctrl-g", environ={})
    assert "bind \\ex __swebash_ai_line" in snippet("fish", environ={"SWEBASH_AI_SHELL_KEY": "alt-x"})
    for shell in ("bash", "zsh", "fish"):
        text = snippet(shell, environ={})
        assert "swebash-ai --shell -c" in text
        assert "accept-line" not in text and "execute" not in text


def test_bad_shell_or_key_is_a_clear_error() -> None:
    assert detect_shell({"SHELL": "/usr/bin/zsh"}) == "zsh"
    with pytest.raises(ShellInitError, match="tcsh"):
        detect_shell({"SHELL": "/bin/tcsh"})
    with pytest.raises(ShellInitError, match="alt-LETTER"):
        key_sequence("bash", "F5")

"""Friction: everyday developer commands (tests/safety/data/everyday_dev_commands.txt) run without a question.

The other side of the safety tables: a policy that asks about everything is answered "yes" without reading.
At most 5% of the list may ask (``python3 bench/ask_rate.py --show`` prints the figure and each command that
asks).  The few that must ask (``xargs``, ``find -exec``, ``while read``, ``pip list``...) are pinned below, so a
change in either direction is seen.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swebash_ai.safety.commands import CommandPolicy
from swebash_ai.safety.paths import PathPolicy
from tests.safety.everyday import ask_rate, build_workspace, load_commands

COMMANDS = load_commands()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[CommandPolicy, Path]:
    base = Path(os.path.realpath(tmp_path_factory.mktemp("everyday")))
    ws = build_workspace(base)
    return CommandPolicy(PathPolicy(roots=[ws], home=base / "home")), ws


def test_the_list_is_a_few_hundred_commands_with_every_new_construct() -> None:
    # why: the figure means something only on a realistic list that exercises loops, heredocs, tar, /proc...
    assert len(COMMANDS) >= 250
    joined = "\n".join(COMMANDS)
    for construct in ("for f in", "while ", "if [", "case ", "<<'EOF'", "<<<", "$((", "tar -t", "xxd", "/proc/"):
        assert construct in joined, construct


def test_at_most_five_percent_of_everyday_commands_ask(project: tuple[CommandPolicy, Path]) -> None:
    policy, ws = project
    asked = ask_rate(policy, ws, COMMANDS)
    share = len(asked) / len(COMMANDS)
    print(f"\neveryday developer commands: {len(COMMANDS)}, not allowed: {len(asked)} ({share:.1%})")
    assert share <= 0.05, "\n".join(f"{c!r}: {why}" for c, why in asked.items())


@pytest.mark.parametrize(
    "command",
    [
        "find . -name '*.json' | xargs wc -l",  # why: xargs runs whatever its input names
        "find docs -name '*.md' -exec wc -l {} +",  # why: -exec runs a command
        "git ls-files | while read f; do wc -l \"$f\"; done",  # why: read takes data from a pipe: a file name
        "for f in $(git ls-files '*.py'); do wc -l $f; done",  # why: a computed word list
        "env | grep PATH",  # why: environment dumps can hold keys
        "pip list",  # why: not proven (pip reads workspace configuration)
    ],
)
def test_the_everyday_commands_that_must_still_ask(project: tuple[CommandPolicy, Path], command: str) -> None:
    policy, ws = project
    assert command in COMMANDS
    assert policy.assess(command, str(ws)).decision == "ask"


def test_in_auto_mode_at_most_one_percent_asks(project: tuple[CommandPolicy, Path]) -> None:
    """Friction in auto mode: what the classifier asks about runs unasked inside the sandbox; only what needs a
    person (catastrophes, persistence points) or what the policy denies is left. Aim: at most 1% asks."""
    from swebash_ai.agent.decide import Gate

    policy, ws = project
    gate = Gate(workspace=ws, mode="auto")
    asked = {}
    for command in COMMANDS:
        own = policy.assess(command, str(ws))
        if own.decision == "allow":
            continue
        step, _ = gate.settle("run_command", "exec", {"command": command}, own, lambda _c: False)
        if own.decision == "deny" or step.verdict.decision != "allow":
            asked[command] = [own.decision, *own.reasons]
    share = len(asked) / len(COMMANDS)
    print(f"\nauto mode: {len(COMMANDS)} everyday commands, {len(asked)} not run unasked ({share:.1%})")
    assert share <= 0.01, "\n".join(f"{c!r}: {why}" for c, why in asked.items())

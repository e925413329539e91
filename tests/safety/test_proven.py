"""The one predicate rules ask: is this command proven to run only programs that start no other program?

``safety/proven.py`` reads the same option table as the read-only allowlist. Checked here: what it proves
(readers, writers, loops, wrappers it follows), what it does not (each class of the issue: options that run
programs, stdin scripts, shell features that run code, fd execution, git's environment), that the classifier's
read-only answer implies it on the everyday list, and the classifier's own answers that changed with it
(git's variables are a program-running form everywhere; copying a system program into the workspace is a write
of the workspace, not of a PATH folder).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swebash_ai.safety.commands import CommandPolicy, assess
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.safety.programs import allowed_programs, runs_nothing
from swebash_ai.safety.proven import git_variables, unproven
from tests.safety.everyday import build_workspace, load_commands


@pytest.mark.parametrize("command", [
    "ls -la", "git status", "git log --oneline -5", "mkdir -p build && cp a.txt build/", "rm -f out.log",
    "touch notes.txt", "cat README.md | grep -n TODO | head", "x=1; echo $x", "echo ${HOME}", "cat $(ls)",
    "git ls-files | while read f; do wc -l \"$f\"; done", "find . -name '*.py' | xargs wc -l",
    "find docs -name '*.md' -exec wc -l {} +", "timeout 5 env LANG=C sort data.csv", "bash -c 'ls; pwd'",
    "set -euo pipefail; ls", "cd src && ls", "tar -xzf dist.tgz", "chmod -x run.sh", "less -N README.md",
    "npm ls --depth 0", "NODE_ENV=test echo ok", "/usr/bin/ls",
    # [[ ]] parses its operators before expanding: a computed value is a string to these operators
    "[[ -n $x ]] && echo y", "[[ -z ${name} ]] || ls", "[[ $x == main ]] && git status", "[[ -f $f ]] && cat $f",
    "[[ $branch =~ ^feat/ ]] && echo feature", "for f in *.md; do [[ -s $f ]] && wc -l \"$f\"; done",
])
def test_proven(command: str, tmp_path: Path) -> None:
    assert unproven(command, str(tmp_path)) == []


@pytest.mark.parametrize(("command", "why"), [
    # options and inputs that run programs
    ("gdb -batch -ex 'shell touch M'", "gdb is not in the table"),
    ("ssh -o ProxyCommand='touch M' host", "ssh is not in the table"),
    ("tar -I 'touch M' -tf a.tar", "tar -I runs a program"),
    ("tar --checkpoint=1 --checkpoint-action=exec='touch M' -cf a.tar f", "tar --checkpoint"),
    ("zip -TT 'touch M' -T a.zip f", "zip is not in the table"),
    ("split --filter='touch M' f", "split is not in the table"),
    ("vim -c '!touch M' -c q", "vim is not in the table"),
    ("ed -s f <<< '!touch M'", "ed is not in the table"),
    ("less '+!touch M' README.md", "+COMMAND"),
    ("tmux new -d 'touch M'", "tmux is not in the table"),
    ("npx --call 'touch M'", "npx runs touch as the project names it"),
    ("uv run ls", "uv runs ls as the project names it"),
    ("sort --compress-program=touch f", "sort --compress-program"),
    ("rg --pre touch x", "rg --pre"),
    ("make -n", "make runs code"),
    # scripts on standard input
    ("tclsh <<< 'exec touch M'", "tclsh is not in the table"),
    ("python3 - <<< 'import os; os.system(\"touch M\")'", "python3 runs code"),
    ("echo 'touch M' | bash", "reads the commands it runs from its input"),
    # wrappers the line cannot see through
    ("env -S '-i touch M'", ""),  # followed: env -i touch M (touch is proven: a rule names it)
    ("setpriv --dump", ""),
    # shell features that run code the parse does not follow
    ("trap 'touch M' EXIT", "trap is not in the table"),
    ("BASH_ENV=./f.sh bash -c :", "sets BASH_ENV"),
    ("ENV=./f.sh sh -i -c :", "sets ENV"),
    ("env 'BASH_FUNC_f%%=() { touch M; }' bash -c f", "sets BASH_FUNC_f%%"),
    ("BASH_CMDS[ls]=/usr/bin/touch; ls M", "sets BASH_CMDS"),
    ("export PATH=./bin:$PATH; ls", "sets PATH"),
    ("PS4='$(touch M)' bash -xc :", "sets PS4"),
    ("LESSOPEN='|touch M %s' less README.md", "sets LESSOPEN"),
    ("bash --rcfile ./f.sh -ic :", "--rcfile"),
    # subscripts and arithmetic bash evaluates
    ("echo $((a[$(touch M)]))", "arithmetic"),
    ("i='x[$(touch M)]'; echo ${a[$i]}", "bash evaluates part of it"),
    ("test -v 'a[$(touch M)]'", "test"),
    ("[[ $x -eq 0 ]]", "[[ -eq evaluates $x"),
    ("[[ -v $x ]]", "[[ -v evaluates $x"),
    ("[[ -n $y && $x -lt 2 ]]", "[[ -lt evaluates"),
    ("[ -n $x ]", "[ is given a word the shell computes"),  # [ splits $x: its value can bring -v
    ("test -n \"$x\"", "test is given a word the shell computes"),
    ("let 'x=a[$(touch M)]'", "let is not in the table"),
    ("read 'a[$(touch M)]' <<< x", "read"),
    ("declare -n r='a[$(touch M)]'; echo $r", "declare -n"),
    ("printf -v 'a[$(touch M)]' x", "printf -v"),
    ("unset 'a[$(touch M)]'", "unsets"),
    ("for ((i = $x; i < 2; i++)); do :; done", "arithmetic for loop"),
    # a program read from an open file
    ("exec 3</usr/bin/touch; /proc/self/fd/3 M", "read from an open file"),
    ("/dev/fd/3 M 3</usr/bin/touch", "read from an open file"),
    ("bash /dev/fd/3 3< f.sh", "runs the script file"),
    # git pointed elsewhere
    ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!touch M' git x", "sets GIT_CONFIG_COUNT"),
    ("GIT_DIR=elsewhere git log", "sets GIT_DIR"),
    ("env GIT_SSH_COMMAND='touch M' git fetch", "sets GIT_SSH_COMMAND"),
    ("GIT_EXTERNAL_DIFF='touch M' git diff", "sets GIT_EXTERNAL_DIFF"),
    # words the shell computes, given to a program with options that run others
    ("git log $x", "a word the shell computes"),
    ("tar -tf *.tar", "a word the shell computes"),
    ("cat f | xargs tar -tf", "xargs adds words"),
    # paths that are not the program of that name
    ("./touch M", "not proven to be the program"),
])
def test_not_proven(command: str, why: str, tmp_path: Path) -> None:
    found = unproven(command, str(tmp_path))
    if command.startswith(("env -S", "setpriv")):  # followed wrappers: what they run is judged by name
        assert found == [], found
        return
    assert found, command
    assert any(why in reason for reason in found), found


def test_the_table_is_one_table() -> None:
    """Writers are in the table (for rules) but not on the read-only list (for the classifier)."""
    assert "mkdir" not in allowed_programs() and runs_nothing("mkdir", ["-p", "x"]) == []
    assert "cat" in allowed_programs() and runs_nothing("cat", ["-n", "f"]) == []
    assert runs_nothing("tar", ["-tf", "x"]) == [] and runs_nothing("tar", ["-xf", "x"]) == []  # a write: contained
    assert runs_nothing("tar", ["--to-command=touch", "-xf", "x"])  # runs a program
    assert runs_nothing("cp", ["--unknown-option", "a", "b"])  # an option the table does not know


@pytest.fixture(scope="module")
def everyday(tmp_path_factory: pytest.TempPathFactory) -> tuple[CommandPolicy, Path]:
    base = Path(os.path.realpath(tmp_path_factory.mktemp("everyday")))
    ws = build_workspace(base)
    return CommandPolicy(PathPolicy(roots=[ws], home=base / "home")), ws


def test_what_the_classifier_proves_read_only_is_proven(everyday: tuple[CommandPolicy, Path]) -> None:
    """The read-only answer is the stronger one of the same table (loops aside: the classifier proves each
    value a loop gives, which is why the rules take its answer for the whole command)."""
    policy, ws = everyday
    allowed = [c for c in load_commands() if "for " not in c and policy.assess(c, str(ws)).decision == "allow"]
    assert len(allowed) > 200
    assert {c: unproven(c, str(ws)) for c in allowed if unproven(c, str(ws))} == {}


@pytest.mark.parametrize("command", [
    "GIT_DIR=/elsewhere git log", "env GIT_SSH_COMMAND='touch M' git fetch", "export GIT_CONFIG_COUNT=0; git status",
    "GIT_CONFIG_GLOBAL=./x npm install", "declare -x GIT_EXTERNAL_DIFF=x; make",
])
def test_git_variables_are_a_program_running_form_everywhere(command: str, tmp_path: Path) -> None:
    assert git_variables(command)
    verdict = assess(command, str(tmp_path))
    assert verdict.decision == "ask"
    assert any("points git at other configuration" in r for r in verdict.reasons), verdict.reasons


@pytest.mark.parametrize("command", ["cp /usr/bin/touch ./t", "ln -s /usr/bin/touch t", "ln -s /usr/bin/touch",
                                     "cp -p /bin/ls tools/ls"])
def test_copying_a_system_program_into_the_workspace_asks_as_a_write(command: str, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "tools").mkdir(parents=True)
    verdict = CommandPolicy(PathPolicy(roots=[ws], home=tmp_path / "home")).assess(command, str(ws))
    assert verdict.decision == "ask" and not verdict.severe, verdict
    assert not any("PATH" in r for r in verdict.reasons), verdict.reasons
    assert any("in the workspace" in r for r in verdict.reasons), verdict.reasons


def test_copying_into_a_path_folder_still_needs_a_person(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    policy = CommandPolicy(PathPolicy(roots=[home / "ws"], home=home))
    for command in ("cp /usr/bin/touch ~/.local/bin/ls", "ln -s /usr/bin/touch -t ~/.local/bin"):
        verdict = policy.assess(command, str(home))
        assert verdict.severe and any("PATH" in r for r in verdict.reasons), (command, verdict)


def test_a_path_the_line_can_redirect_is_not_proven(tmp_path: Path) -> None:
    """A relative path, ``..`` or a workspace symlink names the program it resolves to when the command runs,
    after the line changed the directory or the link: ``cd d && ../../usr/bin/cat`` ran a copy of touch."""
    ws = tmp_path / "ws"
    ws.mkdir()
    up = "../" * (len(ws.parts) - 1)  # from the workspace, up to / and down to the real cat
    (ws / "cat-link").symlink_to(os.path.realpath("/usr/bin/cat"))
    for command in (f"mkdir -p d1/d2/{up}x d1/usr/bin && cp /usr/bin/touch d1/usr/bin/cat && "
                    f"cd d1/{'d/' * (len(ws.parts) - 1)} && {up}usr/bin/cat M",
                    f"cd d1 && {up}usr/bin/cat M", f"ln -sfn /usr/bin/touch cat-link && {ws}/cat-link M",
                    f"{ws}/../ws/cat-link M"):
        assert any("by path" in why for why in unproven(command, str(ws))), command
    assert unproven("/usr/bin/cat M", str(ws)) == []


def test_git_in_a_nested_repository_is_judged_by_that_repository_config(tmp_path: Path) -> None:
    """``git -C sub diff`` and ``cd sub && git diff`` read sub's own config, whose diff.external runs a program:
    only the workspace's config was checked, so with a deny rule for touch they were proven."""
    ws = tmp_path / "ws"
    sub = ws / "sub" / ".git"
    sub.mkdir(parents=True)
    (sub / "HEAD").write_text("ref: refs/heads/main\n")
    (sub / "config").write_text("[diff]\n\texternal = touch M\n")
    assert unproven("git diff", str(ws)) == []
    for command in ("git -C sub diff", "cd sub && git diff", "bash -c 'cd sub; git diff'",
                    "cd / && cd " + str(ws / "sub") + " && git status"):
        assert any("diff.external" in why for why in unproven(command, str(ws))), command
    assert unproven("cd - && git diff", str(ws)) != []
    assert unproven("cd a; " * 10 + "git diff", str(ws)) != []

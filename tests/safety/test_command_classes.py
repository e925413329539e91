"""Command policy, round 2: each class of bypass with many variants, and the friction of everyday commands.

Variants are generated from a few seeds crossed with the ways a shell lets one write the same thing (quoting,
escaping, negation, chaining, subshells, functions, shell wrappers), so a fix that matches one spelling fails
here.  Every generated command must *not* run without asking.  The last part measures the other side: a
corpus of everyday read-only commands must run without a question (at most a few percent may ask).

Layout: a temporary HOME with the workspace inside; the real home is never used.
"""

from __future__ import annotations

import itertools
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from swebash_ai.safety.commands import CommandPolicy
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.safety.programs import allowed_programs


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> tuple[CommandPolicy, str]:
    base = Path(os.path.realpath(tmp_path_factory.mktemp("classes")))
    home, ws = base / "home", base / "home" / "proj"
    (ws / "src").mkdir(parents=True)
    (ws / "README.md").write_text("# readme\nline two\n")
    (ws / "src" / "a.py").write_text("x = 1\n")
    (ws / "data.json").write_text('{"a": 1}\n')
    (ws / "notes.txt").write_text("b\na\n")
    (ws / "other.txt").write_text("a\nc\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(ws)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    subprocess.run([*git, "tag", "v1"], check=True)
    return CommandPolicy(PathPolicy(roots=[ws], home=home)), str(ws)


def _decision(policy: tuple[CommandPolicy, str], command: str) -> str:
    p, ws = policy
    return p.assess(command, ws).decision


# -- variants -----------------------------------------------------------------------------------------

PAYLOADS = ["$(touch /tmp/pwn)", "`touch /tmp/pwn`", "$(rm -rf ~/t)", "`id`"]


def _subscripts(name: str = "a") -> list[str]:
    """A subscripted variable name holding a payload, in every quoting bash accepts."""
    out = []
    for p in PAYLOADS:
        word = f"{name}[{p}]"
        out += [shlex.quote(word), '"' + word.replace("`", "\\`").replace("$", "\\$") + '"', "'" + word + "'"]
    return out


def _wrap(command: str) -> list[str]:
    """The same command negated, chained, in a subshell, a group, a function, a bash -c wrapper."""
    return [
        command,
        f"! {command}",
        f"ls && {command}",
        f"true; {command}",
        f"{command} || true",
        f"({command})",
        f"{{ {command}; }}",
        f"f() {{ {command}; }}; f",
        f"bash -c {shlex.quote(command)}",
        f"bash -lc {shlex.quote(command)}",
        f"sh -c {shlex.quote(command)}",
        f"timeout 5 bash -c {shlex.quote(command)}",
    ]


def _evaluation_class() -> list[str]:
    seeds: list[str] = []
    for w in _subscripts() + _subscripts("BASH_ALIASES"):
        seeds += [
            f"test -v {w}",
            f"[ -v {w} ]",
            f"[[ -v {w} ]]",
            f"[[ 1 -eq {w} ]]",
            f"[[ {w} -lt 3 ]]",
            f"test -R {w}",
            f"printf -v {w} x",
            f"read {w} < /dev/null",
            f"unset {w}",
            f"let {w}=1",
            f"declare -i x={w}",
            f"(( {w} ))",
            f"echo $(( {w} ))",
        ]
    seeds += ["[[ 1 -eq HOME ]]", "[[ x -gt y ]]", "test -v 'a[i]'", "echo ${a[$(id)]}", "echo ${x:$(id):1}"]
    return [v for s in seeds[:: max(1, len(seeds) // 60)] for v in _wrap(s)]


EVALUATION = _evaluation_class()


@pytest.mark.parametrize("command", EVALUATION)
def test_bash_evaluated_operands_never_run_unasked(policy: tuple[CommandPolicy, str], command: str) -> None:
    assert _decision(policy, command) != "allow", command


PROGRAM_OPTIONS = [
    # jq: the environment, module loading, file names
    *[f"jq -n {shlex.quote(f)}" for f in ("$ENV", "$ ENV", "$  ENV.HOME", "$\tENV", "$ # c\nENV", "env",
                                          "env.HOME", '"\\(env.HOME)"', "input_filename", 'import "x" as y; .',
                                          "$__prog_args", "[$ENV[]]")],
    "jq --rawfile k ../../.ssh/id_rsa -n '$k'",  # why: reads a secret through an option
    "jq -L /tmp -n 'include \"x\"; .'",
    "jq --unknown-option . data.json",
    # awk: commands, pipes, getline, the environment, output files
    *[f"awk {shlex.quote(p)} README.md" for p in ('BEGIN{system("id")}', '{print | "sh"}', '{"id" | getline x}',
                                                   "BEGIN{getline l < \"/etc/passwd\"; print l}",
                                                   "BEGIN{print ENVIRON[\"HOME\"]}", '{print > "out.txt"}',
                                                   '{printf "%s", $0 >> "out.txt"}',
                                                   'BEGIN{ARGV[1]="/etc/shadow"; ARGC=2}{print}',
                                                   '@load "filefuncs"', 'BEGIN { system ("id") }',
                                                   '/"/ {print > "out"}', 'print /"/ > "out"',
                                                   '/x/ {print "a;" > "x"}', '{print "a;" > "x"}',
                                                   '{print $1,\n$2 > "x"}', '{print \\\n > "x"}',
                                                   '{x++ / 2; print > "f"}', '{print $1 |& "sh"}')],
    "awk -f prog.awk README.md", "awk -i inplace '{print}' README.md", "awk -l filefuncs 1 README.md",
    "gawk -o '{print}' README.md", "mawk -W exec prog README.md",
    # sed: write, execute, read, edit
    *[f"sed -n {shlex.quote(s)} README.md" for s in ("1e id", "w /tmp/out", "1W /tmp/out", "r /etc/passwd",
                                                      "1R /etc/passwd", "s/a/b/e", "s/a/b/w /tmp/o", "p;e id")],
    "sed -i 's/a/b/' README.md", "sed -ni p README.md", "sed --in-place=.bak -n p README.md", "sed -f s.sed x",
    # find: actions that run or write
    *[f"find . {a}" for a in ("-exec id ;", "-execdir id {} +", "-ok rm {} ;", "-okdir rm {} ;", "-delete",
                              "-fprint /tmp/x", "-fprint0 /tmp/x", "-fprintf /tmp/x %p", "-fls /tmp/x",
                              "-name x -o -delete", "-newerXY x", "-files0-from list")],
    # output options of sort, uniq, tee, split; base64 -o; tree -o; file -C
    "sort -o out.txt notes.txt", "sort --output=out.txt notes.txt", "sort --outp=out.txt notes.txt",
    "sort -uo out.txt notes.txt", "sort -T /tmp notes.txt", "sort --compress-program=sh notes.txt",
    "uniq notes.txt out.txt", "tee out.txt", "split -l 1 notes.txt", "base64 -o out README.md",
    "tree -o out.txt", "file -C -m x", "date -s 2020-01-01", "date 010101012020", "hostname evil",
    "tail -f README.md", "tail --follow=name README.md", "tail -fn 5 README.md", "tail -5f README.md",
    "tail +1f README.md", "tail --foll README.md",
    "diff -l README.md notes.txt", "rg --pre sh x .", "rg -z x .",
    # wrappers, pagers, environment dumps
    "env", "printenv", "env cat README.md", "xargs cat", "xargs -I{} sh -c {}", "less README.md",
    "more README.md", "man ls", "timeout 5 rm -rf src", "nice rm -rf src", "stdbuf -oL rm x",
    "timeout --unknown 5 ls", "bash script.sh", "bash -i -c ls", "bash -c 'ls' extra", "sh", "zsh -c 'rm x'",
    # git: configuration, output files, external programs, writes disguised as listings
    "git -c core.pager=sh log", "git -ccore.pager=sh log", "git --config-env=core.pager=X log",
    "git --exec-path=/tmp status", "git --git-dir=/tmp/x status", "git -p log", "git log --output=/tmp/x",
    "git log --ext-diff", "git diff --textconv", "git show --textconv HEAD", "git log --show-signature",
    "git diff --no-index /etc/passwd README.md", "git grep -O x", "git grep --open-files-in-pager=sh x",
    "git cat-file --textconv HEAD:README.md", "git blame --contents /etc/passwd README.md",
    "git branch --sort=refname NAME", "git branch --format=%(refname) NAME", "git branch -v NAME",
    "git tag --sort=refname v9", "git tag --format=x v9", "git tag -n v9", "git branch NAME",
    "git branch -d main", "git branch -m new", "git branch --set-upstream-to=x", "git tag -d v1",
    "git config user.name x", "git config --unset user.name", "git config --add a.b c", "git reflog expire",
    "git reflog delete HEAD@{0}", "git stash", "git stash pop", "git remote add x y", "git remote show origin",
    "git worktree add ../x", "git log --unknown-option", "git status --unknown", "git -C /tmp status",
    "git commit -m x", "git push", "git checkout .", "git reset --hard", "git config user.name x",
    "git log -L1,2:../../.ssh/id_rsa", "git log --format=%G?", "git log --pretty=format:%GG",
    "git for-each-ref --format=%(signature)", "sed -n 's/x/y/w out' README.md", "sed -n 's/x/y/e' README.md",
    # cd: the next commands run there; a folder outside the workspace asks like any path
    "cd /tmp && ls", "cd .. && cat README.md", "cd ~ && ls", "cd && ls", "cd - && ls", "cd src && cat ../../x",
    "python3 -c 'print(1)'", "python3 script.py", "free -s 1", "go version", "cargo --version", "docker --version",
    "hexdump -f ../../.ssh/id_rsa x", "node -e 1", "go run .", "python3 --version --x",
]  # fmt: skip


@pytest.mark.parametrize("command", PROGRAM_OPTIONS)
def test_program_options_that_write_execute_or_read_the_environment_ask(
    policy: tuple[CommandPolicy, str], command: str
) -> None:
    assert _decision(policy, command) != "allow", command


def test_cd_judges_what_follows_from_both_folders(policy: tuple[CommandPolicy, str]) -> None:
    # why: `cd src && cat ../.env` reads the workspace's .env; `cd x; cat y` may run in either folder
    p, ws = policy
    Path(ws, ".env").write_text("KEY=1\n")
    assert p.assess("cd src && cat ../.env", ws).decision == "deny"
    assert p.assess("cd src && cat a.py", ws).decision == "allow"
    assert p.assess("cd src; cat README.md", ws).decision == "allow"  # README.md: judged from both folders


def test_every_reason_comes_from_the_table(policy: tuple[CommandPolicy, str]) -> None:
    # why: the user reads the table's words, naming the program and the option
    p, ws = policy
    assert "sort -o writes its output to a file" in p.assess("sort -o out.txt notes.txt", ws).reasons
    assert "tail -f follows the file forever" in p.assess("tail -f README.md", ws).reasons
    assert any("unknown options ask" in r for r in p.assess("ls --frobnicate", ws).reasons)
    assert any("jq filter reads the environment" in r for r in p.assess("jq -n '$ ENV'", ws).reasons)
    assert any("creates a branch" in r for r in p.assess("git branch --sort=refname NAME", ws).reasons)


# -- friction -----------------------------------------------------------------------------------------

EVERYDAY = """
ls
ls -la
ls -lah src
ls -1 --color=never
ls -R src
ls -lt --time-style=long-iso
cat README.md
cat -n README.md src/a.py
head -n 20 README.md
head -5 README.md
head -c 100 README.md
tail -n 50 README.md
tail -20 README.md
tail -n +2 notes.txt
wc -l README.md
wc -lw src/a.py README.md
pwd
echo hello
echo -n done
printf '%s\\n' a b
grep -rn TODO src
grep -n 'def ' src/a.py
grep -i readme README.md
grep -c x src/a.py
grep -E 'a|b' notes.txt
grep -rl x src
grep -rn --include='*.py' x src
grep -v '^#' README.md
grep -A 2 -B 2 two README.md
sort notes.txt
sort -u notes.txt
sort -rn notes.txt
sort -k 2 -t , notes.txt
uniq -c notes.txt
cut -d , -f 1 notes.txt
tr a-z A-Z
diff README.md notes.txt
diff -u notes.txt other.txt
file README.md
stat README.md
du -sh src
du -h --max-depth=1
df -h
which python3
type ls
basename src/a.py
dirname src/a.py
realpath README.md
readlink -f README.md
date
date +%Y-%m-%d
date -u
uname -a
whoami
id
hostname
tree -L 2
test -f README.md
test -d src
[ -f README.md ]
[ -e notes.txt ] && cat notes.txt
[[ -f README.md ]]
[[ -n x ]]
test -v HOME
[[ 3 -gt 2 ]]
seq 1 10
nproc
sha256sum README.md
md5sum README.md
tac notes.txt
nl README.md
paste notes.txt other.txt
comm notes.txt other.txt
join notes.txt other.txt
fold -w 40 README.md
fmt -w 60 README.md
rev notes.txt
column -t notes.txt
od -c README.md
base64 README.md
cmp README.md notes.txt
expand README.md
find . -name '*.py'
find src -type f
find . -maxdepth 2 -type d
find . -name '*.md' -newer src/a.py
find . -type f -size +1k
sed -n '1,5p' README.md
sed -n '/two/p' README.md
awk '{print $1}' notes.txt
awk -F , '{print $2}' notes.txt
awk 'NR==1' README.md
awk '$1 > 1 {print $1}' notes.txt
awk '{s += $1} END {print s}' notes.txt
awk 'length > 3' README.md
jq . data.json
jq -r '.a' data.json
jq -c 'keys' data.json
jq --arg k a '.[$k]' data.json
git status
git status -sb
git status --porcelain
git status -uno
git status -uall --short
git tag -n5 -l
git log
git log --oneline -n 10
git log --oneline --graph --all
git log -5 --stat
git log -p -1
git log --since=2.weeks --author=me
git log --pretty=format:'%h %s'
git diff
git diff --stat
git diff --cached
git diff HEAD~1
git diff --name-only
git show
git show HEAD --stat
git show v1
git branch
git branch -a
git branch -vv
git branch --show-current
git branch --list 'feat*'
git branch --contains HEAD
git tag
git tag -l 'v*'
git tag --list
git rev-parse HEAD
git rev-parse --abbrev-ref HEAD
git rev-parse --show-toplevel
git ls-files
git ls-files -m
git blame README.md
git blame -L 1,2 README.md
git describe --tags
git shortlog -sn
git reflog
git reflog -n 5
git config --get user.name
git config user.name
git log -L1,2:README.md
sed -n 's/x/y/p' README.md
sed -n '/a/,/b/{p}' README.md
sed -n -- p README.md
git config --list
git config user.email --get
git -C . status
git -C src log --oneline
git --no-pager log -3
git ls-tree HEAD
git cat-file -p HEAD
git rev-list --count HEAD
git show-ref
git for-each-ref --format='%(refname)'
git stash list
git remote -v
git merge-base HEAD HEAD
git grep -n x
git count-objects -v
git worktree list
bash -lc 'ls -la'
bash -c 'git status'
bash -lc 'cat README.md | head -5'
zsh -lc 'git log --oneline -3'
sh -c 'wc -l README.md'
timeout 10 grep -rn x src
ls src | wc -l
cat README.md | grep two
git log --oneline | head -5
find . -name '*.py' | sort
ls -la && git status
git diff --stat; git status
grep -rn x src 2>/dev/null
ls nonexistent 2>&1
cd src && ls
cd src && grep -n x a.py
cd src; cat a.py
python3 --version
git --version
git diff-tree --no-commit-id --name-only -r HEAD
expr 1 + 2
hexdump -C README.md
free -h
node --version
""".strip().splitlines()


def test_everyday_read_only_commands_run_without_asking(policy: tuple[CommandPolicy, str]) -> None:
    p, ws = policy
    asked = {c: p.assess(c, ws).reasons for c in EVERYDAY if p.assess(c, ws).decision != "allow"}
    share = len(asked) / len(EVERYDAY)
    assert share <= 0.02, f"{len(asked)} of {len(EVERYDAY)} everyday read-only commands ask: {asked}"


def test_the_read_only_list_covers_the_everyday_programs() -> None:
    programs = {shlex.split(c.replace("|", " "))[0] for c in EVERYDAY if not c.startswith(("[", "cd "))}
    missing = programs - allowed_programs()
    assert not missing, missing


def test_combinations_of_everyday_commands_stay_allowed(policy: tuple[CommandPolicy, str]) -> None:
    # why: compound forms of proven commands are proven too (every part is checked)
    p, ws = policy
    sample = [c for c in EVERYDAY if "|" not in c and "&&" not in c and ";" not in c][:40]
    for a, b in itertools.islice(itertools.combinations(sample, 2), 0, None, 37):
        for joined in (f"{a} && {b}", f"{a}; {b}", f"{a} || {b}"):
            assert p.assess(joined, ws).decision == "allow", joined


# -- found by running what the classifier allowed (the sandbox harness and a red-team pass) ---------------

GLOB_AND_PARSER = [
    ("cat .[^a]nv", "deny"),  # why: bash's [^x] is negation; Python's glob read it as "^ or x"
    ("cat .[!a]nv", "deny"),  # why: the POSIX spelling
    ("cat < .[^a]nv", "deny"),  # why: through an input redirect
    ("cat .[[:alpha:]]nv", "ask"),  # why: character classes cannot be checked
    ("cat .[^\\a]\\n\\v", "deny"),  # why: the parser split one word in two; bash reads .[^a]nv
    ("cat < .[^\\a]\\n\\v", "deny"),  # why: the same in a redirect target
    ("cat **/.env", "deny"),  # why: ** expanded at any depth covers zsh's and bash's readings
    ("zsh -c 'cat **/.env'", "ask"),  # why: zsh globs are not bash globs
    ("zsh -c '< README.md'", "ask"),  # why: zsh runs a pager for a redirection without a command
    ("zsh -lc 'cat README.md >/dev/null'", "ask"),  # why: only plain zsh scripts are proven
    ("zsh -lc 'git log --oneline -3'", "allow"),  # why: a plain script stays allowed
    ("bash -c '< README.md'", "allow"),  # why: bash only opens the file
    ("cd /proc/self/cwd && ls", "allow"),  # why: the alias is the working directory (crashed before)
    ("git -C /proc/self/cwd status", "allow"),  # why: the same for git -C
]


@pytest.mark.parametrize(("command", "decision"), GLOB_AND_PARSER)
def test_globs_and_words_are_read_as_the_shell_reads_them(
    policy: tuple[CommandPolicy, str], command: str, decision: str
) -> None:
    p, ws = policy
    Path(ws, ".env").write_text("KEY=1\n")
    assert p.assess(command, ws).decision == decision, p.assess(command, ws).reasons


def test_git_operands_that_are_files_outside_the_workspace_ask(policy: tuple[CommandPolicy, str]) -> None:
    # why: git diff A B with B outside the repository compares the files (an implicit --no-index)
    p, ws = policy
    outside = Path(ws).parent / "notes.txt"
    outside.write_text("x\n")
    assert p.assess("git diff README.md ../notes.txt", ws).decision == "ask"
    assert p.assess("git diff main..HEAD", ws).decision == "allow"  # a revision, not a file


def test_a_git_config_holding_credentials_is_protected(tmp_path: Path) -> None:
    # why: a CI checkout stores its token in .git/config (http.extraheader); clones can hold one in the URL
    ws = Path(os.path.realpath(tmp_path)) / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    p = CommandPolicy(PathPolicy(roots=[ws], home=tmp_path))
    for command in ("cat .git/config", "git config --list", "git remote -v", "grep -r x ."):
        assert p.assess(command, str(ws)).decision == "allow", command  # no credentials: readable
    with (ws / ".git" / "config").open("a") as fh:
        fh.write('[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3M6dG9rZW4=\n')
    assert p.assess("cat .git/config", str(ws)).decision == "deny"
    assert p.assess("cd .git && cat config", str(ws)).decision == "deny"
    for command in ("git config --list", "git remote -v", "git -C .git config --list", "grep -r x ."):
        v = p.assess(command, str(ws))
        assert v.decision == "ask", (command, v)
    assert p.assess("git status", str(ws)).decision == "allow"  # reading the repository is still fine

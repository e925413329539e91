"""git's rules: which git commands are read-only, and what a repository's own config can make git run.

Contract:
    Importing this module registers ``git`` with :func:`swebash_ai.safety.programs.register`.  A git command
    runs without asking only when its global options, its subcommand and every one of its options are in the
    tables below; list modes (``git branch``, ``git tag``, ``git config``...) are proven from the arguments
    (no name to create, or an explicit ``--list``/``--get``), never inferred from a listing option being
    present (``git branch --sort=refname NAME`` creates a branch).  ``-C DIR`` is accepted and reported as
    the work directory, so the classifier checks DIR like any path and judges that repository's config.

Why:
    git is a small world of its own: global options that change the configuration (``-c``, ``--config-env``)
    or the repository used (``--git-dir``), options that write or run programs (``--output``, ``--ext-diff``,
    ``--textconv``, ``-O`` of ``git grep``), and a per-repository config that can name programs git runs on
    "read-only" commands (:func:`git_config_dangers`).

Pure: standard library only; :func:`git_config_dangers` reads the repository's config file.
"""

from __future__ import annotations

import re
from pathlib import Path

from swebash_ai.safety.paths import config_text_holds_credentials
from swebash_ai.safety.programs import ProgramCheck, fs, long_match, register

__all__ = [
    "READ_ONLY_SUBCOMMANDS", "check_git", "git_config_credentials", "git_config_dangers", "git_danger_reasons",
]

_GLOBAL_FLAGS = fs(
    "--version --no-pager -P --no-optional-locks --literal-pathspecs --glob-pathspecs --noglob-pathspecs "
    "--icase-pathspecs --no-replace-objects --no-lazy-fetch --no-advice"
)
_GLOBAL_CHANGES = {
    "-c": "sets configuration for this run (it can make git run any program: core.pager, core.fsmonitor...)",
    "--config-env": "sets configuration from the environment (it can make git run any program)",
    "--exec-path": "changes where git finds its programs",
    "--git-dir": "uses another repository",
    "--work-tree": "uses another work tree",
    "--namespace": "uses another namespace",
    "-p": "pages the output through a pager program",
    "--paginate": "pages the output through a pager program",
    "--super-prefix": "is an internal option",
    "--list-cmds": "lists git's commands, including ones from the PATH",
    "--attr-source": "reads attributes (which choose diff and filter programs) from another tree",
}

# Options shared by the history and diff commands (log, show, diff, reflog, shortlog, whatchanged, rev-list,
# stash show). Long options listed here may carry =VALUE; _LOG_VALUES take the next word when there is no "=".
_LOG_LONG = fs(
    "--patch --no-patch --raw --stat --numstat --shortstat --dirstat --dirstat-by-file --cumulative --summary "
    "--patch-with-stat --patch-with-raw --name-only --name-status --oneline --graph --decorate --no-decorate "
    "--decorate-refs --decorate-refs-exclude --clear-decorations --abbrev-commit --no-abbrev-commit --all "
    "--branches --tags --remotes --reverse --first-parent --merges --no-merges --min-parents --max-parents "
    "--follow --full-diff --full-history --simplify-merges --simplify-by-decoration --ancestry-path --dense "
    "--sparse --topo-order --date-order --author-date-order --left-right --left-only --right-only "
    "--cherry-pick --cherry-mark --cherry --boundary --parents --children --no-walk --do-walk --walk-reflogs "
    "--source --use-mailmap --mailmap --no-mailmap --no-use-mailmap --log-size --relative-date --color "
    "--no-color --word-diff --word-diff-regex --color-words --color-moved --no-color-moved "
    "--color-moved-ws --no-color-moved-ws --ignore-space-change --ignore-all-space --ignore-blank-lines "
    "--ignore-cr-at-eol --ignore-space-at-eol --ignore-matching-lines --minimal --patience --histogram "
    "--anchored --diff-algorithm --unified --inter-hunk-context --function-context --cached --staged "
    "--no-renames --find-renames --rename-empty --no-rename-empty --find-copies --find-copies-harder "
    "--break-rewrites --irreversible-delete --full-index --binary --no-prefix --default-prefix "
    "--src-prefix --dst-prefix --ita-invisible-in-index --ita-visible-in-index --exit-code --quiet "
    "--compact-summary --stat-width --stat-name-width --stat-graph-width --stat-count --abbrev --no-abbrev "
    "--max-count --skip --since --after --until --before --since-as-filter --author --committer --grep "
    "--grep-reflog --all-match --invert-grep --regexp-ignore-case --basic-regexp --extended-regexp "
    "--fixed-strings --perl-regexp --pretty --format --date --encoding --expand-tabs --no-expand-tabs "
    "--notes --no-notes --show-notes --standard-notes --no-standard-notes --no-ext-diff --no-textconv "
    "--ignore-submodules --submodule --line-prefix --pickaxe-all --pickaxe-regex --diff-filter --text "
    "--indent-heuristic --no-indent-heuristic --remerge-diff --cc --diff-merges --no-diff-merges "
    "--combined-all-paths --show-linear-break --single-worktree --exclude --glob --not --count --objects "
    "--objects-edge --no-object-names --timestamp --header --relative --no-relative --merge --show-pulls "
    "--exclude-first-parent-only --in-commit-order --reflog --alternate-refs --bisect --stdin --no-color-words "
    "--output-indicator-new --output-indicator-old --output-indicator-context --numbered --summary --email "
    "--group --committer --ws-error-highlight --check --skip-to --rotate-to --find-object --stat-graph-width "
    "--show-origin --show-scope --name-only --null --default --relative-date --ignore-missing --tags --help "
    "--no-commit-id"
)
_LOG_VALUES = fs(
    "--max-count --skip --since --after --until --before --author --committer --grep --format --pretty "
    "--date --encoding --diff-filter --decorate-refs --decorate-refs-exclude --exclude --glob --branches "
    "--diff-algorithm --word-diff-regex --unified --inter-hunk-context --line-prefix --src-prefix --dst-prefix "
    "--abbrev --stat-width --min-parents --max-parents --skip-to --rotate-to --find-object --group"
)
_LOG_SHORT_FLAGS = frozenset("psuzbwRacmiEFPWgMCDBtrqe")  # -p -s -u ... (-M/-C/-B may carry a number)
_LOG_SHORT_VALUES = frozenset("nSGUlOL")  # -n 5, -S needle, -G regex, -U3, -l1000, -O orderfile, -L1,2:FILE
_LOG_EFFECTS = {
    "--output": "writes its output to a file",
    "--ext-diff": "runs an external diff program",
    "--textconv": "runs text-conversion programs",
    "--no-index": "compares files outside the repository",
    "--contents": "reads another file in place of the work tree's",
    "--show-signature": "runs gpg to verify signatures",
}
_LOG_FAMILY = fs("log show diff reflog shortlog whatchanged rev-list diff-tree diff-index diff-files")

# Per subcommand: long flags (=VALUE allowed), long options taking the next word, short flags, short options
# taking a value.
_Table = tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]
_TABLES: dict[str, _Table] = {
    "status": (fs("--short --branch --porcelain --long --verbose --untracked-files --ignored --ignore-submodules "
                  "--column --no-column --ahead-behind --no-ahead-behind --renames --no-renames --find-renames "
                  "--show-stash --null --help"), fs(""), frozenset("sbvuz"), frozenset()),
    "branch": (fs("--list --all --remotes --verbose --show-current --color --no-color --column --no-column "
                  "--omit-empty --ignore-case --abbrev --no-abbrev --help"),
               fs("--contains --no-contains --merged --no-merged --points-at --sort --format"),
               frozenset("arlvi"), frozenset()),
    "tag": (fs("--list --column --no-column --ignore-case --color --omit-empty --help"),
            fs("--contains --no-contains --merged --no-merged --points-at --sort --format"),
            frozenset("lin"), frozenset()),
    "rev-parse": (fs("--abbrev-ref --short --symbolic --symbolic-full-name --show-toplevel --show-prefix "
                     "--show-cdup --git-dir --git-common-dir --absolute-git-dir --is-inside-work-tree "
                     "--is-inside-git-dir --is-bare-repository --is-shallow-repository --verify --quiet --all "
                     "--branches --tags --remotes --show-superproject-working-tree --shared-index-path "
                     "--local-env-vars --sq --revs-only --no-revs --flags --no-flags --show-object-format "
                     "--show-ref-format --path-format --default --help"),
                  fs("--git-path --prefix"), frozenset("q"), frozenset()),
    "ls-files": (fs("--cached --deleted --modified --others --ignored --stage --unmerged --killed --full-name "
                    "--recurse-submodules --error-unmatch --eol --deduplicate --directory --no-empty-directory "
                    "--exclude-standard --sparse --debug --abbrev --format --help"),
                 fs("--exclude --exclude-per-directory --with-tree"), frozenset("cdmoiskuztvf"), frozenset("x")),
    "ls-tree": (fs("--long --name-only --name-status --object-only --full-name --full-tree --abbrev --format "
                   "--help"), fs(""), frozenset("drtlz"), frozenset()),
    "blame": (fs("--porcelain --line-porcelain --incremental --show-email --root --show-stats --show-name "
                 "--show-number --abbrev --date --since --reverse --first-parent --progress --no-progress "
                 "--color-lines --color-by-age --score-debug --minimal --ignore-rev --help"),
              fs("--ignore-rev"), frozenset("lbtpefnswcMC"), frozenset("L")),
    "describe": (fs("--all --tags --contains --abbrev --candidates --exact-match --debug --long --match "
                    "--exclude --always --first-parent --dirty --broken --help"), fs(""), frozenset(), frozenset()),
    "cat-file": (fs("--batch-check --allow-unknown-type --help --use-mailmap --no-use-mailmap"), fs(""),
                 frozenset("tspe"), frozenset()),
    "merge-base": (fs("--all --octopus --independent --is-ancestor --fork-point --help"), fs(""), frozenset("a"),
                   frozenset()),
    "name-rev": (fs("--name-only --tags --refs --exclude --all --always --no-undefined --help"), fs(""),
                 frozenset(), frozenset()),
    "for-each-ref": (fs("--format --sort --count --points-at --merged --no-merged --contains --no-contains "
                        "--shell --perl --python --tcl --color --ignore-case --omit-empty --exclude --help"),
                     fs("--format --sort --count --points-at"), frozenset("sp"), frozenset()),
    "show-ref": (fs("--head --heads --branches --tags --dereference --hash --abbrev --verify --quiet --exists "
                    "--help"), fs(""), frozenset("dsq"), frozenset()),
    "count-objects": (fs("--verbose --human-readable --help"), fs(""), frozenset("vH"), frozenset()),
    "check-ignore": (fs("--verbose --non-matching --quiet --help"), fs(""), frozenset("vnqz"), frozenset()),
    "version": (fs("--build-options"), fs(""), frozenset(), frozenset()),
    "grep": (fs("--cached --untracked --exclude-standard --no-exclude-standard --recurse-submodules --text "
                "--ignore-case --no-ignore-case --word-regexp --invert-match --full-name --extended-regexp "
                "--basic-regexp --perl-regexp --fixed-strings --line-number --column --name-only "
                "--files-with-matches --files-without-match --null --only-matching --count --color --no-color "
                "--break --heading --show-function --function-context --all-match --quiet --and --or --not "
                "--max-depth --threads --help"),
             fs("--max-depth --threads --max-count --context --after-context --before-context"),
             frozenset("aiIwvhHEGPFnlLzocpWq"), frozenset("efABCm")),
}  # fmt: skip
_SUB_EFFECTS: dict[str, dict[str, str]] = {
    "grep": {"-O": "opens the files in a pager program", "--open-files-in-pager": "opens the files in a pager "
             "program", "--textconv": "runs text-conversion programs", "--no-index": "searches files outside the "
             "repository", "-f": "reads patterns from a file"},
    "cat-file": {"--textconv": "runs text-conversion programs", "--filters": "runs filter programs",
                 "--batch": "reads object names from its input", "--batch-command": "reads commands from its input"},
    "blame": {"--contents": "reads another file in place of the work tree's", "-S": "reads revisions from a file",
              "--ignore-revs-file": "reads revisions from a file"},
    # describe --dirty refreshes the index and writes it back (git takes .git/index.lock even when nothing changed)
    "describe": {"--dirty": "refreshes and rewrites the index (.git/index)"},
}

READ_ONLY_SUBCOMMANDS: frozenset[str] = (
    _LOG_FAMILY | frozenset(_TABLES) | fs("config remote stash worktree")
)


def check_git(args: list[str]) -> ProgramCheck:
    """The read-only git subcommands and options; everything else is a problem (so it asks)."""
    out = ProgramCheck()
    i = 0
    while i < len(args) and args[i].startswith("-"):
        a = args[i]
        name = a.partition("=")[0]
        i += 1
        if name == "-C":
            if i >= len(args):
                out.problems.append("git -C needs a directory")
                return out
            out.workdir = args[i] if out.workdir is None else f"{out.workdir}/{args[i]}"
            i += 1
        elif name in _GIT_GLOBAL_CHANGES_KEYS or (a.startswith("-c") and not a.startswith("--")):
            key = "-c" if a.startswith("-c") and not a.startswith("--") else name
            out.problems.append(f"git {key} {_GLOBAL_CHANGES.get(key, _GLOBAL_CHANGES['-c'])}")
            return out
        elif name not in _GLOBAL_FLAGS:
            out.problems.append(f"git {a}: not a known read-only option of git (unknown options ask)")
            return out
    if i >= len(args):
        if "--version" not in args:
            out.problems.append("git without a subcommand")
        return out
    sub, rest = args[i], args[i + 1 :]
    if sub not in READ_ONLY_SUBCOMMANDS:
        out.problems.append(f"git {sub} is not on the read-only list of git subcommands")
        return out
    if sub in ("config", "remote", "stash", "worktree"):
        return _check_modal(sub, rest, out)
    if sub in _LOG_FAMILY:
        if sub == "reflog" and rest and rest[0] in ("expire", "delete", "exists", "show", "list"):
            if rest[0] in ("expire", "delete"):
                out.problems.append(f"git reflog {rest[0]} changes the reflog")
                return out
            rest = rest[1:]
        elif sub == "reflog" and rest and re.fullmatch(r"[a-z][a-z-]*", rest[0]):
            # Older git reads an unknown word as `reflog show WORD`; newer git adds subcommands that write
            # (`drop`, `write`), so a bare word is only proven read-only when written after `show`.
            out.problems.append(
                f"git reflog {rest[0]}: git may read this word as a reflog subcommand (newer versions have `drop` "
                f"and `write`); `git reflog show {rest[0]}` runs without asking"
            )
            return out
        positional = _options(sub, rest, out, _LOG_TABLE, _LOG_EFFECTS)
    else:
        positional = _options(sub, rest, out, _TABLES[sub], _SUB_EFFECTS.get(sub, {}))
    if out.problems:
        return out
    if sub in ("branch", "tag") and positional.names and not positional.listing:
        out.problems.append(
            f"git {sub} {' '.join(positional.names)} creates a {sub} (only listing runs without asking: no name, "
            "or an explicit --list)"
        )
    if sub == "grep":
        out.trees.append(".")
    return out


class _Positional:
    """The words of a git command that are not options: names, revisions, pathspecs."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.listing = False


_SIGNATURE_FORMAT = re.compile(r"%G|%\(signature")  # format placeholders that run gpg
_OPTIONAL_ATTACHED = {"status": "u", "tag": "n", "blame": "M", "describe": ""}
_LOG_TABLE: _Table = (_LOG_LONG, _LOG_VALUES, _LOG_SHORT_FLAGS, _LOG_SHORT_VALUES)
_GIT_GLOBAL_CHANGES_KEYS = frozenset(_GLOBAL_CHANGES)


def _options(sub: str, rest: list[str], out: ProgramCheck, table: _Table, effects: dict[str, str]) -> _Positional:
    long_flags, long_values, short_flags, short_values = table
    pos = _Positional()
    after_dashdash = False
    i = 0
    while i < len(rest):
        a = rest[i]
        i += 1
        if after_dashdash:
            out.paths.append((a, "read"))
            continue
        if a == "--":
            after_dashdash = True
            continue
        if not a.startswith("-") or a == "-":
            if ":" in a:  # REV:path prints that file as committed (HEAD:.env); :N:path as staged (:0:.env)
                blob = a.partition(":")[2]
                if a.startswith(":") and re.match(r"[0-3]:", blob):
                    blob = blob[2:]
                blob = blob.removeprefix("./")
                if blob:
                    out.paths.append((blob, "read"))
            else:
                out.maybe_paths.append(a)
            pos.names.append(a)
            continue
        if a.startswith("--"):
            name, eq, _ = a.partition("=")
            if _SIGNATURE_FORMAT.search(a) or (not eq and i < len(rest) and _SIGNATURE_FORMAT.search(rest[i])):
                out.problems.append(f"git {sub} {name}: signature placeholders (%G?, %GG...) run gpg to verify")
                continue
            hit = long_match(name, effects)
            if hit is not None:
                out.problems.append(f"git {sub} {name} {effects[hit]}")
                continue
            if name in ("--list", "--get", "--get-all", "--get-regexp"):
                pos.listing = True
            if name in long_values and not eq:
                # --contains/--merged/--no-merged take the next word only when there is one (git's own rule).
                if i < len(rest) and not rest[i].startswith("-"):
                    i += 1
                elif name not in ("--contains", "--no-contains", "--merged", "--no-merged"):
                    out.problems.append(f"git {sub} {name} needs a value")
                continue
            if name in long_flags or name in long_values:
                continue
            out.problems.append(f"git {sub} {name}: not a known read-only option of git {sub} (unknown options ask)")
            continue
        if a[1:].isdigit():  # -5: the last five commits
            continue
        j = 1
        while j < len(a):
            ch = a[j]
            j += 1
            if f"-{ch}" in effects:
                out.problems.append(f"git {sub} -{ch} {effects[f'-{ch}']}")
                break
            if ch in short_values:
                value = a[j:] if j < len(a) else (rest[i] if i < len(rest) else "")
                if j >= len(a):
                    i += 1
                if ch == "L" and ":" in value:  # -L 1,2:FILE and -L :func:FILE read FILE
                    out.paths.append((value.rpartition(":")[2], "read"))
                elif ch == "O":  # -O ORDERFILE: git reads that file to order the diff
                    out.paths.append((value, "read"))
                break
            if ch in _OPTIONAL_ATTACHED.get(sub, ""):  # -uno, -n5: a value only when attached
                break
            if ch in short_flags:
                if ch == "l" and sub in ("branch", "tag"):
                    pos.listing = True
                if ch in "MCBn" and a[j:].rstrip("%").isdigit():  # -M50%, -n5
                    break
                continue
            out.problems.append(f"git {sub} -{ch}: not a known read-only option of git {sub} (unknown options ask)")
            break
    return pos


_CONFIG_READS = fs("--get --get-all --get-regexp --get-urlmatch --get-color --get-colorbool --list -l")
_CONFIG_FLAGS = fs(
    "--global --system --local --worktree --show-origin --show-scope --null -z --name-only --bool --int "
    "--bool-or-int --path --expiry-date --includes --no-includes --help"
)
_CONFIG_VALUES = fs("--type --default --blob --file -f")


def _check_modal(sub: str, rest: list[str], out: ProgramCheck) -> ProgramCheck:
    """Subcommands whose first word or mode decides whether they only read."""
    out.reveals_config = sub in ("config", "remote")
    if sub == "config":
        mode = rest[0] if rest and rest[0] in ("get", "list") else None  # git 2.46's `git config get NAME`
        names = [a for a in rest if not a.startswith("-")]
        reads = (
            mode in ("get", "list")
            or (mode is None and any(a.partition("=")[0] in _CONFIG_READS for a in rest))
            or (len(names) == 1 and len(rest) == 1)  # `git config user.name` prints it; with a value it sets it
        )
        if not reads:
            out.problems.append("git config without --get/--list (or get/list) changes the configuration")
            return out
        args = rest[1:] if mode else rest
        i = 0
        while i < len(args):
            a = args[i]
            name = a.partition("=")[0]
            i += 1
            if name in _CONFIG_VALUES:
                value = a.partition("=")[2] if "=" in a else (args[i] if i < len(args) else "")
                i += 0 if "=" in a else 1
                if name in ("--file", "-f"):
                    out.paths.append((value, "read"))
                elif name == "--blob" and ":" in value:  # --blob HEAD:.env reads that file as committed
                    out.paths.append((value.partition(":")[2], "read"))
            elif a.startswith("-") and name not in _CONFIG_READS and name not in _CONFIG_FLAGS:
                out.problems.append(f"git config {a}: not a known read-only option of git config (unknown options ask)")
        return out
    if sub == "remote":
        if (rest and rest[0] == "get-url") or all(a in ("-v", "--verbose") for a in rest):
            return out
        out.problems.append("git remote with a subcommand other than get-url changes remotes or contacts them")
        return out
    if sub == "worktree":
        if rest[:1] == ["list"] and all(a in ("--porcelain", "-v", "--verbose", "-z") for a in rest[1:]):
            return out
        out.problems.append("git worktree other than `list` changes work trees")
        return out
    # stash: list and show read; everything else changes the stash or the work tree
    if rest[:1] in (["list"], ["show"]):
        _options(f"stash {rest[0]}", rest[1:], out, _LOG_TABLE, _LOG_EFFECTS)
        return out
    out.problems.append("git stash other than `list` and `show` changes the stash or the work tree")
    return out


_GIT_CONFIG_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]')
_GIT_CONFIG_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=|$)")


def git_config_dangers(cwd: str) -> list[str]:
    """Settings in the repository's own config that make read-only git commands run programs.

    A cloned repository cannot ship ``.git/config``, but anything that wrote into it can (and a tarball or a
    checked-in *bare* repository ships one: git uses a directory holding ``HEAD``, ``objects`` and ``refs`` as a
    repository, so ``git -C vendor/x.git diff`` reads ``vendor/x.git/config``).  An external diff or textconv
    driver runs on ``git diff/show/log -p``, a clean filter on ``git diff`` and ``git status``, ``gpg.program``
    on ``git log --show-signature`` (or ``log.showSignature``), ``core.alternateRefsCommand`` on ``git log
    --alternate-refs``; ``core.worktree`` points git at files elsewhere, and ``include`` pulls in config we do
    not follow.  The user's own global config is trusted; the repository's is not. (The exec environment
    separately forces ``core.fsmonitor``, ``core.pager`` and ``core.hooksPath``.)
    """
    found = _git_dir(Path(cwd))
    if found is None:
        return []
    gitdir, common = found
    reasons: list[str] = []
    if gitdir.name == ".git" and gitdir.is_dir() and (gitdir / "commondir").is_file():
        # only a linked worktree's git folder has one; in a repository's own .git it points git elsewhere
        reasons.append(f"this repository's {gitdir / 'commondir'} points git at the config and hooks of {common}")
    # Submodules are git repositories of their own that `git status` and `git diff` enter; config.worktree is
    # read on top of config when extensions.worktreeConfig is set.
    configs = [common / "config", *dict.fromkeys([gitdir / "config.worktree", common / "config.worktree"]),
               *sorted(common.glob("modules/**/config"))[:50]]
    for path in configs:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            continue
        except OSError:
            reasons.append(f"cannot read the repository's git config {path}")
            continue
        names = ", ".join(dict.fromkeys(_config_programs(text)))
        if names:
            reasons.append(f"this repository's git config ({path}) can make git run programs or read files "
                           f"elsewhere ({names})")
    return reasons


def git_config_credentials(cwd: str, home: Path | None = None) -> list[str]:
    """Why printing git's configuration here would show credentials (empty when none holds any).

    Every file git reads counts: the repository's ``config`` and ``config.worktree``, and the user's
    ``~/.gitconfig`` and ``~/.config/git/config``, where a token often sits in a ``url.<base>.insteadOf`` rule
    (``git remote -v`` prints remote URLs after that rewriting).
    """
    files: list[Path] = []
    found = _git_dir(Path(cwd))
    if found is not None:
        gitdir, common = found
        files += dict.fromkeys([common / "config", gitdir / "config.worktree", common / "config.worktree"])
    if home is not None:
        files += [home / ".gitconfig", home / ".config" / "git" / "config"]
    return [f"git's config file {config} holds credentials (a token in a URL or an http.extraheader): printing "
            "it would send them to the model" for config in files if config_text_holds_credentials(config)]


# section (first part) -> keys that make a reading git command run a program or read elsewhere
_CONFIG_DANGERS: dict[str, frozenset[str]] = {
    "diff": fs("external textconv command"),
    "filter": fs("clean smudge process"),
    "gpg": fs("program"),
    "log": fs("showsignature"),  # runs gpg on every git log
    "core": fs("alternaterefscommand worktree"),  # git log --alternate-refs runs it; another work tree
    "blame": fs("ignorerevsfile"),  # a file git blame reads, and prints a bad line of
}


def _config_programs(text: str) -> list[str]:
    found: list[str] = []
    section = ""
    for line in text.splitlines():
        head = _GIT_CONFIG_SECTION.match(line)
        if head:
            section = head.group(1).lower()
            line = line[head.end() :]
        key_match = _GIT_CONFIG_KEY.match(line)
        if not key_match:
            continue
        key = key_match.group(1).lower()
        top = section.split(".")[0]
        if top in ("include", "includeif"):
            found.append(top)
        elif top == "alias" and key in READ_ONLY_SUBCOMMANDS:
            # git ignores an alias named like a builtin, but a builtin that a newer git drops (whatchanged is
            # on its way out) would then run the alias, which may be `!sh ...`
            found.append(f"alias.{key}")
        elif key in _CONFIG_DANGERS.get(top, ()):
            found.append(f"{top}.{key}")
    return found


def _is_git_directory(folder: Path) -> bool:
    """git's own test for a repository directory (a bare one, or a .git): HEAD, objects/ and refs/."""
    return (folder / "HEAD").is_file() and (folder / "objects").is_dir() and (folder / "refs").is_dir()


def _git_dir(start: Path) -> tuple[Path, Path] | None:
    """The git directory git would use from ``start`` and its common directory (they differ in worktrees).

    Found the way git searches: at each folder from ``start`` up, a ``.git`` directory or ``gitdir:`` file
    first, then the folder itself if it is a git directory (a bare repository). A ``commondir`` file is
    followed wherever it is, as git follows it: in a plain ``.git`` folder too, where a command could have
    written one to point git at a config of its own (its ``diff.external``, its hooks).
    """
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return _with_common(dot_git)
        if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            try:
                target = dot_git.read_text(encoding="utf-8").strip().removeprefix("gitdir:").strip()
            except OSError:
                return None
            return _with_common((folder / target).resolve())
        if _is_git_directory(folder):
            return _with_common(folder)
    return None


def _with_common(gitdir: Path) -> tuple[Path, Path] | None:
    common = gitdir / "commondir"
    if not common.is_file():
        return gitdir, gitdir
    try:
        return gitdir, (gitdir / common.read_text(encoding="utf-8").strip()).resolve()
    except OSError:
        return None


GIT_DANGERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("push", ("--force", "-f", "--force-with-lease", "--mirror", "--delete"), "rewrites remote history"),
    ("push", (), "publishes commits to a remote"),
    ("reset", ("--hard", "--merge", "--keep"), "discards uncommitted changes"),
    ("clean", (), "deletes untracked files"),
    ("rebase", (), "rewrites history"),
    ("checkout", ("--", ".", "-f", "--force"), "discards uncommitted changes"),
    ("restore", (), "discards uncommitted changes"),
    ("branch", ("-D", "-d", "--delete", "-M", "-m"), "deletes or renames branches"),
    ("stash", ("drop", "clear"), "deletes stashed changes"),
    ("commit", (), "creates commits"),
    ("filter-branch", (), "rewrites history"),
)  # fmt: skip


def git_danger_reasons(args: list[str]) -> list[str]:
    """Why a git command that is not read-only needs asking (``git push --force`` rewrites remote history)."""
    reasons: list[str] = []
    sub = next((a for a in args if not a.startswith("-")), "")
    if any(a == "-c" or a.startswith("--config-env") for a in args):
        reasons.append("git -c can make git run arbitrary programs (core.pager, core.fsmonitor ...)")
    for gsub, flags, what in GIT_DANGERS:
        if sub == gsub and (not flags or any(f in args for f in flags)):
            reasons.append(f"git {sub} {what}")
            break
    return reasons


register("git", check_git)

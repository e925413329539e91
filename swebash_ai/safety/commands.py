"""Command policy: may the assistant run this shell command without asking?

Contract:
    ``CommandPolicy(path_policy).assess(command, cwd)`` and the module-level :func:`assess` return a
    :class:`~swebash_ai.safety.verdict.Verdict` and never raise.

    * ``allow`` only when the command parses as plain bash, uses no shell feature outside a small
      checked set (words, quotes, ``&&``/``||``/``;``/``|``/newlines, ``2>&1``, ``>/dev/null``), and
      *every* simple command in it is a bare program name on the read-only allowlist used with flags
      its rule accepts, and every path argument is inside the workspace.
    * ``deny`` for empty commands, commands over ``max_length``, NUL bytes, and commands whose path
      arguments hit an always-protected path (``cat ~/.ssh/id_rsa``, ``cp .env /tmp``).
    * ``ask`` for commands holding an invisible or direction-changing Unicode character (``U+202E``, a
      zero-width space, a Hangul filler, a variation selector): nobody types them, and they make a command read
      unlike what runs.
    * ``ask`` for everything else, with reasons that name the danger ("rm deletes files", "deletes 2
      paths, 1 outside the workspace: /home/u", "uses command substitution $(...)").

    ``session_key(command)`` is the exact key for "allow this for the session": the JSON list of argv
    words of one plain simple command, or ``None`` when the command is compound or not fully literal.

Why:
    Dangerous commands cannot be enumerated (``cmd=rm; $cmd -rf x``, ``printf '\\x72\\x6d' | sh``), so
    the policy gates on what is *proven* safe, and uses danger detection only to explain the question.
    It parses with tree-sitter-bash instead of splitting strings: ``shlex`` sees ``ls\\nrm -rf /`` as
    ``ls``.  Read-only commands are not harmless when their output goes to a model provider, hence
    the path checks on their arguments.

Pure: standard library, tree_sitter and tree_sitter_bash; judges, never runs anything.
"""

from __future__ import annotations

import contextlib
import glob as _glob
import json
import os
import re
from pathlib import Path

from swebash_ai.safety import binary_rules, command_rules, git_rules, loops, text_rules, writer_rules
from swebash_ai.safety.dangers import describe_dangers, pipe_dangers
from swebash_ai.safety.paths import PathPolicy, git_config_holds_credentials
from swebash_ai.safety.programs import ProgramCheck, allowed_programs, check_allowed
from swebash_ai.safety.shell_parse import CONTROL_RE, ParsedCommand, SimpleCommand, Word, parse
from swebash_ai.safety.terminal_text import has_invisible, invisible_markers
from swebash_ai.safety.verdict import Verdict

# importing them fills the table (read-only programs, and those that only start no other program)
_RULE_MODULES = (binary_rules, command_rules, git_rules, text_rules, writer_rules)
# Characters that zsh reads differently from bash: glob qualifiers and flags, numeric globs, `=cmd`, `~` forms,
# redirections without a command (zsh runs $READNULLCMD, a pager, for `< file`).
_ZSH_SPECIAL = re.compile(r"[*?\[\]<>^#(){}]|(?:^|\s)[=~]")

__all__ = ["CommandPolicy", "ParsedCommand", "SimpleCommand", "Word", "assess", "parse"]

MAX_GLOB_MATCHES = 500
MAX_TREE_ENTRIES = 20_000

class CommandPolicy:
    """Judges shell commands; path arguments are judged by ``path_policy`` (default: rooted at cwd)."""

    def __init__(self, path_policy: PathPolicy | None = None, max_length: int = 10_000) -> None:
        self.paths = path_policy or PathPolicy()
        self.max_length = max_length

    # public ---------------------------------------------------------------------------------------

    def assess(self, command: str, cwd: str | None = None) -> Verdict:
        """Allow, ask or deny ``command`` run in ``cwd`` (default: the first workspace root)."""
        try:
            where = cwd or str(self.paths.roots[0])
            verdict = self._assess(command, where, 0)
            if verdict.decision == "ask" and not verdict.severe:
                point = self._persistence(command, where)
                if point:  # floor: a person answers, whatever a rule, mode, hook or --yes says
                    return Verdict("ask", [point, *verdict.reasons], verdict.rule, severe=True)
            return verdict
        except Exception as e:  # a policy never raises: an unexpected failure asks
            return Verdict.ask(f"could not check this command ({type(e).__name__}: {e})", rule="command.error")

    def _persistence(self, command: str, cwd: str) -> str | None:
        """A command not proven read-only that names a persistence point, or is a program that installs one."""
        from swebash_ai.safety.persistence import persistence_program, persistence_words, written_words
        from swebash_ai.safety.runs import programs_run

        runs = programs_run(command)
        targets = [t for text in runs.scripts for w, op in getattr(parse(text), "file_targets", [])
                   if op == "write" for t in (w.text, w.raw.strip("\"'"))]
        home, workspace = str(self.paths.home), str(self.paths.roots[0])
        home_words = ("${HOME}", "$HOME")
        for run in runs.runs:
            name = os.path.basename(run.argv[0])
            if any(h in w for w in run.argv for h in home_words):  # `>> $HOME/.bashrc` names one too
                run = type(run)(tuple(_with_home(w, home) for w in run.argv), run.via)
            check = check_allowed(name, list(run.argv[1:])) if name == run.argv[0] else None
            if check is not None and not check.problems:
                continue  # proven to only read its operands (``cat ~/.bashrc``)
            written = written_words(run.argv)  # cp /usr/bin/x ./x reads a PATH folder, writes ./x
            words = run.argv[1:] if written is None else written
            reason = persistence_program(run.argv) or persistence_words(words, cwd, home, workspace)
            if reason:
                return reason
        return persistence_words([_with_home(t, home) for t in targets], cwd, home, workspace)

    def session_key(self, command: str) -> str | None:
        """JSON argv of one plain literal simple command, else ``None`` (never covers a compound)."""
        if not command.strip() or len(command) > self.max_length or CONTROL_RE.search(command):
            return None
        if has_invisible(command):
            return None
        parsed = parse(command)
        if parsed is None or not parsed.plain or parsed.problems or len(parsed.commands) != 1:
            return None
        cmd = parsed.commands[0]
        if any(not w.literal or w.glob or w.tilde or w.arith or w.refs for w in cmd.words):
            return None
        return json.dumps(cmd.argv)

    # internals ------------------------------------------------------------------------------------

    def _assess(self, command: str, cwd: str, depth: int) -> Verdict:
        if not command.strip():
            return Verdict.deny("empty command", rule="command.empty")
        if len(command) > self.max_length:
            return Verdict.deny(
                f"command is too long ({len(command)} characters, limit {self.max_length})",
                rule="command.too_long",
            )
        if "\x00" in command:
            return Verdict.deny("command contains a NUL byte", rule="command.nul")
        if CONTROL_RE.search(command):
            return Verdict.ask(
                "contains control characters (such as a carriage return) that bash and this check may read differently",
                rule="command.syntax",
            )
        if has_invisible(command):  # nobody types these; they make a command read unlike what runs
            return Verdict.ask(
                f"contains invisible or direction-changing Unicode characters ({_markers(command)}) that make it "
                "read differently from what runs",
                rule="command.syntax",
            )
        parsed = parse(command)
        if parsed is None:
            return Verdict.ask(
                "could not be parsed as bash (syntax error): cannot check what it runs",
                rule="command.parse_error",
            )
        dangers: list[Verdict] = []
        others: list[Verdict] = []
        cwds = [cwd]  # where the next command may run: `cd DIR && ...` adds DIR, keeps the start (cd may fail)
        for binding in parsed.bindings:  # a loop over a glob lists the folder: `for f in ~/.ssh/*; do echo $f`
            others += [self._glob(w.text, "exists", c, "for") for w in binding.words if w.glob for c in cwds]
        for cmd in parsed.commands:
            if cmd.argv[0] == "cd" and cmd.words[0].literal and not cmd.nested and not cmd.in_loop:
                v, moved = self._cd(cmd, cwds)
                others.append(v)
                cwds += [m for m in moved if m not in cwds]
                continue
            v = Verdict.strictest([self._judge_looped(cmd, parsed, c, depth) for c in cwds])
            (dangers if v.rule == "command.dangerous" else others).append(v)
        for idx in parsed.pipelines:
            reasons = pipe_dangers([parsed.commands[i].argv for i in idx])
            if reasons:
                dangers.append(Verdict.ask(*reasons, rule="command.dangerous"))
        for word, op in parsed.file_targets:
            if word.literal:
                for c in cwds:
                    pv = self._path(word.text, "write" if op == "write" else "read", c, word, "redirect")
                    if pv.decision == "deny" or (op == "read" and pv.decision != "allow"):
                        others.append(pv)
        syntax = [Verdict.ask(p, rule="command.syntax") for p in parsed.problems]
        if depth == 0 and "GIT_" in command:
            from swebash_ai.safety.proven import git_variables

            dangers += [Verdict.ask(f"sets {name}, which points git at other configuration, repositories or programs "
                                    "(and replaces the guard on a repository's own program-running settings)",
                                    rule="command.dangerous") for name in git_variables(command)]
        for cmd in parsed.commands:
            if cmd.argv[0] in ("pushd", "popd") or (cmd.argv[0] == "cd" and (cmd.nested or cmd.in_loop)):
                syntax.append(
                    Verdict.ask(
                        f"changes directory ({' '.join(w.raw for w in cmd.words)}): the paths named after it are not "
                        "where they seem, so they were judged from the starting directory",
                        rule="command.syntax",
                    )
                )
        result = Verdict.strictest(dangers + syntax + others)
        if result.decision == "allow":
            return Verdict.allow(rule="command.readonly")
        return result

    def _cd(self, cmd: SimpleCommand, cwds: list[str]) -> tuple[Verdict, list[str]]:
        """``cd DIR``: DIR must be a literal folder the assistant may list; later commands are judged there too."""
        words = [w for w in cmd.words[1:] if w.text not in ("-P", "-L", "--")]
        if len(words) != 1 or not words[0].literal or words[0].text == "-" or words[0].glob:
            shown = " ".join(w.raw for w in cmd.words)
            return Verdict.ask(f"{shown}: only `cd DIR` with one literal folder is checked", rule="command.syntax"), []
        verdicts, moved = [], []
        for c in cwds:
            verdicts.append(self._path(words[0].text, "list", c, words[0], "cd"))
            with contextlib.suppress(ValueError):  # what follows is judged there, allowed or not, to name dangers
                moved.append(str(self.paths.resolve(words[0].text, c)))
        return Verdict.strictest(verdicts), moved

    def _judge_looped(self, cmd: SimpleCommand, parsed: ParsedCommand, cwd: str, depth: int) -> Verdict:
        """A command in a ``for`` body is judged once per value of its loop variables (:mod:`.loops`)."""
        found, why = loops.instances(cmd, parsed.bindings, lambda pattern: self._expand(pattern, cwd))
        if why is not None:
            return Verdict.ask(why, rule="command.syntax")
        return Verdict.strictest([self._judge_simple(i.command, cwd, depth, i.produced) for i in found])

    def _judge_simple(
        self, cmd: SimpleCommand, cwd: str, depth: int, produced: frozenset[int] = frozenset()
    ) -> Verdict:
        name, args = cmd.words[0], cmd.words[1:]
        if not name.literal:
            return Verdict.ask(
                f"the program name is computed ({name.raw}): cannot check what runs", rule="command.syntax"
            )
        prog = name.text
        base = os.path.basename(prog) or prog
        arg_texts = [w.text if (w.tilde or not w.text.startswith("~")) else "./" + w.text for w in args]
        globs = {t for w, t in zip(args, arg_texts, strict=True) if w.glob}
        unchecked = {t for w, t in zip(args, arg_texts, strict=True) if not w.literal}  # already asked
        verdicts: list[Verdict] = []
        allowlisted = base in allowed_programs() and "/" not in prog and not name.escaped
        rule = check_allowed(base, arg_texts) if allowlisted else None
        if rule is not None and not rule.problems:
            expanded = self._glob_expansion(base, args, arg_texts, rule, unchecked, cwd)
            if expanded is not None:
                return expanded
            placed = loops.misplaced(base, args, arg_texts, rule, produced)
            if placed is not None:
                return Verdict.ask(placed, rule="command.path")
            return self._judge_allowlisted(base, cmd, rule, arg_texts, globs, unchecked, cwd, depth)
        inner_cmds, reasons, severe = describe_dangers(base, arg_texts, cwd, self.paths)
        for inner in inner_cmds[:5]:
            if depth < 4:
                iv = self._assess(inner, cwd, depth + 1)
                severe = severe or iv.severe
                if iv.decision == "deny":
                    verdicts.append(iv)
                reasons += [f"the inner command {r}" for r in iv.reasons[:3]]
        if "/" in prog:
            reasons.insert(0, f"runs {prog} by path: only bare program names on the read-only list run without asking")
        elif name.escaped:
            reasons.insert(0, f"the program name is written with a backslash ({name.raw})")
        if rule is not None:
            verdicts += [Verdict.ask(p, rule="command.flag") for p in rule.problems]
            for text, op in rule.paths:
                if text not in unchecked:
                    pv = self._path(text, op, cwd, None, base, text in globs)
                    if pv.decision == "deny":
                        verdicts.append(pv)
            if reasons:
                verdicts.append(Verdict("ask", reasons, "command.dangerous", severe))
            return Verdict.strictest(verdicts)
        # Not allowlisted: ask, explaining the danger; deny only when an argument is a protected path.
        for text in arg_texts:
            if text in unchecked:
                continue
            values = [text.partition("=")[2]] if "=" in text else []  # --file=X, if=X
            if not text.startswith("-"):
                values.append(text)
            for value in values:
                pv = self._path(value, "read", cwd, None, base, text in globs) if value else Verdict.allow()
                if pv.decision == "deny" and pv.rule != "path.denied.pseudo_fs":
                    verdicts.append(pv)
        if reasons:
            verdicts.append(Verdict("ask", reasons, "command.dangerous", severe))
        else:
            verdicts.append(Verdict.ask(f"not on the read-only list: {base}", rule="command.not_allowlisted"))
        return Verdict.strictest(verdicts)

    def _glob_expansion(
        self, base: str, args: list[Word], arg_texts: list[str], rule: ProgramCheck, unchecked: set[str], cwd: str
    ) -> Verdict | None:
        """Judge the words bash passes after glob expansion, not the patterns as written.

        An unquoted glob that matches files is replaced by their names, which shift into whatever place the
        pattern held: ``bash -c cat\\ R*`` runs a file named ``cat README.md; touch x`` as its script, and
        ``grep .e* README.md`` takes ``.env`` as the pattern and reads ``.envrc``.  So the program's rule is run
        on the expanded words, and every file name a glob produced must land where it is only a path (checked
        as one) or printed text; anywhere else (a script, a pattern, a filter, an option's value, the command
        a wrapper runs) the command asks.  ``[[ ]]`` does not expand globs.  A glob that matches nothing
        stays as written, as bash leaves it.
        """
        if base == "[[":
            return None
        expanded: list[str] = []
        produced: list[tuple[str, str]] = []  # (pattern, one file name it produced)
        for w, t in zip(args, arg_texts, strict=True):
            matches = sorted(self._expand(t, cwd)) if w.glob and t not in unchecked else []
            if not matches:
                expanded.append(t)
                continue
            expanded += matches
            produced += [(w.raw, m) for m in matches]
        if not produced or any(os.path.basename(m).startswith("-") for _, m in produced):
            return None  # a name read as an option asks below, with its own reason
        if rule.inner_at is not None:  # the wrapped command is judged on its own; the wrapper's own words may not move
            own = {w.raw for w in args[: rule.inner_at]}
            moved = [pat for pat, _ in produced if pat in own]
            if not moved:
                return None
            return Verdict.ask(f"{base} {moved[0]}: the glob matches files, whose names would shift the command "
                               f"{base} runs", rule="command.path")
        again = check_allowed(base, expanded)
        if again is None or again.problems:
            why = again.problems[0] if again and again.problems else "not on the read-only list"
            return Verdict.ask(f"{base}: after glob expansion ({produced[0][0]} matches files): {why}",
                               rule="command.path")
        safe = {p for p, _ in again.paths} | set(again.maybe_paths) | set(again.text)
        for pattern, name in produced:
            if name not in safe:
                return Verdict.ask(
                    f"{base} {pattern}: the glob matches files, and bash passes {name!r} where {base} reads it as "
                    "code, a pattern or an option value, not as a file: quote the pattern",
                    rule="command.path",
                )
        return None

    def _judge_allowlisted(
        self,
        base: str,
        cmd: SimpleCommand,
        rule: ProgramCheck,
        arg_texts: list[str],
        globs: set[str],
        unchecked: set[str],
        cwd: str,
        depth: int,
    ) -> Verdict:
        """A program on the read-only list used with options its table accepts: check what it touches."""
        verdicts: list[Verdict] = []
        if rule.inner_at is not None:  # timeout 5 CMD...: exactly as safe as CMD
            inner = SimpleCommand(cmd.words[1 + rule.inner_at :], nested=cmd.nested)
            return self._judge_simple(inner, cwd, depth)
        for script in rule.scripts:  # bash -lc SCRIPT: exactly as safe as SCRIPT
            if script in unchecked:
                continue
            if base == "zsh" and _ZSH_SPECIAL.search(script):
                return Verdict.ask(
                    "zsh -c: zsh reads globs, redirections and expansions differently from bash (a redirection "
                    "alone runs a pager, glob qualifiers run code); only plain zsh scripts are proven read-only",
                    rule="command.syntax",
                )
            if depth >= 4:
                return Verdict.ask(f"{base} -c nests shells too deeply to check", rule="command.syntax")
            sv = self._assess(script, cwd, depth + 1)
            if sv.decision != "allow":
                reasons = [f"{base} -c runs a command string", *(f"the inner command {r}" for r in sv.reasons)]
                return Verdict(sv.decision, reasons, sv.rule, sv.severe)
        if rule.workdir is not None:  # git -C DIR: DIR is where paths and the repository's config are read
            moved_by_glob = [t for k, t in enumerate(arg_texts[1:]) if arg_texts[k] == "-C" and t in globs]
            if moved_by_glob:  # bash expands it (vendor/l* is vendor/lib.git): DIR as written proves nothing
                return Verdict.ask(
                    f"{base} -C {moved_by_glob[0]}: a glob names the repository, so its config cannot be checked",
                    rule="command.path",
                )
            wv = self._path(rule.workdir, "list", cwd, None, f"{base} -C")
            if wv.decision != "allow":
                return wv
            cwd = str(self.paths.resolve(rule.workdir, cwd))
        if base == "git":
            verdicts += [Verdict.ask(p, rule="command.git_config") for p in git_rules.git_config_dangers(cwd)]
        for text, op in rule.paths:
            if text not in unchecked:
                verdicts.append(self._path(text, op, cwd, None, base, text in globs))
        for text in rule.maybe_paths:  # git revisions or paths: a protected name is refused either way
            if text in unchecked:
                continue
            pv = self._path(text, "read", cwd, None, base, text in globs)
            exists = text in globs or os.path.lexists(os.path.join(cwd, os.path.expanduser(text)))
            if pv.decision == "deny" or (pv.decision == "ask" and exists):  # git diff FILE OUTSIDE reads it
                verdicts.append(pv)
        if rule.reveals_config:
            leaks = git_rules.git_config_credentials(cwd, self.paths.home)
            verdicts += [Verdict.ask(r, rule="command.git_config") for r in leaks]
        verdicts += [self._tree(t, cwd, base) for t in rule.trees if t not in globs]
        verdicts += [self._tree(t, cwd, base, links_only=True) for t in rule.followed if t not in globs]
        for pat in rule.patterns:  # belt and braces: a misparsed option could shift a path here
            if "/" in pat or pat.startswith("~"):
                pv = self._path(pat, "read", cwd, None, base)
                if pv.decision != "allow":
                    verdicts.append(
                        Verdict.ask(
                            f"{base} takes {pat!r} as the pattern, but it looks like a path: {pv.reasons[0]}",
                            rule="command.path",
                        )
                    )
        for w, t in zip(cmd.words[1:], arg_texts, strict=True):
            if w.glob and any(os.path.basename(m).startswith("-") for m in self._expand(t, cwd)):
                verdicts.append(
                    Verdict.ask(
                        f"{base} {w.raw}: the glob matches a file name starting with '-', which {base} "
                        "would read as an option",
                        rule="command.path",
                    )
                )
        return Verdict.strictest(verdicts)

    def _path(
        self,
        text: str,
        op: str,
        cwd: str,
        word: Word | None,
        prog: str,
        is_glob: bool = False,
    ) -> Verdict:
        if word is not None:
            is_glob = word.glob
            if word.text.startswith("~") and not word.tilde:
                text = "./" + word.text
        if is_glob:
            return self._glob(text, op, cwd, prog)
        v = self.paths.check(text, op, cwd)
        if v.rule == "path.syntax":
            return Verdict.ask(f"{prog}: cannot check the path {text!r}: {v.reasons[0]}", rule="command.path")
        if v.decision == "allow":
            return v
        return Verdict(v.decision, [f"{prog} {text}: {r}" for r in v.reasons], v.rule)

    def _tree(self, top: str, cwd: str, prog: str, links_only: bool = False) -> Verdict:
        """A recursive reader reads every file below ``top``: ask if any of them is protected.

        ``links_only``: a listing that follows symlinks (``ls -RL``) prints names, so only a symlink into a
        protected place (``keys -> ~/.ssh``) matters: it would list what the path policy refuses to list.
        """
        try:
            root = self.paths.resolve(top, cwd)
        except ValueError as exc:  # the path check of the same operand explains it; never allow what is unseen
            return Verdict.ask(f"{prog} {top}: cannot check what it reads ({exc})", rule="command.path")
        if not root.is_dir():
            return Verdict.allow()
        seen, stack = 0, [str(root)]
        while stack:
            try:
                with os.scandir(stack.pop()) as it:
                    entries = list(it)
            except OSError:
                continue
            for e in entries:
                seen += 1
                if seen > MAX_TREE_ENTRIES:
                    return Verdict.ask(
                        f"{prog} reads everything under {root}: more than {MAX_TREE_ENTRIES} entries, "
                        "too many to check for protected files",
                        rule="command.path",
                    )
                try:
                    link = e.is_symlink()
                    multi = not link and e.is_file(follow_symlinks=False) and e.stat(follow_symlinks=False).st_nlink > 1
                    if not link and e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                except OSError:
                    link = multi = False
                if links_only:
                    denied = link and self.paths.check(e.path, "list").decision == "deny"
                else:
                    denied = (
                        self.paths.check(e.path, "read").decision == "deny"
                        if link or multi
                        else self.paths.denied_reason(Path(e.path)) is not None
                        or git_config_holds_credentials(Path(e.path))
                    )
                if denied and links_only:
                    return Verdict.ask(
                        f"{prog} lists {root} through its symlinks, and {e.path} leads to a protected place: "
                        "it would list what may not be listed (drop the option that follows symlinks)",
                        rule="command.path",
                    )
                if denied:
                    return Verdict.ask(
                        f"{prog} reads every file under {root}, including protected files such as "
                        f"{e.path}: exclude them or name the files to search",
                        rule="command.path",
                    )
        return Verdict.allow()

    def _expand(self, pattern: str, cwd: str) -> list[str]:
        """What the shell's glob expansion can give (no dotfiles for ``*``), relative to ``cwd``.

        Python's glob is read in bash's dialect: ``[^x]`` is bash's negation (Python's is ``[!x]``), and ``**``
        is expanded recursively, a superset of both bash's ``*`` and zsh's any-depth ``**``.
        """
        if pattern.startswith("~/"):
            pattern = str(self.paths.home) + pattern[1:]
        try:
            return _glob.glob(pattern.replace("[^", "[!"), root_dir=cwd, recursive=True)
        except (OSError, ValueError):
            return []

    def _glob(self, pattern: str, op: str, cwd: str, prog: str) -> Verdict:
        if "[:" in pattern or "[=" in pattern or "[." in pattern:
            return Verdict.ask(
                f"{prog} {pattern}: a character class in a glob ([[:alpha:]]...) cannot be checked",
                rule="command.path",
            )
        parts = pattern.split("/")
        fixed: list[str] = []
        for p in parts:
            if any(c in p for c in "*?["):
                break
            fixed.append(p)
        base = "/".join(fixed) or ("/" if pattern.startswith("/") else ".")
        verdicts = [self._path(base, "list", cwd, None, prog)]
        matches = self._expand(pattern, cwd)
        if len(matches) > MAX_GLOB_MATCHES:
            verdicts.append(
                Verdict.ask(f"{prog} {pattern}: matches {len(matches)} paths, too many to check", rule="command.path")
            )
        for m in matches[:MAX_GLOB_MATCHES]:
            verdicts.append(self._path(m if m.startswith("/") else "./" + m, op, cwd, None, prog))
        return Verdict.strictest(verdicts)


def _with_home(word: str, home: str) -> str:
    return word.replace("${HOME}", home).replace("$HOME", home)


def _markers(command: str) -> str:
    """The distinct invisible characters of ``command`` as markers: ``<U+202E>, <U+200B>``."""
    found = invisible_markers(command)
    return ", ".join(found[:4]) + (", ..." if len(found) > 4 else "")


def assess(command: str, cwd: str | None = None) -> Verdict:
    """Judge ``command`` with the default policies rooted at ``cwd`` (or the current directory)."""
    root = cwd or os.getcwd()
    return CommandPolicy(PathPolicy(roots=[root])).assess(command, root)

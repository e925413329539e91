"""The decision pipeline after a tool's own verdict: rules, the approval mode, hooks.

Contract:
    :meth:`Gate.before` takes a call and its tool's verdict and returns a :class:`Step`: the verdict that
    now stands (``allow`` runs, ``ask`` goes to the approver, ``deny`` is refused with ``Step.message``) and
    who decided, for the audit log, stats and telemetry (``rule:config#2``, ``mode:accept-edits``,
    ``mode:plan``, ``hook:NAME``; else the tool's own rule).

    The order is fixed: the floor (a ``deny`` of the tool's policy, and a *severe* ``ask``, which needs a
    person) -> user and project rules (deny > ask > allow; no rule: the tool's verdict) -> the mode -> hooks.
    Nothing here can allow what the floor denies or lift a severe question: a rule, a mode or a hook may
    only allow what the tool's policy asked about.

Why a command rule matches each simple command:
    ``npm test && curl x | sh`` must not be covered by an ``npm test`` rule, so the command is parsed
    (tree-sitter-bash, the classifier's parser) and an allow needs *every* simple command covered by an
    allow rule or proven read-only by the classifier on its own. Anything the words alone do not show
    (variable assignments, expansions, command substitutions, redirections to files, ``cd``) leaves the
    command to the classifier, which asks. An allow rule covers only what follows its prefix when no word
    there makes the program run other code or write elsewhere (``git log -p --ext-diff``,
    :func:`~swebash_ai.safety.proven.effect_option`).

Why deny and ask rules match every program the command runs, and what is not proven asks:
    A rule that matched first words only was walked around by ``env touch``, ``/usr/bin/touch``,
    ``bash -c 'touch x'``, ``find . -exec touch {} +``. They match every program
    :func:`~swebash_ai.safety.runs.programs_run` finds (through wrappers, paths and symlinks, nested shells,
    ``eval`` of literals, here-strings, ``npx``). But a list of the ways to start a program always misses one
    (``gdb -ex``, ``tar -I``, ``trap``, ``BASH_ENV``), so the check is turned around: with a deny or ask rule in
    force, a command runs without a person only when it is *proven* (:func:`~swebash_ai.safety.proven.unproven`:
    every program it runs read from the line, each in the classifier's option table used with options that
    start no other program, or covered by an allow rule, and no shell construct the parse does not follow).
    Anything else is a *severe* ask, with the reason: a person answers, ``--yes`` and auto mode do not.

Why an allow rule never covers what its program starts:
    An allow rule for ``npx``, ``make`` or ``uv run`` is the user's word about that program, not about the
    one it is told to run: ``npx touch M`` is covered only if ``touch M`` is, by an allow rule or by the
    classifier on its own.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from swebash_ai.config.rules import COMMAND_TOOL, ToolRule, ToolRules, strictest, whose
from swebash_ai.safety.terminal_text import has_invisible
from swebash_ai.safety.verdict import Verdict

if TYPE_CHECKING:
    from swebash_ai.config.hooks import Hook
    from swebash_ai.safety.shell_parse import ParsedCommand, SimpleCommand

Mode = Literal["ask", "accept-edits", "auto", "plan"]
MODES: tuple[Mode, ...] = ("ask", "accept-edits", "auto", "plan")
#: Modes that run what asks without a question: the session allows them only where the sandbox bounds them.
UNASKED_MODES: frozenset[str] = frozenset({"auto"})
WRITE_TOOLS = frozenset({"write_file", "edit_file"})
# The path policy's verdicts for a write inside the workspace to a path it does not protect: the only writes
# accept-edits applies unasked (outside the workspace, ``.git`` and protected files keep their own verdict).
_EDIT_RULES = frozenset({"path.write", "fs.write"})
_MOVES = frozenset({"cd", "pushd", "popd"})

PLAN_REFUSAL = (
    "Not run: swebash-ai is in plan mode (read-only): {what} is refused. Read and search to make a plan, "
    "write the plan in your answer, and let the user switch the mode (Shift+Tab, or --approval-mode) to carry "
    "it out."
)

THE_USERS = "the user's"
"""Whose a rule or hook from the user's config (or a profile) is, as the model is told (see ``whose``)."""

HookRunner = Callable[["Hook", dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True)
class Step:
    """What stands after rules, mode and hooks."""

    verdict: Verdict
    decided_by: str
    message: str = ""
    """For a refusal: the result text the model reads."""


@dataclass
class Gate:
    """Rules, hooks and the (changeable) mode of a session. Built by the session; the loop asks it."""

    rules: ToolRules = field(default_factory=ToolRules)
    hooks: tuple[Hook, ...] = ()
    mode: Mode = "ask"
    workspace: Path = field(default_factory=Path.cwd)
    run_hook: HookRunner | None = None
    """Runs one hook, returning an :class:`~swebash_ai.agent.hooks.Opinion` (the session's runner)."""

    def next_mode(self) -> Mode:
        """Cycle ask -> accept-edits -> auto -> plan -> ask (the TUI's Shift+Tab)."""
        self.mode = MODES[(MODES.index(self.mode) + 1) % len(MODES)]
        return self.mode

    # --- rules --------------------------------------------------------------------------------------
    def rule_for(self, tool: str, arguments: Mapping[str, Any], proven: Callable[[str], bool]) -> ToolRule | None:
        """The rule that decides this call, or ``None`` (see the module docstring)."""
        rules = [r for r in self.rules.rules if r.applies_in(self.workspace)]
        found = [r for r in rules if r.covers_tool(tool, arguments)
                 and not (r.decision == "allow" and tool == COMMAND_TOOL)]  # commands are allowed by prefix only
        command = arguments.get("command") if tool == COMMAND_TOOL else None
        if isinstance(command, str):
            where = _call_dir(self.workspace, arguments)
            # an allow rule naming a relative path (`./build.sh`) names the file in the workspace, not in `cwd`
            prefixed = [r for r in rules if r.prefix is not None and not (
                r.decision == "allow" and where != str(self.workspace) and _relative_path(r.prefix[0]))]
            found += command_rules(command, prefixed, proven, where)
        return strictest(found)

    def unproven(self, tool: str, arguments: Mapping[str, Any], read_only: bool = False) -> str | None:
        """With a deny or ask command rule in force: why this command is not proven to run only what the rules
        can see (:func:`~swebash_ai.safety.proven.unproven`; a program an allow rule covers counts as proven,
        what it starts does not), or ``None``. ``read_only``: the classifier proved the command read-only, the
        stronger answer of the same table (it also proves each value a ``for`` loop gives its words)."""
        command = arguments.get("command") if tool == COMMAND_TOOL else None
        rules = [r for r in self.rules.rules if r.prefix is not None and r.applies_in(self.workspace)]
        if not isinstance(command, str) or read_only or not any(r.decision != "allow" for r in rules):
            return None
        if _unreadable(command):
            return "it holds control or invisible characters, so it does not read as it runs"
        from swebash_ai.safety.proven import unproven

        allows = [r for r in rules if r.decision == "allow"]
        named = [os.path.basename(r.prefix[0]) for r in rules if r.decision != "allow" and r.prefix]
        where = _call_dir(self.workspace, arguments)
        if where != str(self.workspace):
            allows = [r for r in allows if not _relative_path(r.prefix[0] if r.prefix else "")]
        why = unproven(command, where, lambda argv: _covering(allows, argv), named)
        return "; ".join(why[:4]) or None

    def propose(self, tool: str, arguments: Mapping[str, Any], verdict: Verdict) -> dict[str, Any] | None:
        """The rule "always allow this in this workspace" would save, or ``None`` (see :func:`propose_rule`)."""
        return propose_rule(tool, arguments, verdict, self.workspace)

    # --- the pipeline -------------------------------------------------------------------------------
    def settle(
        self, tool: str, category: str, arguments: Mapping[str, Any], verdict: Verdict, proven: Callable[[str], bool]
    ) -> tuple[Step, bool]:
        """Rules, then the mode, on a verdict the floor did not deny: the step that stands before any hook, and
        whether its ``ask`` is pinned (a rule or a hook insisted on it: no later allow lifts it). Synchronous and
        without side effects, so the loop can also ask it whether a call may start while the response streams."""
        own = verdict
        decided_by = verdict.rule or "policy"
        pinned = own.rule == "rule.ask"  # an ask a rule or hook insisted on (fetch_url's host rules too): kept
        rule = self.rule_for(tool, arguments, proven)
        yours = "" if rule is None else whose(rule.origin, user="your")
        if rule is not None and rule.decision == "deny":
            return Step(Verdict.deny(f"denied by {yours} {rule.describe()}", rule=rule.label), rule.label,
                        f"Not run: {whose(rule.origin, user=THE_USERS)} {rule.describe()} denies it. Do not "
                        "retry it; find another way or ask the user."), pinned
        unproven = self.unproven(tool, arguments, own.decision == "allow" and own.rule == "command.readonly")
        why = (f"your deny or ask rules are in force and this command is not proven to run only what they see: "
               f"{unproven}")
        if rule is not None and rule.decision == "ask":  # pinned; a person answers if it is not proven either
            verdict = Verdict("ask", [f"{yours} {rule.describe()} asks", *([why] if unproven else []),
                                      *verdict.reasons], rule.label, verdict.severe or unproven is not None)
            decided_by, pinned = rule.label, True
        elif unproven is not None:  # it may run what a rule names: a person answers (--yes and auto do not)
            verdict = Verdict("ask", [why, *verdict.reasons], "rule.unproven", True)
            return Step(verdict, "rule.unproven"), True
        elif rule is not None and verdict.decision == "ask" and not verdict.severe:
            verdict, decided_by = Verdict.allow(f"allowed by {yours} {rule.describe()}", rule=rule.label), rule.label
        if self.mode == "plan" and _refused_in_plan(tool, category, own):
            return Step(Verdict.deny("plan mode is read-only", rule="mode:plan"), "mode:plan",
                        PLAN_REFUSAL.format(what=_what(tool))), pinned
        if (self.mode == "auto" and tool == COMMAND_TOOL and verdict.decision == "ask" and not pinned
                and not verdict.severe):
            # The command runs unasked inside the sandbox (the runner confines everything no person approved);
            # catastrophes, persistence points and what a rule pins still ask.
            verdict = Verdict.allow("auto mode runs it inside the sandbox", rule="mode:auto")
            decided_by = "mode:auto"
        if (self.mode in ("accept-edits", "auto") and tool in WRITE_TOOLS and own.rule in _EDIT_RULES
                and verdict.decision == "ask" and not pinned and not verdict.severe
                and not self._runs_unasked(arguments.get("path"))):
            verdict = Verdict.allow(f"{self.mode} mode applies edits inside the workspace", rule=f"mode:{self.mode}")
            decided_by = f"mode:{self.mode}"
        return Step(verdict, decided_by), pinned

    async def before(
        self,
        tool: str,
        category: str,
        arguments: Mapping[str, Any],
        verdict: Verdict,
        proven: Callable[[str], bool],
        on_problem: Callable[[str], None] = lambda _text: None,
    ) -> Step:
        """Rules, then the mode (:meth:`settle`), then hooks, on a verdict the floor did not deny."""
        step, pinned = self.settle(tool, category, arguments, verdict, proven)
        if step.verdict.decision == "deny":
            return step
        verdict, decided_by = step.verdict, step.decided_by
        for hook in self.matching("before_tool", tool, arguments):
            opinion = await self._ask_hook(hook, {"event": "before_tool", "tool": tool, "arguments": dict(arguments),
                                                  "verdict": _verdict_json(verdict)}, on_problem)
            if opinion is None or opinion.decision is None:
                continue
            # The reason names the hook and where it was read: a project's hook is not the user's word.
            said = f": {opinion.reason}" if opinion.reason else ""
            why = f"{hook.describe()}{said}" if said else f"{hook.describe()} says {opinion.decision}"
            if opinion.decision == "deny":
                return Step(Verdict.deny(why, rule=hook.label), hook.label,
                            f"Not run: {whose(hook.origin, user=THE_USERS)} {hook.describe()} refused it{said}. "
                            "Do not retry it as it is.")
            if opinion.decision == "ask" and verdict.decision == "allow":
                verdict = Verdict("ask", [why], hook.label, verdict.severe)
                decided_by, pinned = hook.label, True
            elif (opinion.decision == "allow" and verdict.decision == "ask" and not pinned and not verdict.severe
                  and (tool != COMMAND_TOOL or coverable(str(arguments.get("command", ""))))):
                verdict, decided_by = Verdict.allow(why, rule=hook.label), hook.label
        return Step(verdict, decided_by)

    def _runs_unasked(self, path: Any) -> bool:
        """A file whose content later runs or decides without a question: the project's ``.swebash-ai`` folder
        (rules, hooks) and the files hooks run (:meth:`Hook.file_words`, and those they run unnamed:
        :func:`~swebash_ai.agent.hook_files.indirect_files`). accept-edits never writes those unasked, or an
        edit would be code that runs at the next tool call."""
        if not isinstance(path, str):
            return True
        target = Path(os.path.realpath(self.workspace / os.path.expanduser(path)))
        if target.is_relative_to(Path(os.path.realpath(self.workspace / ".swebash-ai"))):
            return True
        named = {Path(os.path.realpath(self.workspace / w)) for h in self.hooks for w in h.file_words()}
        if target in named:
            return True
        if not self.hooks:
            return False
        from swebash_ai.agent.hook_files import indirect_files
        from swebash_ai.tools.command_env import child_environment

        env = child_environment(os.environ)  # the environment the hooks run with
        return any(Path(os.path.realpath(f.path)) == target
                   for h in self.hooks for f in indirect_files(h, self.workspace, env))

    def matching(self, event: str, tool: str = "", arguments: Mapping[str, Any] | None = None) -> list[Hook]:
        """The hooks of ``event`` whose tool glob and command prefix match this call."""
        import fnmatch

        out = []
        for hook in self.hooks:
            if hook.event != event:
                continue
            if hook.tool is not None and not fnmatch.fnmatchcase(tool, hook.tool):
                continue
            if hook.prefix is not None:
                command = (arguments or {}).get("command")
                if tool != COMMAND_TOOL or not isinstance(command, str) or not _any_starts(command, hook.prefix):
                    continue
            out.append(hook)
        return out

    async def _ask_hook(self, hook: Hook, payload: dict[str, Any], on_problem: Callable[[str], None]) -> Any:
        if self.run_hook is None:
            return None
        payload = {**payload, "cwd": str(self.workspace), "mode": self.mode}
        opinion = await self.run_hook(hook, payload)
        if opinion.problem:
            on_problem(f"{hook.describe()}: {opinion.problem} (treated as no opinion)")
        return opinion


def command_rules(command: str, rules: Sequence[ToolRule], proven: Callable[[str], bool],
                  cwd: str | None = None) -> list[ToolRule]:
    """The prefix rules that speak about ``command``: every deny/ask rule matching any program it runs
    (:func:`~swebash_ai.safety.runs.programs_run`), and an allow rule only when every simple command is covered
    by an allow rule (with no effect option after its prefix) or proven read-only (``proven`` judges one simple
    command's text, its words as written)."""
    if not rules or _unreadable(command):
        return []
    from swebash_ai.safety.proven import PROJECT_LAUNCHERS, effect_option
    from swebash_ai.safety.runs import programs_run, same_program

    restrictive = [r for r in rules if r.decision != "allow" and r.prefix]
    runs = programs_run(command).runs if restrictive else ()
    found = [r for r in restrictive if r.prefix and any(
        same_program(run.argv[0], r.prefix[0], cwd) and _in_order(r.prefix[1:], run.argv[1:]) for run in runs)]
    parsed = parse(command)
    if parsed is None:
        return found
    allows = [r for r in rules if r.decision == "allow"]
    if found or not allows or parsed.problems or parsed.file_targets:
        return found
    if any(c.nested or not _plain(c) or c.argv[0] in _MOVES for c in parsed.commands):
        return found
    used: list[ToolRule] = []
    for cmd in parsed.commands:
        text = " ".join(w.raw for w in cmd.words)  # as written: globs stay globs for the classifier
        covering = next((r for r in allows if r.covers_argv(cmd.argv) and r.prefix
                         and effect_option(cmd.argv, len(r.prefix)) is None), None)
        if covering is None and not proven(text):
            return found
        if covering is not None:  # it covers the program, never what that program starts (npx touch, make -C)
            inner = programs_run(text)
            # (what npx or uv run starts is the project's program of that name: only an allow rule covers it)
            if inner.unknowable or not all(
                    _allowed(allows, run.argv) or (not PROJECT_LAUNCHERS & set(run.via)
                                                   and proven(shlex.join(run.argv))) for run in inner.runs[1:]):
                return found
            used.append(covering)
    return used[:1]


def _call_dir(workspace: Path, arguments: Mapping[str, Any]) -> str:
    """The folder a command call runs in: the workspace, or its ``cwd`` argument taken from there."""
    cwd = arguments.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        return str(workspace)
    where = os.path.realpath(os.path.join(workspace, os.path.expanduser(cwd)))
    return str(workspace) if where == os.path.realpath(workspace) else where


def _relative_path(word: str) -> bool:
    """A program word that names a file relative to where the command runs (``./build.sh``, ``bin/x``)."""
    return "/" in word and not word.startswith(("/", "~"))


def _covering(allows: Sequence[ToolRule], argv: Sequence[str]) -> int | None:
    """How many words of ``argv`` an allow rule covers, with no word after them that runs other code; or ``None``."""
    from swebash_ai.safety.proven import effect_option

    return next((len(r.prefix) for r in allows if r.prefix and r.covers_argv(list(argv))
                 and effect_option(argv, len(r.prefix)) is None), None)


def _allowed(allows: Sequence[ToolRule], argv: Sequence[str]) -> bool:
    """Whether an allow rule covers ``argv`` as it stands, with no word after its prefix that runs other code."""
    return _covering(allows, argv) is not None


def _in_order(words: Sequence[str], argv: Sequence[str]) -> bool:
    """Whether ``words`` stand in ``argv`` in this order, whatever stands between them: a deny rule for
    ``git push`` holds for ``git -C . push`` and ``git --no-pager push`` (it may also hold for a path named
    ``push``: a deny rule errs on the side of refusing)."""
    rest = iter(argv)
    return all(any(word == seen for seen in rest) for word in words)


def propose_rule(tool: str, arguments: Mapping[str, Any], verdict: Verdict, workspace: Path) -> dict[str, Any] | None:
    """A ``[[rules]]`` table allowing calls like this one in ``workspace``, never wider than what was shown.

    A command gets its program and subcommand (``npm test``; ``ls`` alone for a program without
    subcommands); a compound command, one with expansions, redirections or a program named by path gets
    none, and so does a program known for global options when the subcommand is not the second word
    (``git -C x status``). An MCP tool gets its exact name. Writes get none (each diff is approved on its
    own, or accept-edits mode applies them), nor does a catastrophe (a severe question needs a person).
    """
    if verdict.severe or verdict.decision != "ask" or verdict.rule == "command.dangerous":
        return None  # "always allow rm here" is not offered: a dangerous program is approved each time
    where = {"decision": "allow", "workspaces": [str(workspace)]}
    if tool.startswith("mcp__"):
        return {"tool": tool, **where}
    command = arguments.get("command") if tool == COMMAND_TOOL else None
    if not isinstance(command, str) or _unreadable(command):
        return None
    parsed = parse(command)
    if parsed is None or parsed.problems or parsed.file_targets or len(parsed.commands) != 1:
        return None
    cmd = parsed.commands[0]
    if not _plain(cmd) or "/" in cmd.argv[0] or cmd.argv[0] in _MOVES or any(w.glob for w in cmd.words[:2]):
        return None
    from swebash_ai.config.rules import GLOBAL_OPTIONS

    argv = cmd.argv
    if len(argv) > 1 and not argv[1].startswith("-"):
        words = argv[:2]
    elif argv[0] in GLOBAL_OPTIONS:
        return None
    else:
        words = argv[:1]
    return {"prefix": words, **where}


def coverable(command: str) -> bool:
    """Whether a prefix rule could allow ``command`` at all: plain simple commands, nothing the words hide."""
    parsed = None if _unreadable(command) else parse(command)
    return bool(parsed is not None and parsed.commands and not parsed.problems and not parsed.file_targets
                and all(not c.nested and _plain(c) and c.argv[0] not in _MOVES for c in parsed.commands))


def parse(command: str) -> ParsedCommand | None:
    """The shell parser's reading of ``command``; the parser is imported when a first command is judged, since
    an answer without tool calls needs none of it."""
    from swebash_ai.safety.shell_parse import parse as parse_shell

    return parse_shell(command)


def _unreadable(command: str) -> bool:
    """Control or invisible characters: the command does not read as it runs, so no rule speaks about it
    and the command policy's question stands."""
    from swebash_ai.safety.shell_parse import CONTROL_RE

    return CONTROL_RE.search(command) is not None or has_invisible(command)


def _plain(cmd: SimpleCommand) -> bool:
    """Words exactly as written: no expansion, and a program named by a plain word."""
    return bool(cmd.words) and all(w.literal for w in cmd.words) and not (
        cmd.words[0].glob or cmd.words[0].tilde or cmd.words[0].escaped)


def _any_starts(command: str, prefix: tuple[str, ...]) -> bool:
    parsed = parse(command) if not _unreadable(command) else None
    if parsed is None:
        return True  # cannot tell: a hook that restricts is better asked than skipped
    return any(tuple(c.argv[: len(prefix)]) == prefix for c in parsed.commands)


def _refused_in_plan(tool: str, category: str, own: Verdict) -> bool:
    if tool in WRITE_TOOLS:
        return True
    # Commands and MCP tools run in plan mode only when the tool's own policy proves them harmless.
    return category in ("exec", "mcp") and own.decision != "allow"


def _what(tool: str) -> str:
    if tool in WRITE_TOOLS:
        return f"{tool} (it changes files)"
    if tool == COMMAND_TOOL:
        return "this command (it is not proven read-only)"
    return f"{tool} (its effects are not proven read-only)"


def _verdict_json(verdict: Verdict) -> dict[str, Any]:
    return {"decision": verdict.decision, "reasons": verdict.reasons, "rule": verdict.rule}



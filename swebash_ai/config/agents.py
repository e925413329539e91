"""Agent files as data: a name, a description, a prompt, a tool list, a model, a turn limit and a mode.

Contract:
    :func:`parse_agent` turns the text of one Markdown file with front matter into an :class:`AgentSpec`, or
    a sentence saying why it cannot be used. Three dialects are read as their users write them:

    * ours: ``name``, ``description``, ``tools`` (an allow list), ``disallowed_tools``, ``model``,
      ``max_turns``, ``mode`` (an approval mode: ``ask``, ``accept-edits``, ``auto``, ``plan``);
    * Claude Code's (``.claude/agents/*.md``): ``tools: Read, Grep, Bash`` (a comma-separated string or a
      list), ``disallowedTools``, ``model`` (``inherit`` or an alias such as ``sonnet``: the parent's model
      here, since an alias names no model of ours), ``maxTurns``, ``permissionMode``;
    * opencode's (``.opencode/agent/*.md``): ``tools: {write: false}`` (a map of names to on/off),
      ``permission: {edit: deny}`` (a denied permission removes its tools), ``maxSteps``, and ``mode:
      subagent | primary | all``, which is opencode's word for where an agent is offered, not an approval mode.

    Peer tool names map to ours (:data:`PEER_TOOLS`: ``Read`` -> ``read_file``, ``Bash`` -> ``run_command``,
    ``Glob`` -> ``find_files``...); a name neither ours nor mapped is reported in :attr:`AgentSpec.notes`
    and ignored (an allow list is never widened by a name we do not know).

Why a data module:
    What an agent may do is decided where it runs (``agent/subagents.py``, which narrows the parent's tools
    and mode: the parent is the ceiling). Here nothing is trusted or read from disk: the agent layer reads
    the files through the guarded reader and says which ones wait for the project to be trusted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = ["BUILTIN_AGENTS", "PEER_TOOLS", "AgentSpec", "Scope", "parse_agent", "split_front_matter"]

Scope = Literal["built-in", "user", "project"]
AGENT_MODES = ("ask", "accept-edits", "auto", "plan")
"""Approval modes an agent file may ask for (the parent's mode is still the ceiling)."""
_OPENCODE_ROLES = frozenset({"subagent", "primary", "all"})
_CLAUDE_MODES = {"default": "ask", "acceptedits": "accept-edits", "plan": "plan", "bypasspermissions": "auto",
                 "dontask": "ask"}
_MODEL_ALIASES = frozenset({"inherit", "sonnet", "opus", "haiku", "default"})
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")

READ_ONLY_TOOLS = ("read_file", "list_dir", "exists", "metadata", "search", "find_files")
"""The tools that read and never change anything."""

PEER_TOOLS: Mapping[str, tuple[str, ...]] = {
    # Claude Code
    "read": ("read_file",), "write": ("write_file",), "edit": ("edit_file",), "multiedit": ("edit_file",),
    "notebookedit": ("edit_file",), "grep": ("search",), "glob": ("find_files",), "ls": ("list_dir",),
    "bash": ("run_command",), "bashoutput": ("read_process",), "killshell": ("stop_process",),
    "killbash": ("stop_process",), "webfetch": ("fetch_url",), "websearch": ("web_search",),
    "todowrite": ("update_plan",), "task": ("task",), "agent": ("task",), "askuserquestion": ("ask_user",),
    # opencode (lower case already); its ``edit`` permission covers every file change
    "list": ("list_dir",), "patch": ("edit_file",), "todoread": (), "skill": (), "lsp": (),
}
"""Peer tool names (lower case) and the tools of ours they stand for."""
_EDIT_PERMISSION = ("write_file", "edit_file")


@dataclass(frozen=True)
class AgentSpec:
    """One agent a ``task`` call may start."""

    name: str
    description: str
    prompt: str
    """The agent's own instructions (the file's body), added to the child's system prompt."""
    tools: tuple[str, ...] | None = None
    """Allow list of our tool names; ``None``: every tool the parent has."""
    disallowed: tuple[str, ...] = ()
    model: str | None = None
    """``None``: the parent's model."""
    max_turns: int | None = None
    mode: str | None = None
    """An approval mode; the stricter of it and the parent's applies."""
    scope: Scope = "built-in"
    path: Path | None = None
    notes: tuple[str, ...] = ()
    """What was read but not used (an unknown tool name, a model alias), for ``swebash-ai agents``."""
    in_force: bool = True
    """False for a project file while the project is not trusted: listed, never started."""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def origin(self) -> str:
        return "built-in" if self.path is None else f"{self.scope}: {self.path}"


BUILTIN_AGENTS: tuple[AgentSpec, ...] = (
    AgentSpec(
        "general", "A general-purpose agent for a multi-step side task: research, a change across files, a test "
        "run. It has the tools and the approval mode of the main assistant.",
        "Do the task you are given completely, then answer with what you found or did: the facts the main "
        "assistant needs, with file paths and line numbers, and what is left undone.",
    ),
    AgentSpec(
        "explore", "A read-only agent that searches and reads the code to answer a question (where is X, how "
        "does Y work). It cannot change files; it runs only commands proven read-only.",
        "You explore a code base to answer one question. Search, find files and read them; do not try to change "
        "anything. Answer concisely with what you found: file paths, line numbers, and short quotes.",
        tools=(*READ_ONLY_TOOLS, "run_command"), mode="plan",
    ),
)


def split_front_matter(text: str) -> tuple[str, str] | None:
    """(front matter, body) of a file opening with ``---`` lines; ``None`` when it has none."""
    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].strip() != "---":
        return None
    for i, line in enumerate(lines[1:], 1):
        if line.strip() == "---":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1:])
    return None


def _load_yaml(text: str) -> Any:
    import yaml  # only when an agent file is read: a start never loads it

    return yaml.safe_load(text)


def _names(value: Any) -> list[str] | None:
    """A tool list as written: ``Read, Grep`` or ``[Read, Grep]`` (``Task(explore)``: the tool's name)."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else None
    if items is None:
        raise ValueError("a tool list is a comma-separated string or a list")
    return [str(item).split("(", 1)[0].strip() for item in items if str(item).strip()]


def _ours(names: list[str], known: frozenset[str] | None, notes: list[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        if (known is not None and name in known) or name.startswith("mcp__"):
            out.append(name)
            continue
        mapped = PEER_TOOLS.get(name.lower().replace("_", ""))
        if mapped is not None:
            out.extend(mapped)
        elif known is None and re.fullmatch(r"[a-z_]+", name):
            out.append(name)  # no list of our tools to check against: taken as written
        else:
            notes.append(f"unknown tool {name!r} ignored")
    return list(dict.fromkeys(out))


def parse_agent(text: str, path: Path, scope: Scope, known_tools: frozenset[str] | None = None) -> AgentSpec | str:
    """The agent of one file (see the module docstring), or why it cannot be used."""
    split = split_front_matter(text)
    if split is None:
        return "it has no front matter (--- lines with at least a description)"
    head, body = split
    try:
        meta = _load_yaml(head) or {}
    except Exception as exc:  # PyYAML's errors carry the line; any of them means the file is not used
        return f"its front matter is not valid YAML ({str(exc).splitlines()[0]})"
    if not isinstance(meta, dict):
        return "its front matter is not a table of keys"
    name = str(meta.get("name") or path.stem).strip().lower().replace(" ", "-")
    if not NAME.match(name):
        return f"{name!r} is not a usable name (lower-case letters, digits, - and _)"
    description = " ".join(str(meta.get("description") or "").split())
    if not description:
        return "it has no description (the model picks an agent by its description)"
    if meta.get("disable") is True or meta.get("disabled") is True:
        return "it is disabled"
    notes: list[str] = []
    try:
        allowed = _names(meta.get("tools")) if not isinstance(meta.get("tools"), dict) else None
        denied = _names(meta.get("disallowed_tools", meta.get("disallowedTools"))) or []
    except ValueError as exc:
        return str(exc)
    tools_map = meta.get("tools")
    if isinstance(tools_map, dict):  # opencode: {write: false, bash: true}
        denied += [str(k) for k, on in tools_map.items() if on is False]
    permission = meta.get("permission")
    if isinstance(permission, dict):
        for key, value in permission.items():
            if value == "deny":
                denied += list(_EDIT_PERMISSION) if str(key).lower() == "edit" else [str(key)]
    tools = None if allowed is None else tuple(_ours(allowed, known_tools, notes))
    disallowed = tuple(_ours(denied, known_tools, notes))
    model = meta.get("model")
    if isinstance(model, str) and model.strip().lower() in _MODEL_ALIASES:
        if model.strip().lower() != "inherit":
            notes.append(f"model alias {model!r} names no model here: the main assistant's model is used")
        model = None
    turns = meta.get("max_turns", meta.get("maxTurns", meta.get("maxSteps")))
    if turns is not None and (not isinstance(turns, int) or isinstance(turns, bool) or turns < 1):
        return f"max_turns must be a whole number of at least 1, not {turns!r}"
    mode = _mode(meta, notes)
    return AgentSpec(name, description[:500], body.strip(), tools, disallowed,
                     str(model).strip() if model else None, turns, mode, scope, path, tuple(notes))


def _mode(meta: Mapping[str, Any], notes: list[str]) -> str | None:
    raw = meta.get("mode")
    if isinstance(raw, str) and raw in _OPENCODE_ROLES:
        raw = None  # opencode's role of the agent, not an approval mode
    claude = meta.get("permissionMode")
    if raw is None and isinstance(claude, str):
        raw = _CLAUDE_MODES.get(claude.lower())
    if raw is None:
        return None
    if raw not in AGENT_MODES:
        notes.append(f"mode {raw!r} is not an approval mode ({', '.join(AGENT_MODES)}): ignored")
        return None
    return str(raw)

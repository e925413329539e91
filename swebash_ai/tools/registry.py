"""The tool contract: a tool is a plain async function; its signature is the single source of truth.

``@tool(category=...)`` turns ``async def read_file(ctx: ToolContext, path: str, start: int = 1) -> ToolResult``
into a :class:`Tool`: pydantic builds the argument model (and so the JSON Schema the model sees, and the
validation of what the model sends) from the type hints; parameter descriptions come from the Google-style
``Args:`` section of the docstring; the tool description is the docstring's text before it.

A tool never raises into the loop. Invalid JSON, unknown or missing arguments, wrong types, unknown tools,
policy denials and exceptions inside the tool all become a :class:`ToolResult` with ``ok=False`` and a
message written for the model to act on.

Per call, a tool can say whether it needs approval (``policy`` returns a :class:`Verdict`), how to describe
the call to a person (``describe``) and what "allow for this session" covers (``session_key``).
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import inspect
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo

from swebash_ai.config.rules import ToolRules
from swebash_ai.errors import ConfigError
from swebash_ai.safety.verdict import Verdict
from swebash_ai.tools.web_guard import Provenance

if TYPE_CHECKING:
    from swebash_ai.config.settings import Settings

Category = Literal["fs", "exec", "web", "plan", "ask", "agent"]
Status = Literal["ok", "error", "denied", "cancelled", "timeout"]
JSON = str | int | float | bool | None | list[Any] | dict[str, Any]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced, for the model (``for_model``) and for people (the rest).

    Attributes:
        ok: The call did what was asked.
        content: Text, or JSON-serialisable data.
        status: ``ok``, ``error``, ``denied`` (by policy or user), ``cancelled``, ``timeout``.
        exit_code: A command's exit code, where it applies.
        duration: Seconds the call took (set by the registry).
        truncated: The content was cut to a limit.
        metadata: Anything else front ends may show (bytes read, paths, the rule that decided...).
        unasked_output: The content is the output of a command nobody approved: :meth:`with_secrets_masked`
            adds the rules of :func:`~swebash_ai.safety.redact.redact_output` (values of secret-named
            ``NAME=value`` lines, URL credentials) to its scan, so such output is scanned once, by the loop.
        keys_removed: Private key blocks the tool removed itself, because only the whole file shows them (a
            line range from the middle of a key): :meth:`with_secrets_masked` counts them in its one note.
    """

    ok: bool
    content: JSON
    status: Status = "ok"
    exit_code: int | None = None
    duration: float = 0.0
    truncated: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    unasked_output: bool = False
    keys_removed: int = 0

    @classmethod
    def success(cls, content: JSON, **kw: Any) -> ToolResult:
        return cls(True, content, "ok", **kw)

    @classmethod
    def error(cls, message: str, **kw: Any) -> ToolResult:
        return cls(False, message, "error", **kw)

    @classmethod
    def denied(cls, message: str, **kw: Any) -> ToolResult:
        return cls(False, message, "denied", **kw)

    @classmethod
    def cancelled(cls, message: str = "Cancelled by the user before it finished.", **kw: Any) -> ToolResult:
        return cls(False, message, "cancelled", **kw)

    def with_duration(self, seconds: float) -> ToolResult:
        return replace(self, duration=seconds)

    def with_secrets_masked(self) -> ToolResult:
        """This result with private keys removed and credential-format values masked, and a note saying so.

        The loop applies it to every result before the model (or the audit, the transcript, a front end)
        sees it: one choke point for files, search hits, command output, fetched pages and MCP results.
        JSON content stays JSON unless something in it was masked (then it becomes the masked text).
        """
        from swebash_ai.safety.redact import redact_output  # with the first result: an answer alone needs none
        from swebash_ai.safety.secrets import Scan, mask_secrets

        scan = redact_output(self.text) if self.unasked_output else mask_secrets(self.text)
        if self.keys_removed:
            scan = Scan(scan.text, scan.kinds, scan.private_keys + self.keys_removed)
        if not scan.masked:
            return self
        meta = dict(self.metadata, masked_secrets=scan.masked, masked_kinds=sorted(scan.kinds))
        if scan.private_keys:
            meta["private_keys_removed"] = scan.private_keys
        return replace(self, content=f"{scan.text}\n{scan.note()}", metadata=meta)

    @property
    def text(self) -> str:
        """The content as text (JSON is serialised)."""
        if isinstance(self.content, str):
            return self.content
        return json.dumps(self.content, ensure_ascii=False, indent=1)

    def for_model(self) -> str:
        """The tool message content sent back to the model."""
        body = self.text
        if self.status == "ok":
            return body
        prefix = {"error": "Error", "denied": "Denied", "cancelled": "Cancelled", "timeout": "Timed out"}
        return f"{prefix[self.status]}: {body}"


AskFn = Callable[[Verdict, str, str, str | None], Awaitable[str | None]]
"""``ask(verdict, summary, detail, session_key)``: see :attr:`ToolContext.ask`."""


@dataclass
class ToolContext:
    """What a tool may use besides its arguments. Built by the session; tests build their own."""

    settings: Settings
    cwd: Path
    path_policy: Any = None
    command_policy: Any = None
    on_output: Callable[[str], None] = lambda _chunk: None
    """Live output (a running command's stdout/stderr) for the tool-activity pane."""
    services: dict[str, Any] = field(default_factory=dict)
    """Injected backends (``"web_search"``: a search callable...), so tests never touch the network."""
    approved: bool = False
    """The policy asked and this call was approved (by the user, an allow-for-session, ``--yes`` or
    confirmations turned off), as opposed to allowed by a rule. Set per call by the loop."""
    unasked_change: bool = False
    """The policy asked and no question settled it: a rule, a hook or the mode allowed it (auto mode's
    commands). A command run so is snapshotted first, as an approved one is. Set per call by the loop."""
    unconfined: bool = False
    """A person said yes to this exact call (in the dialog, at the terminal, in the editor): the only way a
    command the policy could not prove read-only runs with all of the user's rights where a sandbox works.
    Set per call by the loop."""
    provenance: Provenance = field(default_factory=Provenance)
    """URLs of this session the model did not make up (the user's messages, search results, links on pages
    fetched by provenance or with approval); ``fetch_url`` runs unasked on these. Fed by the loop and the web
    tools; lives as long as the context, i.e. the session."""
    rules: ToolRules = field(default_factory=ToolRules)
    """The user's ``[[rules]]`` (allow / ask / deny by tool and host)."""
    ask: AskFn | None = None
    """Set per call by the loop: asks about a further step of this call that the policy could not see
    beforehand (``fetch_url`` redirected to another host), through the same approval path as the call.
    Returns ``None`` when allowed, else why not (for the model). ``None`` here: nobody can approve."""
    call_id: str = ""
    """The id of the call being run (set per call by the loop)."""
    sandboxed: bool = False
    """Run this call's command in the OS sandbox (``swebash_ai/sandbox``): set per call by the loop for every
    command the policy did not prove read-only, however it was allowed, unless ``unconfined``. ``exec_sandbox``
    decides what happens where no sandbox works (``auto``: runs unconfined and says so; ``all``: refused);
    ``exec_sandbox = "all"`` confines every command anyway."""
    can_ask: bool = False
    """A person can answer this call's further questions (the approver is interactive). Set per call by the
    loop; a question nobody can answer is not worth preparing (the sandbox's asking proxy)."""
    ask_user: Callable[[Any], Awaitable[Any]] | None = None
    """Puts a question to the user (see ``tools.ask``): the front end's asker, set per call by the loop from
    the approver; ``None`` when nobody can be asked."""
    processes: Any = None
    """The session's background processes (a :class:`~swebash_ai.tools.background.ProcessService`): they
    outlive a turn and end with the session. ``None``: nothing owns them, and background commands are refused."""
    on_event: Callable[[Any], None] | None = None
    """Set per call by the loop: puts an event in the turn's stream (the ``task`` tool nests its child's events
    under its call with it). ``None``: nothing listens."""


ToolFn = Callable[..., Awaitable[ToolResult | JSON]]
PolicyFn = Callable[[ToolContext, Any], Verdict]
DescribeFn = Callable[[Any], str]
SessionKeyFn = Callable[[ToolContext, Any], str | None]
PreviewFn = Callable[[ToolContext, Any], str | None]


class _ArgsBase(BaseModel):
    model_config = ConfigDict(extra="forbid")


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?):\s*$")
_PARAM = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {param: description})."""
    if not doc:
        return "", {}
    desc: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    base_indent: int | None = None
    current: str | None = None
    for line in inspect.cleandoc(doc).splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if indent == 0 and _SECTION.match(stripped):
            section, base_indent, current = stripped.rstrip(":").lower(), None, None
            continue
        if section is None:
            desc.append(line)
            continue
        if section not in ("args", "arguments", "parameters") or not stripped:
            continue
        if base_indent is None:
            base_indent = indent
        match = _PARAM.match(stripped)
        if indent <= base_indent and match:
            current = match.group(1).lstrip("*")
            params[current] = match.group(2).strip()
        elif current is not None:
            params[current] = (params[current] + " " + stripped).strip()
    return "\n".join(desc).strip(), params


def _strip_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


def _inline_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace ``$ref``s to ``$defs`` with the definitions themselves: some providers (and the text tool-call
    mode, which shows the schema to the model) do not follow references. Tool arguments are never recursive."""
    defs = schema.pop("$defs", None)
    if not defs:
        return schema

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return resolve({**defs[ref.removeprefix("#/$defs/")], **{k: v for k, v in node.items() if k != "$ref"}})
            return {k: resolve(v) for k, v in node.items()}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved


def signature_fingerprint(name: str, fn: Callable[..., Any]) -> str:
    """What a tool's schema is made of, as a short digest: its name, docstring, annotations and defaults.

    The generated schemas carry it, and one whose digest differs is ignored: editing a tool without
    regenerating costs start-up time, never a wrong schema. (A change made elsewhere, in a type alias the
    annotations name, is caught by the test that compares every generated schema with its model's.)
    """
    parts = (name, fn.__doc__, repr(fn.__annotations__), repr(fn.__defaults__), repr(fn.__kwdefaults__))
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def _cached_parameters(name: str, fn: Callable[..., Any]) -> dict[str, Any] | None:
    from swebash_ai.tools.schemas import SCHEMAS

    entry = SCHEMAS.get(name)
    if entry is None or entry["fingerprint"] != signature_fingerprint(name, fn):
        return None
    parameters: dict[str, Any] = copy.deepcopy(entry["parameters"])  # each tool owns its schema, as when built
    return parameters


class Tool:
    """A registered tool. Create with the :func:`tool` decorator."""

    def __init__(
        self,
        fn: ToolFn,
        *,
        category: Category,
        name: str | None = None,
        policy: PolicyFn | None = None,
        describe: DescribeFn | None = None,
        session_key: SessionKeyFn | None = None,
        preview: PreviewFn | None = None,
    ) -> None:
        self.fn = fn
        self._preview = preview
        self.name = name or fn.__name__
        self.category = category
        self._policy = policy
        self._describe = describe
        self._session_key = session_key
        self.description, self._param_docs = parse_docstring(fn.__doc__)
        self._args_model: type[BaseModel] | None = None
        cached = _cached_parameters(self.name, fn)
        # A built-in tool's schema is data generated from its model (tools/schemas.py), so a start pays for
        # no pydantic model: the model is built at the tool's first call. Any other tool, or one whose
        # signature or docstring changed since the data was generated, gets its schema from the model now.
        self.parameters: dict[str, Any] = cached if cached is not None else self.schema_from_model()

    @property
    def args_model(self) -> type[BaseModel]:
        """The pydantic model of the arguments, built from the signature at first use."""
        if self._args_model is None:
            self._args_model = self._build_model(self.fn, self._param_docs)
        return self._args_model

    @args_model.setter
    def args_model(self, model: type[BaseModel]) -> None:  # a tool whose model is not its signature's (MCP)
        self._args_model = model

    def schema_from_model(self) -> dict[str, Any]:
        """The JSON Schema of the arguments as the model sees it, built from the pydantic model."""
        schema: dict[str, Any] = _inline_defs(_strip_titles(self.args_model.model_json_schema()))
        schema.setdefault("properties", {})
        schema["additionalProperties"] = False
        return schema

    def _build_model(self, fn: ToolFn, param_docs: Mapping[str, str]) -> type[BaseModel]:
        sig = inspect.signature(fn)
        hints = get_type_hints(fn, include_extras=True)
        params = list(sig.parameters.values())
        if not params or params[0].name != "ctx":
            raise TypeError(f"tool {self.name}: the first parameter must be 'ctx: ToolContext'")
        fields: dict[str, Any] = {}
        for p in params[1:]:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"tool {self.name}: *args/**kwargs are not allowed")
            if p.name not in hints:
                raise TypeError(f"tool {self.name}: parameter {p.name!r} needs a type hint")
            default: Any = ... if p.default is p.empty else p.default
            info = FieldInfo.merge_field_infos(
                FieldInfo.from_annotated_attribute(hints[p.name], default),
                description=param_docs.get(p.name) or None,
            )
            fields[p.name] = (info.annotation, info)
        model: type[BaseModel] = create_model(f"{self.name}_args", __base__=_ArgsBase, **fields)
        return model

    # --- what the model sees --------------------------------------------------------------------------
    def definition(self) -> dict[str, Any]:
        """The OpenAI-format tool definition (litellm translates it for other providers).

        A copy: what is sent may be changed by whoever sends it (litellm strips ``additionalProperties`` in
        place for Gemini), and the tool's schema must stay as it is for the next request and provider.
        """
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description,
                         "parameters": copy.deepcopy(self.parameters)},
        }

    # --- per call -------------------------------------------------------------------------------------
    def parse_arguments(self, raw: str | Mapping[str, Any] | None) -> BaseModel | ToolResult:
        """Validate the model's arguments; an error result (for the model) when they are bad."""
        data = self.decode_arguments(raw)
        if isinstance(data, ToolResult):
            return data
        try:
            return self.args_model.model_validate(data)
        except ValidationError as exc:
            return ToolResult.error(self._explain(exc))

    def decode_arguments(self, raw: str | Mapping[str, Any] | None) -> dict[str, Any] | ToolResult:
        """The arguments as a JSON object (none: ``{}``), or an error result that says how to call the tool."""
        data: Any
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            data = {}
        elif isinstance(raw, str):
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                return ToolResult.error(
                    f"The arguments for {self.name} are not valid JSON ({exc.msg} at character {exc.pos}). "
                    f"Call it again with a JSON object: {self._signature_hint()}."
                )
        else:
            data = dict(raw)
        if not isinstance(data, dict):
            return ToolResult.error(
                f"The arguments for {self.name} must be a JSON object, not {type(data).__name__}. "
                f"Expected: {self._signature_hint()}."
            )
        return data

    def _signature_hint(self) -> str:
        props = self.parameters.get("properties", {})
        required = set(self.parameters.get("required", []))
        parts = []
        for pname, spec in props.items():
            kind = spec.get("type") or "/".join(
                str(s.get("type")) for s in spec.get("anyOf", []) if isinstance(s, dict)
            )
            parts.append(f"{pname}: {kind}{'' if pname in required else ' (optional)'}")
        return "{" + ", ".join(parts) + "}"

    def _explain(self, exc: ValidationError) -> str:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "arguments"
            if err["type"] == "missing":
                problems.append(f"missing required argument '{where}'")
            elif err["type"] == "extra_forbidden":
                accepted = ", ".join(self.parameters.get("properties", {})) or "none"
                problems.append(f"unknown argument '{where}' (accepted: {accepted})")
            else:
                problems.append(f"'{where}': {err['msg']} (got {err.get('input')!r})")
        return f"Invalid arguments for {self.name}: " + "; ".join(problems) + f". Expected: {self._signature_hint()}."

    def check(self, ctx: ToolContext, args: BaseModel) -> Verdict:
        """May this call run? A policy that raises is treated as ``ask``, never as allow."""
        if self._policy is None:
            return Verdict.allow(rule="tool.no_policy")
        try:
            return self._policy(ctx, args)
        except Exception as exc:  # a broken policy must fail closed
            return Verdict.ask(f"the safety check failed ({exc}); asking to be safe", rule="policy.error")

    def describe(self, args: BaseModel) -> str:
        """One line for a person: what this call will do."""
        if self._describe is not None:
            try:
                return self._describe(args)
            except Exception:  # noqa: S110 - fall back to the generic description
                pass
        shown = ", ".join(f"{k}={v!r}" for k, v in args.model_dump(exclude_defaults=True).items())
        return f"{self.name}({shown})"

    def preview(self, ctx: ToolContext, args: BaseModel) -> str | None:
        """What an approver shows in full (a diff for writes); ``None``: the arguments as JSON."""
        return self._preview(ctx, args) if self._preview is not None else None

    def session_key(self, ctx: ToolContext, args: BaseModel) -> str | None:
        """What "allow for this session" remembers; ``None``: this call can only be allowed once."""
        if self._session_key is not None:
            return self._session_key(ctx, args)
        return f"{self.name}:{args.model_dump_json()}"

    async def invoke(self, ctx: ToolContext, args: BaseModel) -> ToolResult:
        """Run the tool. Exceptions become error results; the duration is measured here."""
        start = time.monotonic()
        try:
            out = await self.fn(ctx, **{name: getattr(args, name) for name in type(args).model_fields})
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:
            log.debug("tool %s failed", self.name, exc_info=True)  # the traceback, for a debug log only
            result = ToolResult.error(f"{self.name} failed: {type(exc).__name__}: {exc}")
        else:
            result = out if isinstance(out, ToolResult) else ToolResult.success(out)
        return result.with_duration(time.monotonic() - start)


class LazyTool(Tool):
    """A built-in tool known from its generated data (``tools/schemas.py``): name, category, description and
    schema. Its module is imported when its code is first needed (a call's policy, validation or run), so a
    start, and an answer that calls no tool, imports no tool implementation."""

    _FROM_MODULE = ("fn", "_policy", "_describe", "_session_key", "_preview", "_param_docs")

    def __init__(self, module: str, name: str, category: Category, description: str,
                 parameters: Mapping[str, Any]) -> None:  # no super().__init__: that needs the function
        self._module = module
        self.name = name
        self.category = category
        self.description = description
        self.parameters = copy.deepcopy(dict(parameters))  # each tool owns its schema, as when built
        self._args_model = None

    def __getattr__(self, attr: str) -> Any:
        # Called only for attributes not set yet: the ones the tool's module defines.
        if attr not in LazyTool._FROM_MODULE:
            raise AttributeError(attr)
        tools = importlib.import_module(self._module).TOOLS
        real = next(t for t in tools if t.name == self.name)
        for name in LazyTool._FROM_MODULE:
            self.__dict__[name] = getattr(real, name)
        return self.__dict__[attr]


def tool(
    category: Category,
    *,
    name: str | None = None,
    policy: PolicyFn | None = None,
    describe: DescribeFn | None = None,
    session_key: SessionKeyFn | None = None,
    preview: PreviewFn | None = None,
) -> Callable[[ToolFn], Tool]:
    """Register an async function as a tool (see the module docstring)."""

    def wrap(fn: ToolFn) -> Tool:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"tool {fn.__name__} must be an async function")
        return Tool(
            fn,
            category=category,
            name=name,
            policy=policy,
            describe=describe,
            session_key=session_key,
            preview=preview,
        )

    return wrap


class ToolRegistry:
    """The tools offered to the model, by name, after the settings' filters."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)

    def add(self, t: Tool) -> None:
        if t.name in self._tools:
            raise ValueError(f"two tools are named {t.name!r}")
        self._tools[t.name] = t

    @classmethod
    def from_settings(cls, settings: Settings, tools: Sequence[Tool]) -> ToolRegistry:
        """Keep the tools whose category is enabled, that the allow list names (if any), and not denied.

        Raises:
            ConfigError: the allow or deny list names a tool that does not exist.
        """
        known = {t.name for t in tools}
        for setting in ("tools_allow", "tools_deny"):
            # MCP tools (mcp__server__tool) are known only once their servers start: not checked here.
            unknown = [n for n in getattr(settings, setting) if n not in known and not n.startswith("mcp__")]
            if unknown:
                raise ConfigError(
                    f"SWEBASH_AI_{setting.upper()} names unknown tool(s): {', '.join(unknown)}. "
                    f"Tools: {', '.join(sorted(known))}."
                )
        enabled = {"fs": settings.tools_fs, "exec": settings.tools_exec, "web": settings.tools_web,
                   "plan": settings.tools_plan, "ask": settings.tools_ask}
        allow = set(settings.tools_allow)
        deny = set(settings.tools_deny)
        return cls(
            t for t in tools if enabled.get(t.category, True) and (not allow or t.name in allow) and t.name not in deny
        )

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def definitions(self, *, copied: bool = True) -> list[dict[str, Any]]:
        """The tools' definitions; ``copied=False``: the tools' own schemas, to read and never change (a size
        measured before every turn need not copy 50 schemas)."""
        if copied:
            return [t.definition() for t in self._tools.values()]
        return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                  "parameters": t.parameters}} for t in self._tools.values()]

    def unknown_tool(self, name: str) -> ToolResult:
        available = ", ".join(self._tools) or "none (tools are disabled)"
        return ToolResult.error(f"Unknown tool '{name}'. Available tools: {available}.")

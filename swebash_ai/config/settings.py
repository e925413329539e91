"""Settings: one pydantic class, documented per field, built once at the composition root.

Sources, strongest first: command line > ``SWEBASH_AI_*`` environment variables > the selected profile
(``[profiles.NAME]`` in the config file) > the config file's top level > defaults. The profile is picked by
``--profile``, else ``SWEBASH_AI_PROFILE``, else the file's top-level ``profile`` key.

:func:`load_settings` layers the sources itself (a plain dict per source, the stronger one winning) and validates
once: every setting is a scalar or a comma list, so an environment variable is its field's raw text, as
pydantic-settings would pass it, without that library's import (30 ms of every start, for sources never used).

A bad value never surfaces as a traceback: :func:`load_settings` raises :class:`ConfigError` with one line
per problem naming the variable (or file key) as the user wrote it and what is allowed.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from swebash_ai.config.address import complete_base
from swebash_ai.config.file import ENV_PREFIX, StartInfo, read_config_file
from swebash_ai.config.rules import ToolRules, parse_rules
from swebash_ai.errors import ConfigError
from swebash_ai.storage.locations import Locations

if TYPE_CHECKING:  # their tables are read only when the file has them (see load_settings)
    from swebash_ai.config.hooks import Hook, TrustedProject
    from swebash_ai.config.mcp import McpServerConfig

Origin = Literal["default", "file", "profile", "env", "flag", "keyring"]

CommaList = list[str]
"""A list setting; from the environment (text) it is split at commas (``_split_commas``), never JSON."""


class Settings(BaseModel):
    """Every setting of swebash-ai. Environment variable: ``SWEBASH_AI_`` + the field name in capitals (any case).

    ``Settings(...)`` validates what it is given; :func:`load_settings` gathers the sources.
    """

    model_config = ConfigDict(
        extra="forbid",
        validate_default=True,
        # No use_attribute_docstrings: parsing this module's source at every start cost 18 ms of a one-shot
        # answer; the docstrings are read when asked, by field_doc().
    )

    # --- provider -------------------------------------------------------------------------------------
    model: str = ""
    """Model in litellm's ``provider/model`` form (``openai/gpt-4.1``, ``anthropic/claude-sonnet-4-5``,
    ``gemini/gemini-2.5-flash``, ``ollama_chat/llama3.1``). Empty: use the first provider key found in the
    environment, else a local Ollama server."""

    api_base: str | None = None
    """Base URL of the provider's API. Any OpenAI-compatible server (vLLM, LM Studio, llama.cpp, Ollama's
    ``/v1``, OpenRouter) works with an ``openai/`` model name or no prefix. Without a scheme, ``http://`` is
    added for this machine (``localhost:11434/v1``) and ``https://`` for any other host."""

    api_key: SecretStr | None = None
    """API key for the selected provider. Falls back to the provider's usual variable (``OPENAI_API_KEY``...)."""

    api_key_source: Literal["settings", "keyring"] = "settings"
    """Where the API key is: ``settings`` (``api_key`` or a provider variable), ``keyring`` (the OS keyring,
    service ``swebash-ai``, user the profile's name; read when the settings load). ``swebash-ai setup`` writes it."""

    request_timeout: float = Field(120.0, gt=0, le=3600)
    """Seconds to wait for the provider to start answering, and between two pieces of a streamed answer (a slow
    answer that keeps arriving is never cut), before giving up on a request (up to 3600)."""

    provider_retries: int = Field(3, ge=0, le=10)
    """Retries on rate limits, connection errors, timeouts and 5xx answers, with exponential backoff (0-10)."""

    retry_base_delay: float = Field(1.0, ge=0, le=60)
    """First backoff delay in seconds; doubles on every retry (0-60)."""

    context_tokens: int = Field(100_000, ge=1_000)
    """Token budget for the conversation sent to the model; older whole turns are dropped beyond it, and a turn
    longer than it alone has its oldest tool results cut from the request (never from the saved session)."""

    tool_calling: Literal["auto", "native", "text"] = "auto"
    """How the model calls tools: ``native`` (the API's tool calls), ``text`` (tools described in the prompt and
    JSON calls parsed from the reply, for models without tool support), ``auto`` (native; falls back to text
    when the server refuses tools, and recovers calls a model printed as JSON)."""

    system_prompt: str | None = None
    """Replaces the built-in system prompt."""

    project_instructions: bool = True
    """Put ``AGENTS.md`` files in the system prompt: a personal one in the config directory, then those from the
    repository root down to the working directory (the nearest wins). See docs/memory.md."""

    instructions_max_chars: int = Field(32_000, ge=1_000)
    """Size cap for all instruction files together; farther files are cut first, with a warning."""

    auto_compact: bool = True
    """When the conversation nears ``context_tokens``, replace older turns with a summary the model writes (the
    recent turns stay verbatim); off, older turns are only left out of requests. See docs/memory.md."""

    # --- tools ----------------------------------------------------------------------------------------
    tools_fs: bool = True
    """Offer the filesystem tools (read, list, exists, metadata, search; write and edit with approval)."""

    tools_exec: bool = True
    """Offer the command-execution tool."""

    tools_web: bool = True
    """Offer the web-search and fetch tools."""

    tools_plan: bool = True
    """Offer ``update_plan``: the model keeps a checklist of a multi-step task that you see live."""

    tools_ask: bool = True
    """Offer ``ask_user``: the model may ask you a question (with options) and wait for the answer; nobody at a
    terminal means it is told at once that no one can answer."""

    tools_confirm: bool = True
    """Ask before anything a policy flags. ``false`` runs flagged calls without asking, but never what the
    policy always denies."""

    approval_mode: Literal["ask", "accept-edits", "auto", "plan"] = "ask"
    """How much runs without a question. ``ask``: what the policy flags asks. ``accept-edits``: writes and
    edits inside the workspace apply without asking (diff shown, undo works); commands unchanged. ``auto``:
    as accept-edits, and commands the policy would ask about run without a question inside the sandbox
    (snapshotted first, so undo reverts them); needs a sandbox backend.
    ``plan``: read-only: writes and every command not proven read-only are refused, even with ``--yes``.
    What the policy always denies never runs in any mode. See docs/approvals.md."""

    # --- budgets of a turn and the loop detector (see docs/configuration.md "When a turn stops") ----------
    tools_max_iter: int = Field(300, ge=1, le=10_000)
    """Model requests with tool calls allowed in one turn (1-10000): a ceiling for a runaway, not a budget for
    work (the loop detector stops a model that repeats itself). At the ceiling the model is asked for a last
    answer without tools."""

    max_tool_calls_per_turn: int = Field(0, ge=0, le=100_000)
    """Tool calls allowed in one turn; 0 (the default): no count, the other bounds apply."""

    max_turn_tokens: int | None = Field(None, ge=1_000)
    """Tokens (prompt + completion of every request, each resending the conversation) after which a turn stops,
    checked between two requests; unset: no budget."""

    max_turn_cost: float | None = Field(None, gt=0)
    """US dollars after which a turn stops, checked between two requests, where the price of the model is known
    (litellm's price list, or the provider's own figure); unset: no budget."""

    loop_repeats: int = Field(5, ge=0, le=1_000)
    """The loop detector: a turn stops when the model makes the same call with the same arguments this many
    times in a row with the same result (a file that changed in between is a new result), the same call fails
    3 times in a row, its texts go round a cycle twice this many times, or one answer keeps repeating a
    phrase. 0 turns it off; the lowest window is 2."""

    @field_validator("loop_repeats")
    @classmethod
    def _a_window(cls, value: int) -> int:
        if value == 1:
            raise PydanticCustomError("loop_repeats", "loop_repeats is 0 (off) or at least 2: 1 would stop every call")
        return value

    tools_parallel: int = Field(4, ge=1, le=32)
    """Tool calls from one response that run at the same time (1-32)."""

    tools_early: bool = True
    """Start a tool call the policy allows outright as soon as the model has finished writing it, while the
    rest of the response still streams. Calls that need approval always wait for the end of the response."""

    tools_allow: CommaList = Field(default_factory=list)
    """Comma-separated tool names; when set, only these tools are offered."""

    tools_deny: CommaList = Field(default_factory=list)
    """Comma-separated tool names never offered to the model."""

    # --- subagents (docs/agents.md) ---------------------------------------------------------------------
    subagents: bool = True
    """Offer the ``task`` tool: the model hands a side task to a helper agent with a fresh context (built-in
    ``explore`` and ``general``, or an agent file). A helper never has more tools, mode or approvals than the
    main assistant. Not offered when ``tools_allow`` is set."""

    subagents_max_depth: int = Field(1, ge=1, le=3)
    """How deep helpers may nest (1-3). 1: a helper starts no helper of its own."""

    subagent_max_iterations: int = Field(15, ge=1, le=100)
    """Model round trips with tool calls a helper may make, unless its agent file sets ``max_turns`` (1-100)."""

    subagent_max_tokens: int = Field(400_000, ge=1_000, le=10_000_000)
    """Tokens (prompt + completion, over all its requests) a helper may spend before it is stopped."""

    subagent_result_chars: int = Field(12_000, ge=500, le=200_000)
    """Characters of a helper's final answer the main conversation receives; a longer answer keeps its
    beginning and end."""

    # --- filesystem -----------------------------------------------------------------------------------
    fs_max_size: int = Field(1_048_576, ge=1, le=100 * 1024 * 1024)
    """Largest file, in bytes, a tool reads or writes (1 B - 100 MiB)."""

    workspace_roots: CommaList = Field(default_factory=list)
    """Comma-separated directories the tools may use without asking. Empty: the working directory."""

    path_deny: CommaList = Field(default_factory=list)
    """Comma-separated extra paths (``~/private``) or name globs (``*.sqlite``) that are always denied."""

    # --- commands -------------------------------------------------------------------------------------
    exec_timeout: int = Field(30, ge=1, le=300)
    """Default command timeout in seconds (1-300); the model may ask for up to 300."""

    exec_max_output: int = Field(100_000, ge=1_000, le=10_000_000)
    """Bytes of command output kept (head and tail); the rest is cut with a note."""

    background_max_running: int = Field(8, ge=1, le=64)
    """Background processes (``run_command(background=true)``) that may run at once (1-64); past it the model is
    told to stop one first."""

    background_buffer_bytes: int = Field(32_768, ge=1_024, le=10_000_000)
    """Bytes of output kept per background process between two reads (the latest); older output is dropped
    and the next read says how much."""

    # --- language servers (docs/tools.md "Diagnostics"; the servers are [lsp.NAME] tables) -----------------
    lsp_diagnostics: Literal["edit", "turn", "off"] = "edit"
    """When the language server of an edited file reports: ``edit`` (each ``write_file``/``edit_file`` result
    carries the file's new errors), ``turn`` (the servers get every change, and the files changed are reported
    at the end of the turn), ``off`` (no language server is started)."""

    lsp_wait: float = Field(5.0, ge=0.5, le=60)
    """Seconds an edit waits for its file's diagnostics (0.5-60); past it the result says the server timed out."""

    lsp_settle: float = Field(0.15, ge=0.0, le=5)
    """Seconds without a newer publication after which a file's diagnostics are taken as settled (0-5)."""

    lsp_idle_stop: float = Field(600.0, ge=0, le=86_400)
    """Seconds a language server may sit unused before it is stopped (0: only at the session's end)."""

    exec_sandbox: Literal["auto", "all", "none", "bwrap"] = "auto"
    """Which commands run in the OS sandbox (writable workspace and /tmp, read-only elsewhere, secrets hidden, no
    network; docs/safety.md). ``auto``: every command the policy could not prove read-only that runs without
    your yes to that very call (allowed by a rule, a hook, ``--yes``, auto mode, a session approval); where no
    sandbox works here they run unconfined, and each result says so. ``all``:
    every command, and none runs where no sandbox works. ``none``: no command (auto mode is refused).
    ``bwrap`` is the old spelling of ``all`` with ``sandbox_backend = "bwrap"``."""

    exec_sandbox_network: bool = False
    """Let sandboxed commands use the whole network (default: none, and ``sandbox_allow_hosts`` for the proxy)."""

    sandbox_backend: Literal["auto", "bwrap", "landlock", "seatbelt"] = "auto"
    """What confines sandboxed commands: ``auto`` (bubblewrap, else Landlock, on Linux; Seatbelt on macOS), or
    one of them. When it cannot work here, such commands are refused, never run unconfined. ``[sandbox]
    backend`` in the config file."""

    sandbox_allow_hosts: CommaList = Field(default_factory=list)
    """Hosts sandboxed commands may reach through swebash-ai's proxy (``pypi.org,github.com``); empty: none.
    ``[sandbox] allow_hosts`` in the config file."""

    # --- the sandbox's view (docs/safety.md, "What a sandboxed command sees") --------------------------------
    sandbox_read: CommaList = Field(default_factory=list)
    """More folders a sandboxed command may read (``~/.config/mytool``), on top of the system, the workspace and
    the toolchain folders of home (``swebash-ai sandbox --show`` lists them). ``[sandbox] read``."""

    sandbox_write: CommaList = Field(default_factory=list)
    """More folders a sandboxed command may write (what it writes there stays: they are outside undo).
    ``[sandbox] write``."""

    sandbox_env_pass: CommaList = Field(default_factory=list)
    """More environment variables a sandboxed command gets, on top of the table of ``PATH``, ``HOME``, locale and
    toolchain variables; a value the secret scan flags is dropped all the same. ``[sandbox] env_pass``."""

    command_snapshots: bool = True
    """Before an approved command runs, snapshot the workspace into a git repository of swebash-ai's own in the
    sessions folder (``.gitignore`` respected), so undo can revert what the command changed. See docs/undo.md."""

    command_snapshot_max_files: int = Field(20_000, ge=1)
    """A workspace with more files than this is not snapshotted (undo then says the command cannot be undone)."""

    command_snapshot_max_mb: int = Field(200, ge=1)
    """Nor one that holds more than this many MiB."""

    # --- web ------------------------------------------------------------------------------------------
    web_provider: Literal["duckduckgo"] = "duckduckgo"
    """Web search backend."""

    web_timeout: float = Field(15.0, gt=0, le=120)
    """Seconds before a web search or fetch gives up."""

    web_min_interval: float = Field(1.0, ge=0, le=60)
    """Minimum seconds between two web searches (be polite, avoid bans)."""

    web_allow_private: bool = False
    """Let ``fetch_url`` reach loopback and private network addresses."""

    # --- front ends -----------------------------------------------------------------------------------
    theme: str = "dark"
    """TUI theme: a name from ``themes/`` or the user themes directory."""

    audit: bool = True
    """Write one line per tool call to the audit log (arguments redacted), and one per turn to ``turns.jsonl``
    (request latencies, tokens, rounds): ``swebash-ai stats`` reads both."""
    telemetry: Literal["off", "otlp"] = "off"
    """``otlp``: export traces and metrics over OTLP/HTTP to ``OTEL_EXPORTER_OTLP_ENDPOINT`` (needs the
    ``telemetry`` extra). Never exported: prompts, file contents, command output. See docs/observability.md."""
    telemetry_log_commands: bool = False
    """With telemetry on, add the command line (redacted like the audit log) to each ``run_command`` span."""

    # --- the editor door (swebash-ai acp) ----------------------------------------------------------------
    acp_permission_timeout: float = Field(600.0, ge=1, le=86_400)
    """Seconds a permission request or question in the editor waits for an answer; then it is refused, and the
    editor is told (1 s - 1 day)."""

    acp_mcp_startup_timeout: float = Field(20.0, gt=0, le=600)
    """Seconds an MCP server the editor names may take to start and list its tools (a server of your own has
    its ``startup_timeout``); one that takes longer is reported and left out of the session."""

    acp_message_limit_mb: int = Field(50, ge=1, le=1024)
    """Largest message, in MiB, the editor may send (a prompt may embed whole files); a longer one is refused
    with a JSON-RPC error and never held in memory whole."""

    @field_validator("tools_allow", "tools_deny", "workspace_roots", "path_deny", "sandbox_allow_hosts",
                     "sandbox_read", "sandbox_write", "sandbox_env_pass", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("model")
    @classmethod
    def _strip_model(cls, value: str) -> str:
        return value.strip()

    @field_validator("api_base")
    @classmethod
    def _complete_base(cls, value: str | None) -> str | None:
        # The setup's rule (config/address.py): a guessed scheme is never http:// to another machine.
        if value is None or not value.strip():
            return value and ""  # empty (or blank) is unset, as it always was
        try:
            return complete_base(value)[0]
        except ConfigError as exc:
            raise PydanticCustomError("address", exc.message) from None



@dataclass(frozen=True)
class LoadedSettings:
    """Settings plus where each value came from (for ``swebash-ai config``)."""

    settings: Settings
    origins: dict[str, Origin]
    profile: str | None
    profiles: list[str]
    locations: Locations
    mcp_servers: dict[str, McpServerConfig] = field(default_factory=dict)
    """``[mcp_servers.NAME]`` tables (file, then profile), validated; see docs/mcp.md."""
    rules: ToolRules = field(default_factory=ToolRules)
    """``[[rules]]`` tables (file and profile): the user's allow/ask/deny decisions; see config/rules.py."""
    hooks: tuple[Hook, ...] = ()
    """``[[hooks]]`` tables (file, then profile); see config/hooks.py."""
    trusted_projects: tuple[TrustedProject, ...] = ()
    """Project rule files the user trusted, by path and hash (``swebash-ai trust``)."""
    lsp: dict[str, dict[str, Any]] = field(default_factory=dict)
    """``[lsp.NAME]`` tables (file, then profile): language servers added, changed or turned off; see config/lsp.py."""

    @property
    def config_file(self) -> Path:
        return self.locations.config_file

    def source_of(self, name: str) -> str:
        """Where setting ``name`` came from, as ``config`` shows it: ``env SWEBASH_AI_MODEL``, ``flag``..."""
        origin = self.origins.get(name, "default")
        if origin == "env":
            return f"env {env_name(name)}"
        if origin == "profile":
            return f"profile [profiles.{self.profile}]"
        return {"keyring": "OS keyring"}.get(origin, origin)  # flag, file, default

    @property
    def model_from(self) -> str:
        """Why the model setting is what it is, for a provider choice's reason (``doctor``, ``/model``)."""
        return {"flag": "--model (or /model in the app)", "file": f"the config file {self.config_file}"}.get(
            self.origins.get("model", "default"), self.source_of("model"))

    @property
    def start_info(self) -> StartInfo:
        """What the interactive app shows before its session is built."""
        return StartInfo(self.locations, self.settings.theme, self.settings.model, self.profile,
                         self.settings.approval_mode)


def field_doc(name: str) -> str:
    """The docstring under a setting's field in :class:`Settings` ("" when the source cannot be read)."""
    return _field_docs().get(name, "")


@functools.cache
def _field_docs() -> dict[str, str]:
    import ast
    import inspect

    try:
        tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    docs: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == Settings.__name__:
            for field_node, doc in zip(node.body, node.body[1:], strict=False):
                if (isinstance(field_node, ast.AnnAssign) and isinstance(field_node.target, ast.Name)
                        and isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
                        and isinstance(doc.value.value, str)):
                    docs[field_node.target.id] = inspect.cleandoc(doc.value.value)
    return docs


def env_name(field_name: str) -> str:
    return ENV_PREFIX + field_name.upper()


def _check_keys(table: Mapping[str, Any], where: str) -> None:
    unknown = sorted(k for k in table if k not in Settings.model_fields)
    if unknown:
        raise ConfigError(
            f"{where}: unknown setting{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}.",
            hint="See `swebash-ai config` or docs/configuration.md for the settings there are.",
        )


def _sandbox_table(table: Any, where: str) -> dict[str, Any]:
    """``[sandbox]`` keys as the ``sandbox_*`` settings they are (``allow_hosts`` -> ``sandbox_allow_hosts``)."""
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: [sandbox] must be a table (allow_hosts = [...], backend = \"auto\").")
    return {f"sandbox_{key}": value for key, value in table.items()}


def load_settings(
    flags: Mapping[str, Any] | None = None,
    *,
    profile: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> LoadedSettings:
    """Build the settings from every source.

    Args:
        flags: Values given on the command line (field name -> value); ``None`` values are ignored.
        profile: Profile named on the command line (``--profile``); overrides ``SWEBASH_AI_PROFILE``.
        environ: The environment to read (``os.environ`` by default).

    Raises:
        ConfigError: a bad value, an unknown key or profile, an unreadable config file.
    """
    env = dict(os.environ if environ is None else environ)
    config = read_config_file(profile, env)
    locs, raw, chosen, profile_table = config.locations, config.top, config.profile, config.profile_table
    # MCP server and rule tables are not settings: validated apart, kept on LoadedSettings (see config/mcp.py).
    raw, profile_table = dict(raw), dict(profile_table)
    where = str(locs.config_file)
    mcp_servers: dict[str, McpServerConfig] = {}
    if "mcp_servers" in raw or "mcp_servers" in profile_table:
        from swebash_ai.config.mcp import parse_mcp_servers

        mcp_servers = parse_mcp_servers(raw.pop("mcp_servers", None), profile_table.pop("mcp_servers", None),
                                        where, chosen)
    rules = parse_rules(raw.pop("rules", None), profile_table.pop("rules", None), where, chosen)
    hooks: tuple[Hook, ...] = ()
    trusted: tuple[TrustedProject, ...] = ()
    if {"hooks", "trusted_projects"} & (raw.keys() | profile_table.keys()):
        from swebash_ai.config.hooks import parse_hooks, parse_trusted

        hooks = parse_hooks(raw.pop("hooks", None), where, "[[hooks]]", "config") + parse_hooks(
            profile_table.pop("hooks", None), where, f"[[profiles.{chosen}.hooks]]", f"profile.{chosen}")
        trusted = parse_trusted(raw.pop("trusted_projects", None), where)
    lsp: dict[str, dict[str, Any]] = {}
    if "lsp" in raw or "lsp" in profile_table:
        from swebash_ai.config.lsp import parse_lsp_tables

        lsp = parse_lsp_tables(raw.pop("lsp", None), where)
        lsp.update(parse_lsp_tables(profile_table.pop("lsp", None), f"[profiles.{chosen}] in {where}"))
    raw.update(_sandbox_table(raw.pop("sandbox", None), where))
    profile_table.update(_sandbox_table(profile_table.pop("sandbox", None), f"[profiles.{chosen}] in {where}"))
    _check_keys(raw, str(locs.config_file))
    if chosen:
        _check_keys(profile_table, f"[profiles.{chosen}] in {locs.config_file}")

    cli = {k: v for k, v in (flags or {}).items() if v is not None}
    upper_env = {k.upper(): v for k, v in env.items()}  # names in any case, as a user may write them
    from_env = {name: upper_env[env_name(name)] for name in Settings.model_fields if env_name(name) in upper_env}
    origins: dict[str, Origin] = {}
    for name in Settings.model_fields:
        if name in cli:
            origins[name] = "flag"
        elif name in from_env:
            origins[name] = "env"
        elif name in profile_table:
            origins[name] = "profile"
        elif name in raw:
            origins[name] = "file"
        else:
            origins[name] = "default"

    try:
        # Weakest first: the file's top level, its profile, the environment, the command line.
        settings = Settings(**{**raw, **profile_table, **from_env, **cli})
    except ValidationError as exc:
        raise ConfigError(_explain(exc, origins, env, chosen, locs.config_file)) from None
    if settings.api_key is None and settings.api_key_source == "keyring":
        settings = settings.model_copy(update={"api_key": SecretStr(_keyring_key(chosen, locs.config_file))})
        origins["api_key"] = "keyring"
    return LoadedSettings(settings, origins, chosen, sorted(config.profiles), locs, mcp_servers, rules, hooks,
                          trusted, lsp)


def _keyring_key(profile: str | None, path: Path) -> str:
    """The profile's key from the OS keyring (keyring is imported only here: few profiles need it)."""
    from swebash_ai.config.credentials import KeyringUnavailable, read_key

    try:
        return read_key(profile or "default")
    except KeyringUnavailable as exc:
        where = f"[profiles.{profile}]" if profile else "the config file"
        raise ConfigError(f"The API key of {where} is in the OS keyring, but {exc}.",
                          hint=f"Run `swebash-ai setup` again, or put api_key in {where} of {path}.") from None


def _explain(
    exc: ValidationError, origins: Mapping[str, Origin], env: Mapping[str, str], profile: str | None, path: Path
) -> str:
    lines = []
    upper_env = {k.upper(): v for k, v in env.items()}
    for err in exc.errors():
        name = str(err["loc"][0]) if err["loc"] else "?"
        origin = origins.get(name, "default")
        if origin == "env":
            where = f"{env_name(name)}={upper_env.get(env_name(name), '')!r}"
        elif origin == "flag":
            where = f"--{name.replace('_', '-')}"
        elif origin == "profile":
            where = f"'{name}' in [profiles.{profile}] of {path}"
        elif origin == "file":
            where = f"'{name}' in {path}"
        else:
            where = name
        doc = field_doc(name).split("\n")[0]
        msg = err["msg"].rstrip(".")
        lines.append(f"{where}: {msg}." + (f" ({doc})" if doc else ""))
    return "Invalid setting" + ("s" if len(lines) > 1 else "") + ":\n  " + "\n  ".join(lines)


def mask_secret(raw: str) -> str:
    """A key as ``swebash-ai config`` shows it: its last four characters, and only for a key long enough that
    they give nothing away."""
    return "****" + raw[-4:] if len(raw) > 8 else "****"


def describe_value(settings: Settings, name: str) -> str:
    """A setting's value for display; secrets masked."""
    value = getattr(settings, name)
    if isinstance(value, SecretStr):
        return mask_secret(value.get_secret_value())
    if isinstance(value, list):
        return ",".join(value)
    if value is None:
        return ""
    return str(value).lower() if isinstance(value, bool) else str(value)


def settings_reference_markdown() -> str:
    """The settings table for docs/configuration.md, generated from the field docstrings."""
    out = [
        "| Environment variable | Default | Meaning |",
        "| --- | --- | --- |",
    ]
    defaults = Settings.model_construct()
    for name in Settings.model_fields:
        doc = " ".join(field_doc(name).split())
        default = describe_value(defaults, name) if name != "api_key" else ""
        out.append(f"| `{env_name(name)}` | `{default}` | {doc} |" if default else f"| `{env_name(name)}` | | {doc} |")
    return "\n".join(out) + "\n"

"""``swebash-ai doctor``: check what a first run needs, and say what to fix.

Checks, in order (later ones are skipped when an earlier one makes them meaningless):

1. the settings load (config file, profile, environment);
2. a provider is chosen and has a key (local servers need none);
3. the server answers (``GET {api_base}/models`` for OpenAI-compatible endpoints, short timeout);
4. the model can call tools (a tiny request offering one tool, or litellm's ``supports_function_calling``
   for litellm models, which never sends a request);
5. the sandbox: which backend works here (``sandbox_backend``), proved by a self-test (a write outside the
   workspace refused, a hidden file unreadable, no network), and how commands are contained
   (a subreaper on Linux; process groups and a marker elsewhere: docs/safety.md "Processes");
6. the bash grammar (tree-sitter-bash) loads: the command policy needs it;
7. undo snapshots of approved commands: git on PATH, and the folder they cover here;
8. the tools: each category (shell, files, search, find, process, plan, ask, web, MCP) with the tools that
   cover it, and whether it is offered in this configuration (and if not, which setting keeps it out);
9. private storage: nothing in the data, state and config folders is readable by other accounts, and the
   snapshot store holds no protected file (``.env``, keys: by name and ``path_deny`` globs);
10. each configured MCP server starts and lists its tools.

Each check prints one line: ``✓`` fine, ``!`` works with a caveat, ``✗`` broken, followed by what to do.
Exit 0 when nothing is broken, else 1.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from swebash_ai.config.address import env_base, is_loopback_url
from swebash_ai.errors import ConfigError
from swebash_ai.safety.terminal_text import safe
from swebash_ai.words import count

if TYPE_CHECKING:
    from swebash_ai.config.settings import LoadedSettings
    from swebash_ai.providers import ProviderChoice

Status = Literal["ok", "warn", "fail", "skip"]

_MARKS = {"ok": "✓", "warn": "!", "fail": "✗", "skip": "-"}

#: Provider prefixes that need no key (local servers).
_KEYLESS = ("ollama/", "ollama_chat/", "lm_studio/", "hosted_vllm/", "llamafile/")

#: Prefix -> the provider's usual key variable (for the "key present" check of litellm models).
_KEY_VARS = {
    "openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY", "groq": "GROQ_API_KEY", "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY", "xai": "XAI_API_KEY", "cohere": "COHERE_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY", "fireworks_ai": "FIREWORKS_AI_API_KEY",
}

_PING_TOOL = {
    "type": "function",
    "function": {
        "name": "ping",
        "description": "Answer a ping. Call it when asked to.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    },
}


@dataclass(frozen=True)
class Check:
    """The outcome of one check: what was checked, how it went, and what to do about it."""

    name: str
    status: Status
    detail: str
    fix: str = ""

    def line(self) -> str:
        text = f"{_MARKS[self.status]} {self.name}: {self.detail}"
        return text + (f"\n    → {self.fix}" if self.fix else "")


def run_doctor(
    flags: Mapping[str, Any] | None = None,
    *,
    profile: str | None = None,
    out: TextIO | None = None,
    timeout: float = 5.0,
) -> int:
    """Run every check, print one line each, return 0 when nothing is broken, else 1."""
    out = out or sys.stdout
    failed = False
    for check in checks(flags, profile=profile, timeout=timeout):
        print(safe(check.line(), visible=True), file=out, flush=True)  # a server's or an MCP server's words
        failed = failed or check.status == "fail"
    return 1 if failed else 0


def checks(flags: Mapping[str, Any] | None = None, *, profile: str | None = None, timeout: float = 5.0) -> list[Check]:
    """All the checks (see the module docstring)."""
    from swebash_ai.config.settings import load_settings

    try:
        loaded = load_settings(flags, profile=profile)
    except ConfigError as exc:
        return [Check("settings", "fail", exc.message, exc.hint or "Fix the setting named above.")]
    out = [Check("settings", "ok", f"loaded (config file {loaded.config_file}"
                 + ("" if loaded.config_file.exists() else ", not present") + ")")]
    provider_checks = _provider_checks(loaded, timeout)
    out.extend(provider_checks)
    out.append(_sandbox_check(loaded))
    out.append(_containment_check())
    out.append(_parser_check())
    out.append(_snapshot_check(loaded))
    out.extend(_toolset_checks(loaded))
    out.extend(_storage_checks(loaded))
    out.extend(_mcp_checks(loaded))
    out.append(_lsp_check(loaded))
    return out


def _lsp_check(loaded: LoadedSettings) -> Check:
    """Which language server each language would use here (found on PATH, or in ./.venv/bin, ./node_modules/.bin),
    and where they run; nothing is started."""
    from pathlib import Path

    from swebash_ai.lsp.servers import choose, merge_servers

    if loaded.settings.lsp_diagnostics == "off":
        return Check("language servers", "ok", "off (lsp_diagnostics = \"off\")")
    servers = merge_servers(loaded.lsp)
    cwd = Path.cwd()
    found: list[str] = []
    missing: list[str] = []
    for language in dict.fromkeys(s.languages[0] for s in servers if s.enabled):
        sample = next(s for s in servers if s.enabled and s.languages[0] == language).extensions
        spec, _root, program, _looked = choose(cwd / f"x{sample[0] if sample else ''}", servers, cwd)
        (found if spec is not None else missing).append(f"{language}: {spec.name} ({program})" if spec else language)
    from swebash_ai.sandbox import detect
    from swebash_ai.sandbox.confine import backend_setting

    backend = detect.choose(backend_setting(loaded.settings)).backend
    where = ("unconfined (exec_sandbox = none)" if loaded.settings.exec_sandbox == "none" else
             f"in the sandbox ({backend}), workspace read-only" if backend else "unconfined: no sandbox works here")
    detail = (("; ".join(found) if found else "none found") + f"; run {where}, started at the first edit of a file "
              f"of their language" + (f"; none for {', '.join(missing)}" if missing else ""))
    fix = "" if any(f.startswith("python:") for f in found) else \
        "pip install 'swebash-ai[lsp]' brings ty, a Python language server (docs/tools.md \"Diagnostics\")."
    return Check("language servers", "ok" if found else "warn", detail, fix)


def _snapshot_check(loaded: LoadedSettings) -> Check:
    """Can undo revert approved commands here? (docs/undo.md)"""
    from swebash_ai.tools.snapshots import project_root

    settings = loaded.settings
    if not settings.command_snapshots:
        return Check("undo snapshots", "ok", "off (command_snapshots = false): undo reverts file writes only")
    if shutil.which("git") is None:
        return Check("undo snapshots", "warn", "git is not on PATH: undo cannot revert approved commands",
                     "Install git to let /undo revert what approved commands change.")
    root = project_root(Path.cwd())
    return Check("undo snapshots", "ok", f"git found; commands run here are snapshotted in {root} (up to "
                 f"{settings.command_snapshot_max_files:,} files, {settings.command_snapshot_max_mb} MiB)")


def _toolset_checks(loaded: LoadedSettings) -> list[Check]:
    """One line per tool category: its tools, offered or not here, and why not."""
    from swebash_ai.tools import builtin_tools
    from swebash_ai.tools.coverage import coverage

    servers = [name for name, server in loaded.mcp_servers.items() if server.enabled]
    out = []
    for cat in coverage(loaded.settings, builtin_tools(), servers):
        parts = [", ".join(cat.offered)] if cat.offered else []
        reasons: dict[str, list[str]] = {}
        for tool, why in cat.held_back:
            reasons.setdefault(why, []).append(tool)
        parts += [f"{'not offered' if cat.offered else 'off'}: {', '.join(names)} ({why})"
                  for why, names in reasons.items()]
        if cat.note:
            parts.append(cat.note)
        status: Status = "ok" if cat.enabled else "skip"
        out.append(Check(f"tools: {cat.name}", status, "; ".join(parts) or "none"))
    return out


def _storage_checks(loaded: LoadedSettings) -> list[Check]:
    """Is what swebash-ai stores readable by its user alone, and free of protected files? (docs/safety.md)"""
    from swebash_ai.errors import ToolError
    from swebash_ai.safety.paths import PathPolicy
    from swebash_ai.storage.private_files import app_folders, exposed
    from swebash_ai.tools.snapshots import stored_names

    where = loaded.locations
    found = exposed(app_folders(where))
    if found:
        shown = ", ".join(str(p) for p in found[:3]) + (" ..." if len(found) > 3 else "")
        private = Check("private storage", "warn", f"readable by other accounts: {shown}",
                        "Run: chmod -R go-rwx " + " ".join(dict.fromkeys(str(f) for f in app_folders(where))))
    else:
        private = Check("private storage", "ok", "the data, state and config folders are readable by you alone")
    store = where.sessions_dir / "snapshots.git"
    try:
        names = stored_names(store)
    except (ToolError, OSError, ValueError) as exc:
        return [private, Check("snapshot store", "warn", f"cannot be read: {exc}")]
    policy = PathPolicy(extra_deny=loaded.settings.path_deny)
    secret = sorted(n for n in names if policy.denied_reason(Path(n)) is not None)
    if secret:
        return [private, Check("snapshot store", "warn", f"holds protected files: {', '.join(secret[:5])}",
                               f"Delete {store} (undo loses the snapshots of earlier commands).")]
    return [private, Check("snapshot store", "ok", "holds no protected file" if names else "empty")]


def _mcp_checks(loaded: LoadedSettings) -> list[Check]:
    """Start each configured MCP server as a session would, then stop it (nothing imported when none)."""
    if not loaded.mcp_servers:
        return []
    import asyncio

    from swebash_ai.commands.mcp import check_servers

    fix = "Fix its [mcp_servers.NAME] table (see docs/mcp.md), or set enabled = false."
    return [
        Check("MCP server", "ok" if ok else "fail", f"{line}" + (f", {count(len(tools), 'tool')}" if tools else ""),
              "" if ok else fix)
        for ok, line, tools in asyncio.run(check_servers(loaded))
    ]


def _provider_checks(loaded: LoadedSettings, timeout: float) -> list[Check]:
    from swebash_ai.providers import NO_PROVIDER_HELP, choose_provider

    choice = choose_provider(loaded.settings, model_from=loaded.model_from)
    if choice is None:
        return [Check("provider", "fail", "none configured", NO_PROVIDER_HELP.strip().replace("\n", "\n      "))]
    via = "litellm" if choice.via_litellm else "the OpenAI-compatible client"
    found = [Check("provider", "ok", f"{choice.model} via {via}" + (f" at {choice.api_base}" if choice.api_base
                                                                     else "") + f" (because {choice.reason})")]
    from swebash_ai.commands.config_show import provider_route

    route = provider_route(loaded, choice)
    off = route.ca_bundle.value.endswith("OFF")
    found.append(Check("route", "warn" if off else "ok",
                       "; ".join(f"{name} {o.value} ({o.source})" for name, o in
                                 (("address", route.address), ("proxy", route.proxy), ("CA", route.ca_bundle))),
                       "Certificate checks are off: anyone on the network path can read your prompts and key."
                       if off else ""))
    key = _key_check(choice)
    found.append(key)
    if key.status == "fail":
        return found
    reach = _reachability_check(choice, timeout)
    found.append(reach)
    if reach.status == "fail":
        return found
    found.append(_tools_check(choice, loaded, timeout))
    return found


def _key_check(choice: ProviderChoice) -> Check:
    if choice.api_key:
        return Check("API key", "ok", "present (****" + choice.api_key[-4:] + ")" if len(choice.api_key) > 8
                     else "present")
    if choice.model.startswith(_KEYLESS) or (choice.api_base and is_loopback_url(choice.api_base)):
        return Check("API key", "ok", "not needed for a local server")
    prefix = choice.model.split("/", 1)[0] if "/" in choice.model else "openai"
    var = _KEY_VARS.get(prefix)
    if var is None:
        return Check("API key", "warn", f"none set for {choice.model}",
                     "If the provider needs one, set SWEBASH_AI_API_KEY (or the provider's own variable).")
    return Check("API key", "fail", f"missing for {choice.model}", f"Set {var} or SWEBASH_AI_API_KEY.")


def _reachability_check(choice: ProviderChoice, timeout: float) -> Check:
    if choice.via_litellm:
        return Check("server", "skip", f"not probed for litellm models ({choice.model}); the tool check talks to it")
    try:  # where the OpenAI-compatible lane sends requests (providers/http_provider.py)
        base = (choice.api_base or env_base("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
    except ConfigError as exc:
        return Check("server", "fail", exc.message, exc.hint or "")
    request = urllib.request.Request(base + "/models")  # noqa: S310 - the user's configured endpoint
    if choice.api_key:
        request.add_header("Authorization", f"Bearer {choice.api_key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:  # noqa: S310
            body = json.load(resp)
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            return Check("server", "fail", f"{base} rejected the API key ({exc.code})",
                         "Check SWEBASH_AI_API_KEY (or OPENAI_API_KEY) for this server.")
        # Some OpenAI-compatible servers do not serve /models; they still answered.
        return Check("server", "warn", f"{base} answered {exc.code} to GET /models", "")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return Check("server", "fail", f"cannot reach {base}: {reason}",
                     "Is the server running, and SWEBASH_AI_API_BASE right? Are you online?")
    ids = [m.get("id") for m in body.get("data", []) if isinstance(m, dict)] if isinstance(body, dict) else []
    wire = choice.model.split("/", 1)[1] if choice.model.startswith("openai/") else choice.model
    if ids and wire not in ids:
        shown = ", ".join(str(i) for i in ids[:8]) + (" …" if len(ids) > 8 else "")
        return Check("server", "warn", f"{base} answers, but does not list the model '{wire}'",
                     f"Models there: {shown}. Choose one: `swebash-ai setup`, --model or SWEBASH_AI_MODEL.")
    listed = f" ({len(ids)} model{'s' if len(ids) != 1 else ''})" if ids else ""
    return Check("server", "ok", f"{base} answers{listed}")


def _tools_check(choice: ProviderChoice, loaded: LoadedSettings, timeout: float) -> Check:
    if choice.via_litellm:
        try:
            from swebash_ai.providers.litellm_provider import import_litellm

            litellm = import_litellm()  # never a bare import: that one would load a .env file
            supported = bool(litellm.supports_function_calling(model=choice.model))
        except Exception as exc:
            return Check("tool calling", "warn", f"unknown for {choice.model} ({type(exc).__name__})",
                         "swebash-ai falls back to tool calls written as JSON text if the model refuses tools.")
        if supported:
            return Check("tool calling", "ok", f"{choice.model} supports native tool calls (litellm's model data)")
        return Check("tool calling", "warn", f"litellm does not list {choice.model} as supporting tool calls",
                     "swebash-ai describes the tools in the prompt instead (less reliable); a model with tool "
                     "support works better.")
    return asyncio.run(_probe_tools(choice, loaded, timeout))


async def _probe_tools(choice: ProviderChoice, loaded: LoadedSettings, wait: float) -> Check:
    from swebash_ai.errors import ProviderError
    from swebash_ai.providers import make_provider
    from swebash_ai.providers.base import TextChunk, ToolCall
    from swebash_ai.providers.text_tools import is_tools_unsupported

    settings = loaded.settings.model_copy(update={"provider_retries": 0, "request_timeout": max(wait, 10.0)})
    provider = make_provider(choice, settings)
    messages = [{"role": "user", "content": "Call the ping tool now. Do not write anything else."}]
    called = False
    text: list[str] = []
    try:
        async for chunk in provider.stream(messages, [_PING_TOOL], "auto"):
            if isinstance(chunk, ToolCall):
                called = called or chunk.name == "ping"
            elif isinstance(chunk, TextChunk):
                text.append(chunk.text)
    except ProviderError as exc:
        if is_tools_unsupported(exc):
            return Check("tool calling", "warn", f"{choice.model} refuses native tool calls: {exc.message}",
                         "swebash-ai describes the tools in the prompt instead (less reliable); a model with "
                         "tool support works better.")
        return Check("tool calling", "fail", f"the test request failed: {exc.title}: {exc.message}",
                     exc.hint or "")
    if called:
        return Check("tool calling", "ok", f"{choice.model} made a native tool call")
    said = " ".join("".join(text).split())[:80]
    return Check("tool calling", "warn", f"{choice.model} answered without calling the test tool"
                 + (f" ({said!r})" if said else ""),
                 "Printed JSON tool calls are recovered, but a model with reliable tool calling works better.")


def _containment_check() -> Check:
    from swebash_ai.tools.containment import become_subreaper
    from swebash_ai.tools.process import supervised

    if supervised() and become_subreaper():
        return Check("containment", "ok", "a subreaper supervisor per command: all it starts is stopped with it")
    return Check("containment", "warn", "process group and marker only: a process that calls setsid and clears "
                 "its environment can outlive its command (results say 'every process found', not 'all')")


def _sandbox_check(loaded: LoadedSettings) -> Check:
    """Which backend confines sandboxed commands here, proved by a probe (``sandbox/selftest.py``)."""
    from swebash_ai.sandbox.confine import backend_setting
    from swebash_ai.sandbox.selftest import self_test

    s = loaded.settings
    wanted = backend_setting(s)
    result = self_test(wanted)
    every = s.exec_sandbox != "none"
    scope = "every command" if every else "commands sent to the sandbox"
    if result.ok:
        short = ""
        if result.backend == "landlock":  # what a user loses without user namespaces: said, not left to find out
            from swebash_ai.sandbox.landlock import SHORT_OF_BWRAP

            short = f"; Landlock gives less than bubblewrap: {SHORT_OF_BWRAP}"
        return Check("sandbox", "ok", f"{result.backend}, self-test passed ({result.detail}); confines {scope}{short}")
    fix = ("Install what is named above, or set SWEBASH_AI_SANDBOX_BACKEND to a backend that works here; "
           "`swebash-ai sandbox --show` prints the policy.")
    if result.backend == "none":
        # Without a backend a command sent to the sandbox is refused: a failure when every command must go there.
        status: Status = "fail" if every else "warn"
        return Check("sandbox", status, f"no sandbox works here ({wanted}): {result.detail}; commands that must "
                     "run in it are refused", fix)
    return Check("sandbox", "fail", f"{result.backend} self-test failed: {result.detail}", fix)


def _parser_check() -> Check:
    try:
        import tree_sitter
        import tree_sitter_bash

        parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        tree = parser.parse(b"echo ok | wc -c")
    except Exception as exc:
        return Check("shell parser", "fail", f"tree-sitter-bash does not load: {type(exc).__name__}: {exc}",
                     "Reinstall: pip install 'tree-sitter>=0.23,<0.27' 'tree-sitter-bash>=0.23,<0.26'. "
                     "Without it every command asks for approval.")
    if tree.root_node.has_error:
        return Check("shell parser", "fail", "tree-sitter-bash loads but cannot parse a simple command",
                     "Reinstall tree-sitter and tree-sitter-bash.")
    return Check("shell parser", "ok", "tree-sitter-bash loads")

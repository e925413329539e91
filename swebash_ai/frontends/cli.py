"""Command line: the composition root. Parses arguments, loads settings, picks the TUI, one-shot or a subcommand.

Heavy front ends are imported only when chosen, so ``--help`` and ``--version`` stay instant: nothing from
openai, litellm, textual, rich or prompt_toolkit is imported at module level, and the settings (pydantic) only
load once a command needs them. Errors are rendered here, at the edge: a :class:`ConfigError` is one clear
message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swebash_ai import __version__
from swebash_ai.errors import ExitCode, UsageError
from swebash_ai.frontends.oneshot import OneShotOptions
from swebash_ai.frontends.oneshot_render import format_error
from swebash_ai.words import count

if TYPE_CHECKING:
    from swebash_ai.config.settings import LoadedSettings

TOOL_CATEGORIES = ("fs", "exec", "web", "plan", "ask")

SETUP_PROVIDERS = ("openai", "anthropic", "gemini", "openrouter", "ollama", "openai-compatible")
"""The ids of ``setup_flow.KINDS`` (a test keeps them equal), named here so that building the parser, which every
start does, imports none of the setup's modules."""

EPILOG = """\
examples:
  swebash-ai                                   open the interactive app
  swebash-ai setup                             choose a provider, paste its key, pick a model (saved)
  swebash-ai -c "what is using port 8080?"     answer one question on stdout
  cat error.log | swebash-ai -c "why does this fail?"
                                               piped input is sent along as context
  git diff | swebash-ai -c "write a commit message" --no-tools
  echo "list the largest files here" | swebash-ai -c -
                                               read the question itself from stdin
  swebash-ai -c "clean the build dir" --yes    allow what needs approval (never what policy denies)
  swebash-ai -c "summarise README.md" --json | jq -r 'select(.type=="final").text'
  swebash-ai --profile local -c "hi"           use [profiles.local] from the config file
  swebash-ai --resume -c "and the second one?" continue the latest saved session
  swebash-ai config                            every setting, its value and where it came from
  swebash-ai doctor                            check the provider, the model's tool support, the sandbox
  swebash-ai sandbox -- make test              run one command in the sandbox (swebash-ai sandbox --show)
  swebash-ai export --all > sessions.jsonl     every saved session as OpenAI fine-tuning records
  swebash-ai export --format markdown          the latest session as a readable transcript
  swebash-ai -s -c "find files bigger than 1 MB"
                                               print one shell command for it (not run)
  eval "$(swebash-ai shell-init bash)"         in ~/.bashrc: Alt-E turns the line into a command
  swebash-ai undo                              put back the files changed in the latest session's last turn
  swebash-ai --approval-mode plan -c "how would you split cli.py?"
                                               read-only: nothing is written, no command that is not read-only runs
  swebash-ai rules                             the approval rules in force (swebash-ai rules remove N)
  SWEBASH_AI_LSP_DIAGNOSTICS=turn swebash-ai   language-server errors at the end of each turn, not in each
                                               edit (edit: the default; off: no server starts; docs/tools.md)

exit codes: 0 answered, 1 provider or runtime error, 2 usage or configuration error,
            3 a needed action was denied, 4 the answer broke off (what arrived is shown and saved),
            130 interrupted (Ctrl-C; the session is saved)

Settings come from flags > SWEBASH_AI_* environment variables > the profile > the config file
(see `swebash-ai config --path`). Docs: docs/cli.md, docs/configuration.md.
Every docs/NAME.md named here comes with the program: `swebash-ai help NAME` prints it (`swebash-ai help`
lists them).
"""


def _common_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """Options every command takes (subcommands get them with suppressed defaults, so both places work)."""
    default: Any = argparse.SUPPRESS if suppress else None
    parser.add_argument("--model", default=default, metavar="NAME",
                        help="model in litellm's provider/model form, e.g. openai/gpt-4.1, "
                        "anthropic/claude-sonnet-4-5, ollama_chat/llama3.1")
    parser.add_argument("--profile", default=default, metavar="NAME",
                        help="use the settings of [profiles.NAME] in the config file")
    parser.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS if suppress else 0,
                        help="log to stderr (-vv: debug)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used to generate the usage in docs/cli.md)."""
    parser = argparse.ArgumentParser(
        prog="swebash-ai",
        usage="%(prog)s [options]                open the interactive app\n"
        "       %(prog)s [options] -c QUESTION    answer one question and exit\n"
        "       %(prog)s setup                    choose a provider and model, test them, save them\n"
        "       %(prog)s config [--path]          show the settings\n"
        "       %(prog)s doctor                   check the setup\n"
        "       %(prog)s mcp list|serve           the MCP servers and their tools; serve ours\n"
        "       %(prog)s acp                      be an agent for an ACP editor (Zed, JetBrains, ...)\n"
        "       %(prog)s export [ID | --all]      print saved sessions as JSONL or Markdown\n"
        "       %(prog)s --shell -c WORDS         print one shell command for WORDS\n"
        "       %(prog)s shell-init [SHELL]       key binding for bash, zsh or fish\n"
        "       %(prog)s stats [--since AGE]      what the tools did, how well, at what cost\n"
        "       %(prog)s undo [--session ID]      put back what the last turn changed\n"
        "       %(prog)s rules [list|remove N]    the approval rules and where each came from\n"
        "       %(prog)s trust                    trust this project's .swebash-ai/rules.toml\n"
        "       %(prog)s agents [--json]          the agents a task call may start, and where each comes from\n"
        "       %(prog)s sandbox [--show | -- CMD]  the sandbox policy here; run one command in it\n"
        "       %(prog)s help [TOPIC]             print a documentation page (docs/TOPIC.md)",
        description="A terminal AI assistant that reads, searches and runs things for you, and asks before "
        "anything dangerous. With no arguments it opens the interactive app; with -c it answers one "
        "question on stdout (tool activity and warnings go to stderr) and exits.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"swebash-ai {__version__}")
    parser.add_argument("-c", dest="question", metavar="QUESTION",
                        help='answer one question and exit; "-" reads the question from stdin. @path in it '
                        "attaches that file; /NAME ARGS sends your command file commands/NAME.md")
    _common_options(parser, suppress=False)
    tools = parser.add_mutually_exclusive_group()
    tools.add_argument("--no-tools", action="store_true", help="offer the model no tools at all: just answer")
    tools.add_argument("--tools", metavar="CATEGORIES",
                       help="offer only these tool categories, comma-separated: fs, exec, web, plan, ask")
    parser.add_argument("-y", "--yes", action="store_true",
                        help="allow calls that need approval without asking (a command that is not read-only, a write, "
                        "a fetch of a URL the model made up; what policy always denies, "
                        "and catastrophes such as deleting your home directory, still never run); without a "
                        "terminal and without --yes they are denied")
    parser.add_argument("--approval-mode", choices=("ask", "accept-edits", "auto", "plan"), metavar="MODE",
                        help="ask (default): ask before what the policy flags; accept-edits: writes and edits "
                        "inside the workspace apply without asking; auto: that, and commands run without a "
                        "question inside the sandbox (the workspace writable, secrets hidden, no network; "
                        "catastrophes still ask; needs a sandbox backend: `swebash-ai sandbox --show`); plan: "
                        "read-only, writes and commands not proven read-only are refused (even with --yes). "
                        "See docs/approvals.md")
    parser.add_argument("-s", "--shell", action="store_true",
                        help="with -c: print one command for your shell that does what the words ask, on one "
                        "line, without running it (the model may only use read-only tools); exit 1 when no "
                        "command could be obtained. See docs/shell.md")
    parser.add_argument("--cwd", metavar="DIR", help="working directory for the tools (default: the current one)")
    parser.add_argument("--json", action="store_true",
                        help="with -c: print one JSON object per event on stdout (see docs/cli.md)")
    parser.add_argument("--raw", action="store_true",
                        help="with -c: print the answer exactly as the model wrote it, terminal escape "
                        "sequences and control characters included (by default they are removed, on a "
                        "terminal and in a pipe, since a prompt-injected model can use them to retitle the "
                        "window, write the clipboard or redraw the screen); no Markdown rendering")
    parser.add_argument("--resume", nargs="?", const="", metavar="ID",
                        help="continue a saved session (the latest when no ID is given)")
    # prog: without it each command's usage line repeats the whole multi-line usage above.
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands", prog="swebash-ai")
    config = sub.add_parser("config", help="show every setting with its value and source (secrets masked)",
                            description="Print the effective settings, each with where it came from "
                            "(default, file, profile, env, flag), secrets masked, and the chosen provider; then the "
                            "AGENTS.md files a session here would follow, and those refused or unreadable.")
    config.add_argument("--path", action="store_true", help="print only the config file's location")
    _common_options(config, suppress=True)
    doctor = sub.add_parser("doctor", help="check the provider, the model's tool support and the sandbox",
                            description="Check that the settings load, a provider key is present, the server "
                            "answers, the model can call tools, the sandbox and shell parser work, and what "
                            "swebash-ai stores is readable by you alone; list the tool categories with their "
                            "tools, and why any is off here, and the language server each language would use. "
                            "Exit 0 when everything is fine, else 1.")
    _common_options(doctor, suppress=True)
    mcp = sub.add_parser("mcp", help="list the configured MCP servers; or serve swebash-ai's tools over MCP",
                         description="mcp list: start each [mcp_servers.NAME] server of the config file, print "
                         "its state and tools (and whether each asks), stop it. Exit 0 when all started, else 1. "
                         "See docs/mcp.md.")
    mcp.add_argument("action", choices=["list", "serve"],
                     help="list: the configured servers; serve: swebash-ai's own guarded tools over stdio MCP")
    mcp.add_argument("--cwd", metavar="DIR", default=argparse.SUPPRESS,
                     help="with serve: working directory for the tools (default: the current one)")
    _common_options(mcp, suppress=True)
    acp = sub.add_parser("acp", help="serve an editor over the Agent Client Protocol (Zed, JetBrains, Neovim, Emacs, "
                         "Toad)",
                         description="Speak the Agent Client Protocol (JSON-RPC on stdin and stdout) to an editor that "
                         "starts this command: its sessions run the same tools, policy, rules and modes as the app, "
                         "and every question is asked in the editor. Files are read and written through the editor's "
                         "buffers when it offers them; the MCP servers it names run in the sandbox. Not for typing "
                         "at: see docs/editors.md for each editor's configuration.")
    _common_options(acp, suppress=True)
    _setup_parser(sub)
    _export_parser(sub)
    _stats_parser(sub)
    _shell_init_parser(sub)
    _sandbox_parser(sub)
    undo = sub.add_parser("undo", help="revert the file changes of the latest turn of a saved session",
                          description="Put back the files that the assistant's write and edit tools, and the "
                          "commands you approved, changed in the newest turn of the latest session that is not "
                          "yet undone; run again for the turn before. Refuses when a file changed since, or "
                          "when a command of that turn could not be snapshotted (--force undoes the rest). "
                          "See docs/undo.md.")
    undo.add_argument("--session", metavar="ID", help="the session to undo in (default: the latest)")
    undo.add_argument("--force", action="store_true",
                      help="restore even files changed since the assistant wrote them (their changes are lost)")
    _common_options(undo, suppress=True)
    rules = sub.add_parser("rules", help="list the approval rules in force and where each came from; remove one",
                           description="rules list: every rule (config file, profile, the project's "
                           ".swebash-ai/rules.toml), numbered, with where it came from and whether it is in force. "
                           "rules remove N: remove rule N from your config file. See docs/approvals.md.")
    rules.add_argument("action", nargs="?", choices=["list", "remove"], default="list")
    rules.add_argument("number", nargs="?", type=int, metavar="N", help="with remove: the rule's number")
    rules.add_argument("--cwd", metavar="DIR", default=argparse.SUPPRESS, help="the project (default: here)")
    _common_options(rules, suppress=True)
    agents = sub.add_parser("agents", help="list the agents a task call may start, and where each comes from",
                            description="Every agent the model may hand a side task to (the task tool): the "
                            "built-in explore and general, your files (~/.config/swebash-ai/agents/*.md, "
                            "~/.claude/agents/*.md) and the project's (.swebash-ai/agents, .claude/agents, "
                            ".opencode/agent; started once the project is trusted), with their tools, model and "
                            "mode. A helper never has more tools, mode or approvals than the main assistant. "
                            "See docs/agents.md.")
    agents.add_argument("--json", action="store_true", help="as JSON")
    agents.add_argument("--cwd", metavar="DIR", default=argparse.SUPPRESS, help="the project (default: here)")
    _common_options(agents, suppress=True)
    trust = sub.add_parser("trust", help="trust this project's .swebash-ai/rules.toml (its allow rules and hooks)",
                           description="Show what the project's .swebash-ai/rules.toml allows and runs, and record "
                           "that you trust it (with a hash of the file and of the project files its hooks run, in your "
                           "config file): its allow rules and hooks apply until one of them changes. Its ask and deny "
                           "rules always apply.")
    trust.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    trust.add_argument("--cwd", metavar="DIR", default=argparse.SUPPRESS, help="the project (default: here)")
    _common_options(trust, suppress=True)
    return parser


def _setup_parser(sub: Any) -> None:
    setup = sub.add_parser(
        "setup", prog="swebash-ai setup", help="choose a provider, paste its key, pick a model; saved as the default",
        description="Choose a model provider, give its API key and a model, and prove them with a short test "
        "request; then save them as a profile of the config file, made the default (the key in the OS keyring "
        "when the keyring extra finds one, else in the config file, readable by you only). Without --provider "
        "on a terminal, asks step by step. Exit 0 saved, 1 the test request failed (nothing saved), 2 usage.")
    setup.add_argument("--provider", choices=SETUP_PROVIDERS, help="the kind of provider (asks when absent)")
    setup.add_argument("--api-base", metavar="ADDRESS",
                       help="the API address (needed for openai-compatible), e.g. https://host/v1; written without a "
                       "scheme (localhost:8000/v1), it gets http:// for this machine and https:// for another, "
                       "and the note says which")
    setup.add_argument("--model", metavar="NAME", help="the model, as the provider names it (default: its usual one)")
    setup.add_argument("--api-key-stdin", action="store_true", help="read the API key from standard input")
    setup.add_argument("--profile", metavar="NAME", help="the profile to write (default: the provider's name)")
    setup.add_argument("--no-keyring", action="store_true", help="keep the key in the config file, not the keyring")


def _export_parser(sub: Any) -> None:
    export = sub.add_parser("export", prog="swebash-ai export",
                            help="print saved sessions as OpenAI fine-tuning JSONL or Markdown",
                            description="Print a saved session (the latest when no ID is given; a unique prefix "
                            "is enough) or every one with --all. --format openai prints one JSON record per "
                            'session, {"messages": [...], "tools": [...]}, in the OpenAI chat fine-tuning shape; '
                            "--format markdown a readable transcript. Secrets are redacted as in the audit log. "
                            "See docs/memory.md.")
    export.add_argument("session_id", nargs="?", metavar="ID", help="the session to export (default: the latest)")
    export.add_argument("--all", action="store_true", help="export every saved session, oldest first")
    export.add_argument("--format", choices=("openai", "markdown"), default="openai",
                        help="openai: JSONL fine-tuning records (default); markdown: a readable transcript")


def _stats_parser(sub: Any) -> None:
    stats = sub.add_parser("stats", prog="swebash-ai stats",
                           help="what the tools did, how well and at what cost (from the audit log and sessions)",
                           description="Per tool: calls, ok/error/denied/timeout, p50 and p95 duration (MCP tools "
                           "by server); approval decisions and who made them; tool rounds per turn; model requests "
                           "(latency, failures, retries); tokens in and out for turns with and without tools; the "
                           "estimated cost where prices are known. Read from what is stored on this machine "
                           "(nothing is sent anywhere). Default: everything recorded. See docs/observability.md.")
    which = stats.add_mutually_exclusive_group()
    which.add_argument("--session", metavar="ID", help="one saved session (a unique prefix is enough)")
    which.add_argument("--since", metavar="AGE", help="only the last AGE: 30m, 24h, 7d, 2w")
    which.add_argument("--all", action="store_true", help="everything recorded (the default)")
    stats.add_argument("--json", action="store_true", help="print the figures as one JSON object")


def _sandbox_parser(sub: Any) -> None:
    sandbox = sub.add_parser(
        "sandbox", prog="swebash-ai sandbox", help="show the sandbox policy here, or run one command under it",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="The OS sandbox that confines every command not proven read-only, unless you allow that very "
        "call outside it (o in the question; docs/safety.md): the "
        "workspace and a private /tmp are writable, .git/config, .git/hooks and .swebash-ai/ stay read-only, "
        "credentials (~/.ssh, ~/.aws, .env files...: the path guard's list) are hidden, everything else is "
        "read-only, and there is no network (but HTTP(S) to the hosts of sandbox_allow_hosts, through swebash-ai's "
        "proxy). Backends: bubblewrap or Landlock on Linux, Seatbelt on macOS; "
        "when none works, auto mode is refused and other commands run unconfined, each result saying so "
        "(exec_sandbox = all refuses them instead).",
        epilog="examples:\n"
        "  swebash-ai sandbox --show                   the policy as it applies here, and the backend\n"
        "  swebash-ai sandbox -- make test             run one command under it (its exit code)\n"
        "  swebash-ai sandbox -- 'cat ~/.ssh/id_rsa'   one argument is a bash command line\n"
        "  SWEBASH_AI_SANDBOX_BACKEND=landlock swebash-ai sandbox --show\n"
        "                                              try another backend\n\n"
        "exit codes: the command's own; with --show 0, or 1 when no backend works; 2 when the command\n"
        "could not be confined (it was not run)")
    sandbox.add_argument("--show", action="store_true", help="print the policy and the backend, run nothing")
    sandbox.add_argument("--cwd", metavar="DIR", default=argparse.SUPPRESS,
                         help="the workspace (default: the current folder, or workspace_roots)")
    sandbox.add_argument("command_words", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                         help="the command: one argument is a bash command line, several a program and its arguments")
    _common_options(sandbox, suppress=True)


def _shell_init_parser(sub: Any) -> None:
    """``shell-init``: the key binding snippet (see :mod:`swebash_ai.frontends.shell_init`)."""
    from swebash_ai.frontends.shell_init import SETUP, SHELLS

    docs = sub.add_parser("help", help="print a documentation page (docs/TOPIC.md, packaged); list them without TOPIC",
                          description="Print one of the documentation pages that come with swebash-ai.")
    docs.add_argument("topic", nargs="?", metavar="TOPIC", help="e.g. approvals, cli, tui (docs/approvals.md...)")
    init = sub.add_parser("shell-init", help="print the key binding for bash, zsh or fish (Alt-E: words -> command)",
                          description="Print a snippet that binds a key (Alt-E) in your shell: it replaces the "
                          "plain words on the command line with a proposed command, which is not run.",
                          epilog=SETUP, formatter_class=argparse.RawDescriptionHelpFormatter)
    init.add_argument("shell_name", nargs="?", choices=SHELLS, metavar="SHELL",
                      help="bash, zsh or fish (default: from $SHELL)")
    init.add_argument("--key", metavar="KEY", help="alt-LETTER or ctrl-LETTER (default: $SWEBASH_AI_SHELL_KEY, "
                      "else alt-e)")


def _shell_init(args: argparse.Namespace) -> int:
    from swebash_ai.frontends.shell_init import ShellInitError, detect_shell, snippet

    try:
        shell = args.shell_name or detect_shell()
        print(snippet(shell, args.key), end="")
    except ShellInitError as exc:
        raise UsageError(str(exc)) from None
    return ExitCode.OK


def settings_flags(args: argparse.Namespace) -> dict[str, Any]:
    """Map command-line flags to settings overrides (their source shows as ``flag`` in ``config``)."""
    flags: dict[str, Any] = {}
    if getattr(args, "model", None):
        flags["model"] = args.model
    if getattr(args, "approval_mode", None):
        flags["approval_mode"] = args.approval_mode
    if getattr(args, "no_tools", False):
        flags.update({f"tools_{c}": False for c in TOOL_CATEGORIES})
    elif getattr(args, "tools", None) is not None:
        wanted = {part.strip() for part in args.tools.split(",") if part.strip()}
        unknown = sorted(wanted - set(TOOL_CATEGORIES))
        if unknown:
            raise UsageError(f"--tools: unknown categor{'ies' if len(unknown) > 1 else 'y'} {', '.join(unknown)} "
                             f"(choose from {', '.join(TOOL_CATEGORIES)}).")
        flags.update({f"tools_{c}": c in wanted for c in TOOL_CATEGORIES})
    return flags


class _OneLine(logging.Formatter):
    """Warnings as the one line they say: a traceback is for ``-vv`` (the error tree renders the rest)."""

    def format(self, record: logging.LogRecord) -> str:
        return record.getMessage()


def _setup_logging(verbosity: int) -> None:
    if verbosity <= 0:
        # Without it, Python's last-resort handler prints warnings with their traceback attached.
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(logging.WARNING)
        handler.setFormatter(_OneLine())
        logging.getLogger().addHandler(handler)
        return
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.DEBUG if verbosity > 1 else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``swebash-ai``; returns the exit code (see :class:`~swebash_ai.frontends.oneshot.ExitCode`)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    problem = working_directory_problem()
    if problem is not None:
        print(f"swebash-ai: {problem}", file=sys.stderr)
        return ExitCode.USAGE
    _setup_logging(getattr(args, "verbose", 0) or 0)
    try:
        return _dispatch(parser, args)
    except UsageError as exc:
        from swebash_ai.safety.terminal_text import safe

        print(safe(format_error(exc), visible=True), file=sys.stderr)  # may quote what was typed
        return ExitCode.USAGE
    except KeyboardInterrupt:
        print("swebash-ai: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:  # `swebash-ai config | head`: the reader left; stop quietly like other tools
        with contextlib.suppress(OSError, ValueError):  # keep the interpreter's final flush quiet
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.OK
    except Exception as exc:
        from swebash_ai.errors import SwebashError

        if not isinstance(exc, SwebashError):
            raise
        from swebash_ai.frontends.oneshot import exit_code_for
        from swebash_ai.safety.terminal_text import safe

        print(safe(format_error(exc), visible=True), file=sys.stderr)  # may quote a server or a file
        return exit_code_for(exc)


def working_directory_problem() -> str | None:
    """Why the folder swebash-ai was started in cannot be worked in (deleted, unreachable, unreadable), as one
    sentence; ``None`` when it can. Checked once, before anything reads it (``Path.cwd()`` raises then)."""
    try:
        cwd = os.getcwd()
    except FileNotFoundError:
        return ("the folder you started it in no longer exists (deleted or moved away); change to an existing "
                "folder and start it again.")
    except OSError as exc:
        return (f"the folder you started it in cannot be reached ({exc.strerror or exc}); change to a folder you "
                "can read and start it again.")
    if not os.access(cwd, os.R_OK | os.X_OK):
        from swebash_ai.safety.terminal_text import safe

        return (f"the folder you started it in ({safe(cwd, visible=True)}) cannot be read (no permission); change "
                "to a folder you can read and start it again.")
    return None


def _remove_stale_temporary_files() -> None:
    """The temporary files of writes a kill interrupted (storage/pending_writes.py): removed, with a note."""
    from swebash_ai.storage.pending_writes import sweep

    removed = sweep()
    if removed:
        from swebash_ai.safety.terminal_text import safe

        shown = ", ".join(safe(str(p), visible=True) for p in removed[:3]) + (", …" if len(removed) > 3 else "")
        print(f"swebash-ai: removed {count(len(removed), 'temporary file')} left by a write that was interrupted: "
              f"{shown}", file=sys.stderr)


def skip_pydantic_plugins() -> None:
    """Tell pydantic that no plugin of its own applies here, before its first model is built.

    At its first model, pydantic looks for plugins in the entry points of every installed distribution: 25 ms
    of a one-shot answer's 0.5 s of CPU, for plugins (observability hooks for an application's own models) that
    swebash-ai's settings and tool arguments have no use for. Its switch, ``PYDANTIC_DISABLE_PLUGINS``, would be
    inherited by every command the tools run, so the loader's cache is filled instead (when it is where
    pydantic 2 keeps it, and nothing was loaded yet).
    """
    try:
        from pydantic.plugin import _loader
    except ImportError:  # pragma: no cover - another pydantic layout: it looks for plugins as before
        return
    if getattr(_loader, "_plugins", ()) is None:
        _loader._plugins = {}


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from swebash_ai.storage.locations import locations
    from swebash_ai.storage.private_files import tighten_once

    if args.command == "config" and args.path:
        print(locations().config_file)
        return ExitCode.OK
    tighten_once(locations())  # an install from before private storage: once, then one stat per start
    _remove_stale_temporary_files()
    if args.command == "setup":
        from swebash_ai.commands.setup import run_setup

        return run_setup(args)
    if args.command == "export":
        from swebash_ai.commands.export import export_sessions

        return export_sessions(args.session_id, every=args.all, fmt=args.format)
    if args.command == "shell-init":
        return _shell_init(args)
    if args.command == "help":
        from swebash_ai.commands.help_docs import run_help

        return run_help(args.topic, sys.stdout)
    if args.command == "stats":
        from swebash_ai.commands.stats import run_stats

        return run_stats(args.session, args.since, as_json=args.json)
    if args.shell and (args.question is None or args.command is not None):
        raise UsageError("--shell needs words to turn into a command: --shell -c WORDS.")
    if args.shell and (args.json or args.yes or args.raw or args.resume is not None):
        raise UsageError("--shell prints one command and runs nothing: it takes no --json, --yes, --raw or "
                         "--resume.")
    if args.raw and args.json:
        raise UsageError("--raw applies to the plain answer; --json already carries the exact text (escaped).")
    if args.command == "doctor":
        from swebash_ai.commands.doctor import run_doctor

        return run_doctor(settings_flags(args), profile=getattr(args, "profile", None))
    if args.command == "undo":
        from swebash_ai.commands.undo import run_undo

        return run_undo(args.session, force=args.force)
    if args.command == "sandbox":
        from swebash_ai.commands.sandbox import run_sandbox
        from swebash_ai.config.settings import load_settings

        words = args.command_words[1:] if args.command_words[:1] == ["--"] else args.command_words
        if bool(words) == bool(args.show):
            raise UsageError("swebash-ai sandbox takes --show, or -- COMMAND to run (not both).")
        loaded = load_settings(settings_flags(args), profile=getattr(args, "profile", None))
        where = _checked_cwd(getattr(args, "cwd", None)) or Path.cwd().resolve()
        return run_sandbox(loaded, where, words, show=args.show)
    if args.command == "agents":
        from swebash_ai.commands.agents import run_agents
        from swebash_ai.config.settings import load_settings

        loaded = load_settings(settings_flags(args), profile=getattr(args, "profile", None))
        return run_agents(loaded, _checked_cwd(getattr(args, "cwd", None)) or Path.cwd().resolve(),
                          as_json=args.json)
    if args.command in ("rules", "trust"):
        from swebash_ai.commands.rules import run_rules, run_trust
        from swebash_ai.config.settings import load_settings

        loaded = load_settings(settings_flags(args), profile=getattr(args, "profile", None))
        where = _checked_cwd(getattr(args, "cwd", None)) or Path.cwd().resolve()
        if args.command == "trust":
            return run_trust(loaded, where, args.yes)
        return run_rules(loaded, where, args.action, args.number)
    if args.command is None and args.question is None:
        for flag, name in ((args.json, "--json"), (args.yes, "--yes"), (args.raw, "--raw")):
            if flag:
                raise UsageError(f"{name} applies to one-shot answers: add -c QUESTION.")
    cwd = _checked_cwd(args.cwd)
    flags, profile = settings_flags(args), getattr(args, "profile", None)
    if args.command is None and args.question is None:
        return _interactive(args, flags, profile, cwd)
    skip_pydantic_plugins()
    from swebash_ai.config.settings import load_settings

    loaded = load_settings(flags, profile=profile)
    if args.command == "config":
        from swebash_ai.commands.config_show import print_config, print_instructions

        print_config(loaded)
        print_instructions(loaded, cwd or Path.cwd().resolve())
        return ExitCode.OK
    if args.command == "acp":
        from swebash_ai.frontends.acp import run_acp

        return run_acp(lambda: load_settings(flags, profile=profile), loaded)
    if args.command == "mcp" and args.action == "serve":
        from swebash_ai.frontends.mcp_serve import run_mcp_serve

        return run_mcp_serve(loaded, cwd)
    if args.command == "mcp":
        from swebash_ai.commands.mcp import run_mcp_list

        return run_mcp_list(loaded, sys.stdout)
    if args.shell:
        from swebash_ai.frontends.shell_mode import run_shell_mode

        return run_shell_mode(loaded, args.question, cwd=cwd)
    from swebash_ai.frontends.oneshot import run_oneshot  # what is left: -c QUESTION

    options = OneShotOptions(args.question, json_events=args.json, yes=args.yes, resume=args.resume, cwd=cwd,
                             raw=args.raw)
    return run_oneshot(loaded, options)


def _interactive(args: argparse.Namespace, flags: dict[str, Any], profile: str | None, cwd: Path | None) -> int:
    """Open the TUI. Settings are validated after its first frame (pydantic is slow to import); the
    file, the profile and the theme are read before it, so those errors still stop here, exit code 2."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("the interactive app needs a terminal; for scripts and pipes use -c QUESTION.")
    from swebash_ai.config.file import StartInfo
    from swebash_ai.frontends.tui import run_tui

    start = StartInfo.peek(flags, profile)

    def load() -> LoadedSettings:
        skip_pydantic_plugins()
        from swebash_ai.config.settings import load_settings

        return load_settings(flags, profile=profile)

    result = run_tui(
        load,
        cwd=cwd or Path.cwd().resolve(),
        resume=args.resume or None,
        resume_latest=args.resume == "",
        start=start,
    )
    return int(result or 0)


def _checked_cwd(raw: str | None) -> Path | None:
    if raw is None:
        return None
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise UsageError(f"--cwd {raw}: not a directory.")
    return path.resolve()

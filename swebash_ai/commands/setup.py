"""``swebash-ai setup``: choose a provider, give its key and a model, prove it with a test request, save it.

Interactive on a terminal (prompt-toolkit; the key is read without echo), or for scripts with every answer
on the command line and the key on standard input::

    printf %s "$KEY" | swebash-ai setup --provider openai-compatible --api-base URL --model NAME --api-key-stdin

Exit codes: 0 saved, 1 the test request failed (nothing saved), 2 a usage or configuration error,
130 interrupted (nothing saved). See :mod:`swebash_ai.commands.setup_flow` for what is saved where.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, TextIO

from swebash_ai import errors
from swebash_ai.words import count

if TYPE_CHECKING:
    from swebash_ai.commands.setup_flow import ProviderKind

OK, FAILED, USAGE, INTERRUPTED = 0, 1, 2, 130


def run_setup(args: argparse.Namespace) -> int:
    """Entry point of ``swebash-ai setup``."""
    try:
        if args.provider is None and sys.stdin.isatty():
            return _interactive(args)
        return _scripted(args)
    except errors.ConfigError as exc:
        print(f"swebash-ai setup: {exc}", file=sys.stderr)
        return USAGE
    except (KeyboardInterrupt, EOFError):
        print("\nswebash-ai setup: interrupted; nothing was saved.", file=sys.stderr)
        return INTERRUPTED


def _scripted(args: argparse.Namespace) -> int:
    from swebash_ai.commands.setup_flow import (
        KINDS,
        Candidate,
        config_path,
        default_base,
        explain,
        kind_named,
        list_models,
        save,
        test_request,
    )
    from swebash_ai.safety.terminal_text import safe

    if args.provider is None:
        raise errors.ConfigError("--provider is needed when standard input is not a terminal "
                                 f"(one of {', '.join(k.id for k in KINDS)}).")
    kind = kind_named(args.provider)
    base = _given_base(args.api_base, sys.stderr) if args.api_base else default_base(kind)
    if base is None:
        raise errors.ConfigError(f"--api-base ADDRESS is needed for {kind.id}.")
    key = None
    if args.api_key_stdin:
        key = sys.stdin.readline().strip() or None
    if kind.needs_key and not key:
        raise errors.ConfigError(f"{kind.label} needs an API key: pass it on standard input with --api-key-stdin.")
    model = args.model or kind.default_model
    if not model:
        models = _run(list_models(kind, base, key))
        if not models:
            raise errors.ConfigError(f"--model NAME is needed: {base} lists no models.")
        model = models[0]
    candidate = Candidate(kind, base, key, model)
    print(f"Testing {candidate.full_model} at {base}…", file=sys.stderr)
    try:
        _run(test_request(candidate))
    except errors.ProviderError as exc:
        print(f"swebash-ai setup: {safe(explain(exc, candidate), visible=True)} Nothing was saved.", file=sys.stderr)
        return FAILED
    saved = save(candidate, args.profile or kind.id, config_path(), use_keyring=not args.no_keyring)
    print(saved.summary(), file=sys.stderr)
    return OK


def _given_base(text: str, out: TextIO, indent: str = "") -> str:
    """``--api-base`` by the rule of the prompt and the app's screen; a scheme added is said on ``out``, since
    what is used is then not what was typed.

    Raises:
        ConfigError: ``text`` is not an address.
    """
    from swebash_ai.config.address import complete_base

    base, added = complete_base(text)
    if added:
        print(f"{indent}Using {base}: {added}.", file=out)
    return base


def _run(work: Any) -> Any:
    import asyncio

    return asyncio.run(work)


# --- interactive -----------------------------------------------------------------------------------------

def _ask(message: str, *, default: str = "", password: bool = False, words: list[str] | None = None) -> str:
    from prompt_toolkit import prompt
    from prompt_toolkit.completion import FuzzyWordCompleter

    completer = FuzzyWordCompleter(words) if words else None
    return str(prompt(message, default=default, is_password=password, completer=completer)).strip()


def _choose_kind() -> tuple[ProviderKind, str | None]:
    from swebash_ai.commands.setup_flow import KINDS, default_base
    from swebash_ai.providers import ollama_offer

    offer = ollama_offer()
    kinds = [k for k in KINDS if k.id != "ollama" or offer is not None]
    print("Which provider?")
    for i, kind in enumerate(kinds, 1):
        extra = f" ({offer.host}, {count(len(offer.models), 'model')})" if kind.id == "ollama" and offer else ""
        print(f"  {i}. {kind.label}{extra}")
    while True:
        answer = _ask(f"Provider [1-{len(kinds)}]: ")
        if answer.isdigit() and 1 <= int(answer) <= len(kinds):
            kind = kinds[int(answer) - 1]
            return kind, (offer.host + "/v1" if kind.id == "ollama" and offer else default_base(kind))
        print(f"  Type a number from 1 to {len(kinds)}.")


def _ask_base() -> str:
    while True:
        try:
            return _given_base(_ask("Server address (e.g. localhost:8000/v1): "), sys.stdout, "  ")
        except errors.ConfigError as exc:
            print(f"  {exc}")


def _ask_key(kind: ProviderKind) -> str | None:
    where = f" (from {kind.key_help})" if kind.key_help else ""
    while True:
        key = _ask(f"API key{where}{'' if kind.needs_key else ', Enter for none'}: ", password=True)
        if key or not kind.needs_key:
            return key or None
        print("  A key is needed for this provider.")


def _ask_model(kind: ProviderKind, base: str, key: str | None) -> str:
    from swebash_ai.commands.setup_flow import Candidate, explain, list_models
    from swebash_ai.safety.terminal_text import safe

    models: list[str] | None = None
    try:
        models = _run(list_models(kind, base, key))
    except errors.ProviderError as exc:
        print(f"  (no model list: {safe(explain(exc, Candidate(kind, base, key, '')), visible=True)})")
    default = kind.default_model
    if models:
        if default not in models:
            default = models[0]
        more = f", … ({len(models)} in all; Tab completes)" if len(models) > 12 else ""
        shown = safe(", ".join(models[:12]), visible=True) + more
        print(f"Models: {shown}")
    while True:
        model = _ask("Model: ", default=default, words=models)
        if model:
            return model


def _interactive(args: argparse.Namespace) -> int:
    from swebash_ai.commands.setup_flow import Candidate, config_path, explain, save, test_request
    from swebash_ai.safety.terminal_text import safe

    print("Set up a model provider. Nothing is saved until a test request works; Ctrl-C leaves.")
    kind, base = _choose_kind()
    if base is None or not kind.fixed_base:
        base = _given_base(args.api_base, sys.stdout, "  ") if args.api_base else _ask_base()
    key = _ask_key(kind) if kind.id != "ollama" else None
    model = args.model or _ask_model(kind, base, key)
    while True:
        candidate = Candidate(kind, base, key, model)
        print(f"Testing {candidate.full_model} at {base}…")
        try:
            reply = _run(test_request(candidate))
        except errors.ProviderError as exc:
            print(f"  {safe(explain(exc, candidate), visible=True)}")
            change = _ask("Change [k]ey, [m]odel, [u]rl, or [q]uit? ").lower()[:1]
            if change == "k":
                key = _ask_key(kind)
            elif change == "m":
                model = _ask_model(kind, base, key)
            elif change == "u":
                base = _ask_base()
            elif change == "q":
                print("Nothing was saved.")
                return FAILED
            continue
        print(f"  It works{': ' + safe(repr(reply), visible=True) if reply else ''}.")
        break
    saved = save(candidate, args.profile or kind.id, config_path(), use_keyring=not args.no_keyring)
    print(saved.summary())
    print('Try it: swebash-ai -c "hello"')
    return OK

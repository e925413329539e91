"""``swebash-ai config``: the config file, the profile, the chosen provider and why, every setting with its
value and where it came from (secrets masked), then the AGENTS.md files a session here would follow."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from swebash_ai.words import count

if TYPE_CHECKING:
    from swebash_ai.config.ambient import NetworkRoute
    from swebash_ai.config.settings import LoadedSettings
    from swebash_ai.providers import ProviderChoice


def print_config(loaded: LoadedSettings, out: TextIO | None = None) -> None:
    """``swebash-ai config``: the config file, the profile, the chosen provider and why, then every setting."""
    from swebash_ai.config.settings import Settings, describe_value, mask_secret
    from swebash_ai.providers import choose_provider

    out = out or sys.stdout
    settings = loaded.settings
    exists = "" if loaded.config_file.exists() else " (does not exist; defaults apply)"
    print(f"config file: {loaded.config_file}{exists}", file=out)
    profiles = f" (defined: {', '.join(loaded.profiles)})" if loaded.profiles else ""
    print(f"profile:     {loaded.profile or '(none)'}{profiles}", file=out)
    rules = "; ".join(f"{r.decision} {r.tool} {r.host}" if r.host else f"{r.decision} {r.what()}"
                      for r in loaded.rules.rules) or "(none)"
    print(f"rules:       {rules}", file=out)
    choice = choose_provider(settings, model_from=loaded.model_from)
    if choice is None:
        print("provider:    none configured; see `swebash-ai doctor`", file=out)
    else:
        client = "litellm" if choice.via_litellm else "the OpenAI-compatible client"
        where = f" at {choice.api_base}" if choice.api_base else ""
        key = (f"key {mask_secret(choice.api_key)} from {_key_source(loaded, choice)}" if choice.api_key
               else "no key")
        print(f"provider:    {choice.model} via {client}{where}, {key} (because {choice.reason})", file=out)
        for line in provider_route(loaded, choice).lines():
            print(f"  {line}", file=out)
    print("", file=out)
    names = list(Settings.model_fields)
    width = max(len(n) for n in names)
    rows = [(n, describe_value(settings, n) or "-", loaded.source_of(n)) for n in names]
    vwidth = min(40, max(len(v) for _, v, _ in rows))
    print(f"{'setting'.ljust(width)}  {'value'.ljust(vwidth)}  source", file=out)
    for name, value, source in rows:
        print(f"{name.ljust(width)}  {value.ljust(vwidth)}  {source}", file=out)


def provider_route(loaded: LoadedSettings, choice: ProviderChoice) -> NetworkRoute:
    """Where the chosen provider's requests go, through which proxy, trusting which certificates, with sources."""
    from swebash_ai.config.ambient import network_route

    if not choice.api_base:
        source = "-"
    elif loaded.settings.api_base == choice.api_base:
        source = loaded.source_of("api_base")
    else:
        source = choice.reason
    try:
        import certifi

        store = certifi.where()
    except ImportError:  # pragma: no cover - httpx brings certifi
        store = "certifi"
    return network_route(choice.model, choice.api_base, source, choice.via_litellm, certifi_path=store)


def _key_source(loaded: LoadedSettings, choice: ProviderChoice) -> str:
    """Where the provider's key came from, said without the key."""
    settings = loaded.settings
    if settings.api_key is None or settings.api_key.get_secret_value() != choice.api_key:
        return str(choice.reason).removesuffix(" is set")  # a provider's own variable: OPENAI_API_KEY...
    origin = loaded.origins.get("api_key", "default")
    if origin in ("profile", "file"):
        return f"{loaded.source_of('api_key')} of {loaded.config_file}"
    return loaded.source_of("api_key")


def print_instructions(loaded: LoadedSettings, cwd: Path, out: TextIO | None = None) -> None:
    """After the settings of ``swebash-ai config``: the AGENTS.md files a session in ``cwd`` would follow."""
    from swebash_ai.agent.instructions import load_instructions
    from swebash_ai.session import session_path_policy

    out = out or sys.stdout
    settings = loaded.settings
    print("", file=out)
    if not settings.project_instructions:
        print("instructions: off (project_instructions = false)", file=out)
        return
    found = load_instructions(cwd, loaded.locations.config_dir, settings.instructions_max_chars,
                              policy=session_path_policy(loaded, cwd), max_bytes=settings.fs_max_size)
    print(f"instructions: {count(len(found.files), 'file')}, {found.chars} characters" if found.files
          else "instructions: no AGENTS.md file in force", file=out)
    for f in found.files:
        print(f"  {f.path}" + (" (cut)" if f.cut else ""), file=out)
    for line in found.notices:
        print(f"  ! {line}", file=out)

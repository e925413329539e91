"""Regenerate the reference parts of the docs from the code, so they cannot drift.

``python -m swebash_ai.docgen`` rewrites the text between ``<!-- generated:NAME -->`` and
``<!-- end:NAME -->`` markers in docs/configuration.md (the settings table, the ambient inputs) and docs/tools.md
(every tool, its arguments and limits), and swebash_ai/tools/schemas.py (the built-in tools' argument schemas, as
data, so a start builds no pydantic model). Tests fail when the committed files differ from what this would write.
"""

from __future__ import annotations

import pprint
import re
import sys
from pathlib import Path
from typing import Any


def tools_reference_markdown() -> str:
    """Every built-in tool with its description and arguments, from the registry."""
    from swebash_ai.tools import loaded_builtin_tools

    out: list[str] = []
    for t in loaded_builtin_tools():
        out.append(f"### `{t.name}` ({t.category})\n")
        out.append(t.description.strip() + "\n")
        props: dict[str, Any] = t.parameters.get("properties", {})
        required = set(t.parameters.get("required", []))
        if props:
            out.append("| Argument | Type | Default | Meaning |")
            out.append("| --- | --- | --- | --- |")
            for name, spec in props.items():
                kind = spec.get("type") or " or ".join(
                    str(s.get("type", "?")) for s in spec.get("anyOf", []) if isinstance(s, dict)
                )
                if "enum" in spec:
                    kind += " (" + ", ".join(map(str, spec["enum"])) + ")"
                bounds = [f"{k} {spec[k]}" for k in ("minimum", "maximum", "minLength", "maxLength") if k in spec]
                if bounds:
                    kind += "; " + ", ".join(bounds)
                default = "required" if name in required else f"`{spec.get('default')!r}`"
                desc = " ".join(str(spec.get("description", "")).split())
                out.append(f"| `{name}` | {kind} | {default} | {desc} |")
        out.append("")
    return "\n".join(out).strip() + "\n"


def schemas_module() -> str:
    """The text of swebash_ai/tools/schemas.py: every built-in tool's schema as its pydantic model makes it."""
    from swebash_ai.tools import TOOL_MODULES, loaded_builtin_tools, source_digest
    from swebash_ai.tools.registry import signature_fingerprint

    entries = []
    for t in loaded_builtin_tools():
        entry = {"module": t.fn.__module__, "category": t.category, "description": t.description,
                 "fingerprint": signature_fingerprint(t.name, t.fn), "parameters": t.schema_from_model()}
        entries.append(f"SCHEMAS[{t.name!r}] = {pprint.pformat(entry, width=110, sort_dicts=False)}\n")
    sources = {module: source_digest(module) for module in TOOL_MODULES}
    return (
        '"""The built-in tools\' names, categories, descriptions and argument schemas, generated from their\n'
        "modules and pydantic models: do not edit.\n\n"
        "Regenerate with ``python -m swebash_ai.docgen``; ``--check`` and a test fail when it is stale. A start\n"
        "offers these tools without importing their modules (tools/__init__.py); a module whose source no longer\n"
        "matches its digest in SOURCES is imported instead, and a tool whose fingerprint no longer matches its\n"
        "signature gets its schema from its model (see tools/registry.py).\n"
        '"""\n\n'
        "from typing import Any\n\n"
        f"SOURCES: dict[str, str] = {pprint.pformat(sources, width=110, sort_dicts=False)}\n\n"
        "SCHEMAS: dict[str, dict[str, Any]] = {}\n\n" + "\n".join(entries)
    )


def render(name: str) -> str:
    from swebash_ai.config.ambient import ambient_inputs_markdown
    from swebash_ai.config.settings import settings_reference_markdown

    return {"settings": settings_reference_markdown, "tools": tools_reference_markdown,
            "ambient": ambient_inputs_markdown}[name]()


def refresh(text: str) -> str:
    """``text`` with every generated block replaced by a fresh rendering."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        return f"<!-- generated:{name} -->\n{render(name)}<!-- end:{name} -->"

    return re.sub(r"<!-- generated:(\w+) -->\n.*?<!-- end:\1 -->", fill, text, flags=re.S)


def main(argv: list[str] | None = None) -> int:
    root = Path(__file__).resolve().parents[1] / "docs"
    check = "--check" in (argv if argv is not None else sys.argv[1:])
    stale = []
    for doc in ("configuration.md", "tools.md"):
        path = root / doc
        if not path.exists():
            continue
        old = path.read_text(encoding="utf-8")
        new = refresh(old)
        if new != old:
            stale.append(doc)
            if not check:
                path.write_text(new, encoding="utf-8")
    schemas = Path(__file__).resolve().parent / "tools" / "schemas.py"
    fresh = schemas_module()
    if schemas.read_text(encoding="utf-8") != fresh:
        stale.append("swebash_ai/tools/schemas.py")
        if not check:
            schemas.write_text(fresh, encoding="utf-8")
    if stale:
        print(("stale: " if check else "updated: ") + ", ".join(stale))
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())

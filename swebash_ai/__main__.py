"""``python -m swebash_ai``."""

from __future__ import annotations

from swebash_ai.frontends.cli import main

raise SystemExit(main())

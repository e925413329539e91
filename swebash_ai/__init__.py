"""swebash-ai: a terminal AI assistant that asks before it touches anything dangerous.

Importing the package is cheap: nothing heavy (litellm, openai, textual) loads until it is used.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]

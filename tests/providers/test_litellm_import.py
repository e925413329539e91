"""litellm must import silently and without the network; prices come from its bundled list."""

from __future__ import annotations

import subprocess
import sys

from swebash_ai.providers import ProviderChoice, uses_litellm
from swebash_ai.providers.pricing import cost_of


def test_litellm_import_is_silent_and_uses_the_local_cost_map() -> None:
    code = (
        "import os\nos.environ.pop('LITELLM_LOCAL_MODEL_COST_MAP', None)\n"
        "from swebash_ai.providers.litellm_provider import import_litellm\n"
        "m = import_litellm()\nassert m.suppress_debug_info is True\n"
        "assert os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] == 'True'\n"
    )
    # HTTPS_PROXY at a closed port: a network fetch during import would hang or fail loudly.
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/nonexistent",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }
    # litellm's import takes seconds of CPU: on a loaded machine, many times that
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "" and out.stderr == ""


_CUT_SHORT = """
import importlib.abc, sys
class Cut(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "litellm.litellm_core_utils.streaming_handler":
            sys.meta_path.remove(self)
            raise KeyboardInterrupt  # as Ctrl-C, or a test timeout's exception, in the middle of the import
        return None
sys.meta_path.insert(0, Cut())
from swebash_ai.providers.litellm_provider import import_litellm
try:
    import_litellm()
except KeyboardInterrupt:
    pass
else:
    raise SystemExit("the import was not cut")
assert not [n for n in sys.modules if n.split(".")[0] == "litellm"], "half an import left behind"
litellm = import_litellm()
assert litellm.utils and litellm.acompletion
print("whole")
"""


def test_an_import_cut_short_leaves_nothing_half_initialised() -> None:
    """A Ctrl-C (or a test's timeout) in the middle of litellm's import used to leave half of it in
    sys.modules: every later request failed with "partially initialized module 'litellm'". The next import now
    starts afresh."""
    out = subprocess.run([sys.executable, "-c", _CUT_SHORT], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "whole\n"


def test_known_model_has_a_cost_and_unknown_has_none() -> None:
    cost = cost_of("gpt-4.1", 1_000_000, 0)
    assert cost is not None and 0.1 < cost < 100  # dollars per million input tokens, whatever today's price
    assert cost_of("no-such-model-xyz", 10, 10) is None


def test_routing_fast_lane_and_litellm() -> None:
    assert not uses_litellm("openai/gpt-4.1", None)
    assert not uses_litellm("my-local-model", "http://localhost:8000/v1")
    assert uses_litellm("anthropic/claude-sonnet-4-5", None)
    assert uses_litellm("ollama_chat/llama3.1", "http://localhost:11434")
    assert uses_litellm("gpt-4o", None)  # no prefix and no endpoint: let litellm infer the provider
    assert ProviderChoice("gemini/gemini-2.5-flash", None, None, "").via_litellm


def test_a_model_price_is_found_without_parsing_the_whole_list_and_agrees_with_it(monkeypatch) -> None:
    """Only the priced model's entry is parsed; it is the entry a full parse gives (the last of duplicates, a
    key written without indentation, not a nested key of the same name)."""
    import json

    from swebash_ai.providers import pricing

    listing = {"a": {"input_cost_per_token": 1.0, "nested": {"b": {"input_cost_per_token": 9.0}}},
               "b": {"input_cost_per_token": 2.0, "output_cost_per_token": 3.0}}
    text = json.dumps(listing, indent=4)
    text = text[:-2] + ',\n"c": {"input_cost_per_token": 4.0},\n    "b": {"input_cost_per_token": 5.0}\n}'
    for cached in (pricing._prices, pricing._entry):
        cached.cache_clear()
    monkeypatch.setattr(pricing, "_price_list", lambda: text)
    try:
        full = json.loads(text)
        assert pricing._entry("b") == full["b"] == {"input_cost_per_token": 5.0}  # the last one
        assert pricing._entry("c") == full["c"] and pricing._entry("a") == full["a"]
        assert pricing._entry("nested") is None and pricing.cost_of("openai/b", 2, 0) == 10.0
        assert pricing._prices.cache_info().currsize == 0  # never parsed whole
    finally:
        pricing._entry.cache_clear()

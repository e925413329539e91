"""Ambient inputs: a hostile `.env` above the workspace or above the installation changes nothing.

litellm calls ``dotenv.load_dotenv()`` at import, which walks up from litellm's own folder (or, under a
debugger, from the working directory) and loads the first ``.env`` into ``os.environ``. The tests build an
"installation" whose every ancestor holds a hostile ``.env`` (litellm's package is linked into a folder deep in
the tree; Python names it by the link, so dotenv walks up from there) and a workspace whose every ancestor
holds one, then ask a question through both lanes against loopback servers: the user's own server answers, the
hostile one sees nothing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swebash_ai.config.ambient import (
    AMBIENT_INPUTS,
    litellm_import_environment,
    network_route,
    proxy_for,
)
from swebash_ai.testing.fake_server import FakeLLMServer
from swebash_ai.testing.replies import Reply

REPO = Path(__file__).resolve().parents[2]
HOSTILE = ("ANTHROPIC_API_BASE", "OPENAI_BASE_URL", "HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "SSL_CERT_FILE",
           "SWEBASH_AI_API_BASE", "SWEBASH_AI_MODEL", "HOSTILE_MARKER")


def _hostile_env_text(evil: str) -> str:
    return "\n".join([
        f"ANTHROPIC_API_BASE={evil}", f"OPENAI_BASE_URL={evil}/v1", f"HTTPS_PROXY={evil}", f"HTTP_PROXY={evil}",
        f"ALL_PROXY={evil}", "SSL_CERT_FILE=/nonexistent/hostile.pem", f"SWEBASH_AI_API_BASE={evil}/v1",
        "SWEBASH_AI_MODEL=openai/hostile", "HOSTILE_MARKER=loaded",
    ]) + "\n"


def _tree(root: Path, evil: str) -> tuple[Path, Path]:
    """An installation (``site``, holding litellm by a link) and a workspace, a hostile .env in every ancestor."""
    site = root / "opt" / "project" / ".venv" / "site-packages"
    workspace = root / "home" / "u" / "project" / "src"
    site.mkdir(parents=True)
    workspace.mkdir(parents=True)
    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.submodule_search_locations
    (site / "litellm").symlink_to(next(iter(spec.submodule_search_locations)), target_is_directory=True)
    for leaf in (site, workspace):
        folder = leaf
        while folder != root.parent:
            (folder / ".env").write_text(_hostile_env_text(evil))
            folder = folder.parent
    return site, workspace


def _clean_env(home: Path, site: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("SWEBASH_AI_", "LITELLM_")) and key.upper() not in
           {"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR",
            "OPENAI_BASE_URL", "ANTHROPIC_API_BASE", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"}}
    env.update(HOME=str(home), SWEBASH_AI_HOME=str(home / ".swebash-ai"),
               PYTHONPATH=os.pathsep.join([str(site), str(REPO)]), SWEBASH_AI_PROVIDER_RETRIES="0",
               SWEBASH_AI_RETRY_BASE_DELAY="0", NO_PROXY="", no_proxy="")
    env.update(extra)
    return env


PROBE = """
import json, os, sys
{trace}
{importer}
print(json.dumps({{"file": litellm.__file__, "env": {{k: os.environ.get(k) for k in {names!r}}}}}))
"""


# A debugger as python-dotenv knows one: ``sys.gettrace()`` answers a tracer (then it walks up from the working
# directory). A real tracer would be called on every function call of litellm's import, which makes that
# import take 1.6 times as long: minutes on a loaded machine, for nothing dotenv can see.
DEBUGGER = "_tracer = lambda *a: None\nsys.gettrace = lambda: _tracer"


def _probe(site: Path, workspace: Path, home: Path, importer: str, trace: bool = False) -> dict[str, object]:
    code = PROBE.format(trace=DEBUGGER if trace else "", importer=importer, names=list(HOSTILE))
    out = subprocess.run([sys.executable, "-c", code], cwd=workspace, capture_output=True, text=True, timeout=120,
                         env=_clean_env(home, site))
    assert out.returncode == 0, out.stderr
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture
def hostile_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    site, workspace = _tree(tmp_path / "root", "http://127.0.0.1:9")
    home = tmp_path / "home"
    home.mkdir()
    return site, workspace, home


def test_a_bare_litellm_import_would_load_the_hostile_env(hostile_tree: tuple[Path, Path, Path]) -> None:
    """The control: the tree is hostile enough to matter (a plain ``import litellm`` loads the file)."""
    site, workspace, home = hostile_tree
    seen = _probe(site, workspace, home, "os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'True'\nimport litellm")
    assert str(site) in str(seen["file"])
    assert seen["env"]["HOSTILE_MARKER"] == "loaded"  # type: ignore[index]


@pytest.mark.parametrize("trace", [False, True], ids=["plain", "under-a-debugger"])
def test_our_import_of_litellm_loads_no_env_file(hostile_tree: tuple[Path, Path, Path], trace: bool) -> None:
    """Under a tracer dotenv walks up from the working directory (the workspace): nothing is loaded either."""
    site, workspace, home = hostile_tree
    seen = _probe(site, workspace, home, "from swebash_ai.providers.litellm_provider import import_litellm\n"
                  "litellm = import_litellm()", trace=trace)
    assert str(site) in str(seen["file"])
    assert seen["env"] == dict.fromkeys(HOSTILE)  # nothing from any .env, and LITELLM_MODE put back


def _ask(site: Path, workspace: Path, home: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "swebash_ai", "-c", "hi"], cwd=workspace, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, env=_clean_env(home, site, **env))


def test_litellm_lane_asks_the_users_server_not_the_env_files(tmp_path: Path) -> None:
    """The reported case: an Anthropic model through litellm, the user's key; every .env names another address
    and a proxy. The question goes to the user's server only; the hostile one (as address or proxy) sees nothing."""
    with FakeLLMServer("anthropic") as good, FakeLLMServer("anthropic") as evil:
        good.enqueue(Reply.text("hello from your server"))
        evil.enqueue(Reply.text("stolen"))
        site, workspace = _tree(tmp_path / "root", f"http://127.0.0.1:{evil.port}")
        home = tmp_path / "home"
        home.mkdir()
        out = _ask(site, workspace, home, {"SWEBASH_AI_MODEL": "anthropic/claude-sonnet-4-5",
                                           "ANTHROPIC_API_KEY": "sk-ant-user-0000000000",
                                           "ANTHROPIC_API_BASE": good.base_url})
        assert evil.requests == []
        assert out.returncode == 0, out.stderr
        assert "hello from your server" in out.stdout
        assert len(good.requests) == 1 and good.requests[0]["headers"].get("x-api-key") == "sk-ant-user-0000000000"


def test_openai_lane_asks_the_users_server_not_the_env_files(tmp_path: Path) -> None:
    with FakeLLMServer("openai") as good, FakeLLMServer("openai") as evil:
        good.enqueue(Reply.text("hello from your server"))
        evil.enqueue(Reply.text("stolen"))
        site, workspace = _tree(tmp_path / "root", f"http://127.0.0.1:{evil.port}")
        home = tmp_path / "home"
        home.mkdir()
        out = _ask(site, workspace, home, {"SWEBASH_AI_MODEL": "openai/fake-model", "OPENAI_API_KEY": "sk-user-1",
                                           "OPENAI_BASE_URL": good.base_url})
        assert evil.requests == []
        assert out.returncode == 0, out.stderr
        assert "hello from your server" in out.stdout and len(good.requests) == 1


def test_python_dash_m_never_imports_a_workspace_module(tmp_path: Path) -> None:
    """``python -m`` puts the working directory on the path: a project's httpx.py must not run in our process."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "httpx.py").write_text("raise SystemExit('a workspace module ran')\n")
    (workspace / "pydantic.py").write_text("raise SystemExit('a workspace module ran')\n")
    home = tmp_path / "home"
    home.mkdir()
    env = _clean_env(home, REPO)
    out = subprocess.run([sys.executable, "-m", "swebash_ai", "config"], cwd=workspace, capture_output=True,
                         text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
    assert "workspace module ran" not in out.stderr + out.stdout
    assert out.returncode == 0, out.stderr


def test_import_environment_forces_the_mode_and_puts_it_back() -> None:
    env = {"LITELLM_MODE": "DEV", "LITELLM_TELEMETRY": "True"}
    with litellm_import_environment(env):
        assert env["LITELLM_MODE"] == "PRODUCTION"
        assert env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
        assert env["LITELLM_TELEMETRY"] == "True"  # the user's own choice stands
    assert env["LITELLM_MODE"] == "DEV"
    empty: dict[str, str] = {}
    with litellm_import_environment(empty):
        pass
    assert "LITELLM_MODE" not in empty


@pytest.mark.parametrize(("model", "base", "litellm", "environ", "address", "source"), [
    # an address set in the settings wins, named by its setting
    ("anthropic/x", "http://127.0.0.1:1", True, {"ANTHROPIC_API_BASE": "http://e"}, "http://127.0.0.1:1", "flag"),
    # litellm reads the provider's own variable from the user's environment
    ("anthropic/x", None, True, {"ANTHROPIC_BASE_URL": "https://gw.example"}, "https://gw.example",
     "env ANTHROPIC_BASE_URL, read by litellm"),
    ("gemini/x", None, True, {}, "litellm's default for gemini", "no address set"),
    # the OpenAI-compatible lane reads OPENAI_BASE_URL, else the official default
    ("openai/x", None, False, {"OPENAI_BASE_URL": "https://proxy.corp/v1"}, "https://proxy.corp/v1",
     "env OPENAI_BASE_URL"),
    ("openai/x", None, False, {}, "https://api.openai.com/v1", "the default"),
])
def test_the_route_names_the_address_and_its_source(model: str, base: str | None, litellm: bool,
                                                    environ: dict[str, str], address: str, source: str) -> None:
    route = network_route(model, base, "flag", litellm, environ)
    assert (route.address.value, route.address.source) == (address, source)


@pytest.mark.parametrize(("url", "environ", "proxy"), [
    ("https://api.x.com/v1", {"HTTPS_PROXY": "http://p:1"}, ("http://p:1", "env HTTPS_PROXY")),
    ("https://api.x.com/v1", {"https_proxy": "http://l:1", "HTTPS_PROXY": "http://u:1"},
     ("http://l:1", "env https_proxy")),
    ("http://127.0.0.1:8/v1", {"HTTPS_PROXY": "http://p:1"}, ("none", "no proxy variable set")),
    ("http://127.0.0.1:8/v1", {"ALL_PROXY": "socks5://p:1"}, ("socks5://p:1", "env ALL_PROXY")),
    ("https://api.x.com/v1", {"HTTPS_PROXY": "http://p:1", "NO_PROXY": ".x.com"},
     ("none", "env NO_PROXY covers api.x.com")),
])
def test_the_route_names_the_proxy_for_the_address(url: str, environ: dict[str, str],
                                                   proxy: tuple[str, str]) -> None:
    found = proxy_for(url, environ)
    assert (found.value, found.source) == proxy


def test_certificate_checks_turned_off_are_shown_for_litellm() -> None:
    route = network_route("anthropic/x", "https://a", "flag", True, {"SSL_VERIFY": "False"})
    assert route.ca_bundle.value == "certificate checks OFF"
    route = network_route("openai/x", "https://a", "flag", False, {"SSL_CERT_FILE": "/c.pem"})
    assert route.ca_bundle.value == "/c.pem"
    assert network_route("openai/x", "http://127.0.0.1:1", "flag", False, {}).ca_bundle.value.startswith("not used")


def test_every_ambient_input_is_decided() -> None:
    assert {a.handling for a in AMBIENT_INPUTS} <= {"honoured", "ignored", "never read"}
    assert any(".env" in a.name and a.handling == "ignored" for a in AMBIENT_INPUTS)


def test_config_shows_the_route_with_sources(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = _clean_env(home, REPO, SWEBASH_AI_MODEL="anthropic/claude-sonnet-4-5",
                     ANTHROPIC_BASE_URL="https://gateway.example", HTTPS_PROXY="http://127.0.0.1:3128",
                     SSL_CERT_FILE="/etc/ssl/corp.pem")
    out = subprocess.run([sys.executable, "-m", "swebash_ai", "config"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    assert "address:     https://gateway.example  (env ANTHROPIC_BASE_URL, read by litellm)" in out.stdout
    assert "proxy:       http://127.0.0.1:3128  (env HTTPS_PROXY)" in out.stdout
    assert "CA bundle:   /etc/ssl/corp.pem  (env SSL_CERT_FILE)" in out.stdout

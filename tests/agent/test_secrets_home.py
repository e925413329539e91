"""The home folder used as the workspace: no credential value reaches the model, ordinary code reads unchanged.

A fresh HOME holds the usual credential files (the table below: the other assistants' auth files, cloud and
registry credentials, tunnels, a key under an innocent name, tokens in ``.bashrc`` and notes...) and a few
ordinary files. A scripted model reads every one of them, searches the tree and runs a command it was allowed
to run and one the user approved; the requests the provider received are then searched for every value.
Values are built at run time (no file of the repository holds one), each unique.
"""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent import ToolCallFinished
from swebash_ai.agent.approval import AllowApprover
from swebash_ai.config.settings import load_settings
from swebash_ai.session import Session
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

_RNG = random.Random(3232)
B64 = string.ascii_letters + string.digits + "+/"


def rand(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n - 1)) + _RNG.choice(string.digits)


def pem(label: str) -> tuple[str, str]:
    """A private key block in ``label``'s form and one of its body lines (the value that must not leak)."""
    lines = [rand(64, B64) for _ in range(8)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----\n", lines[3]


def credential_files() -> list[tuple[str, str, str]]:
    """(path under HOME, content, the secret value in it)."""
    out: list[tuple[str, str, str]] = []

    def add(path: str, template: str, secret: str) -> None:
        out.append((path, template.replace("{v}", secret), secret))

    adb, adb_line = pem("PRIVATE KEY")
    laptop, laptop_line = pem("OPENSSH PRIVATE KEY")
    sa_key, sa_line = pem("PRIVATE KEY")
    test_key, test_line = pem("RSA PRIVATE KEY")
    tests = "".join(f"def test_load_{i}():\n    assert load(KEY, {i}) is not None\n\n\n" for i in range(12))
    # By name (the protected list):
    add(".codex/auth.json", '{"OPENAI_API_KEY": "{v}", "tokens": null}\n', "sk-proj-" + rand(48))
    add(".claude/.credentials.json", '{"claudeAiOauth": {"accessToken": "{v}"}}\n', "sk-ant-oat01-" + rand(90))
    add(".gemini/oauth_creds.json", '{"access_token": "{v}", "token_type": "Bearer"}\n', "ya29." + rand(120))
    add(".android/adbkey", adb, adb_line)
    add(".config/gh/hosts.yml", "github.com:\n    user: octo\n    oauth_token: {v}\n", "gho_" + rand(36))
    add(".aws/credentials", "[default]\naws_access_key_id = AKIAQ" + rand(15, string.ascii_uppercase)
        + "\naws_secret_access_key = {v}\n", rand(40, B64))
    add(".netrc", "machine api.example.com login deploy password {v}\n", rand(20))
    add(".npmrc", "//registry.npmjs.org/:_authToken={v}\n", "npm_" + rand(36))
    add(".docker/config.json", '{"auths": {"ghcr.io": {"auth": "{v}"}}}\n',
        base64.b64encode(b"octo:" + rand(30).encode()).decode())
    add(".kube/config", "users:\n- name: admin\n  user:\n    token: {v}\n", rand(60))
    add(".git-credentials", "https://octo:{v}@github.com\n", "ghp_" + rand(36))
    add(".config/swebash-ai/config.toml", 'api_key = "{v}"\n', "sk-" + rand(40))
    add(".swebash-ai/sessions/earlier.jsonl", '{"role": "tool", "content": "{v}"}\n', "glpat-" + rand(20))
    add(".ngrok2/ngrok.yml", "authtoken: {v}\n", rand(49))
    add(".cloudflared/6f1d2a7e.json", '{"AccountTag": "x", "TunnelSecret": "{v}"}\n', rand(44, B64))
    add(".pypirc", "[pypi]\nusername = __token__\npassword = {v}\n", "pypi-AgEIcHlwaS5vcmc" + rand(70))
    # By content (names nobody lists):
    add("notes/old-laptop.txt", laptop, laptop_line)
    add("notes/deploy.txt", "GITHUB_TOKEN={v}\nrun the deploy on friday\n", "ghp_" + rand(36))
    add("notes/db.txt", "DATABASE_URL=postgres://app:{v}@db.internal:5432/app\n", rand(18))
    add("notes/alerts.sh", "curl -X POST https://hooks.slack.com/services/{v} -d @msg.json\n",
        "T" + rand(10) + "/B" + rand(10) + "/" + rand(24))
    add(".bashrc", "alias ll='ls -l'\nexport ANTHROPIC_API_KEY={v}\n", "sk-ant-api03-" + rand(90))
    add("projects/app/sa-prod.json", json.dumps({"type": "service_account", "private_key": sa_key,
                                                 "client_email": "ci@p.iam.gserviceaccount.com"}), sa_line)
    add("projects/app/test_tls.py", f'KEY = """{test_key}"""\n\n\n{tests}', test_line)
    add("projects/app/settings.py", 'DEBUG = False\nSECRET_KEY = "{v}"\n', "django-insecure-" + rand(40))
    add("projects/app/api.http", "GET https://api.example.com/me\nAuthorization: Bearer {v}\n",
        "eyJ" + rand(30) + ".eyJ" + rand(60) + "." + rand(43))
    return out


ORDINARY = {
    "projects/app/db.py": 'import os\n\npassword = os.environ["DB_PASSWORD"]\ntoken = get_token(user)\n'
                          "max_tokens = 1000\n",
    "projects/app/README.md": "Configure `aws_access_key_id = AKIAIOSFODNN7EXAMPLE` (the documented example)\n"
                              "and a local database at postgres://user:password@localhost:5432/db.\n",
    "projects/app/tls.py": 'BEGIN = "-----BEGIN RSA PRIVATE KEY-----"\n\n\ndef is_key(line):\n'
                           "    return line.strip() == BEGIN\n",
}  # fmt: skip


@pytest.fixture
def home(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(isolated_env)
    monkeypatch.setenv("SWEBASH_AI_MAX_TOOL_CALLS_PER_TURN", "100")
    return isolated_env


def write(home: Path, files: list[tuple[str, str, str]]) -> None:
    for rel, content in [*((r, c) for r, c, _s in files), *ORDINARY.items()]:
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def tool_messages(server: FakeLLMServer, index: int) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in server.requests[index]["body"]["messages"] if m["role"] == "tool"}


async def test_no_credential_reaches_the_model_from_a_home_workspace(llm_env: FakeLLMServer, home: Path) -> None:
    files = credential_files()
    write(home, files)
    calls: list[Any] = [("read_file", {"path": rel}, f"read{i}") for i, (rel, _c, _s) in enumerate(files)]
    calls += [("read_file", {"path": rel}, f"code{i}") for i, rel in enumerate(ORDINARY)]
    calls += [
        ("search", {"pattern": "TOKEN|KEY|password|BEGIN|auth|[A-Za-z0-9+/]{60}", "regex": True}, "search"),
        ("list_dir", {"path": ".", "recursive": True, "max_depth": 4, "show_hidden": True}, "list"),
        ("run_command", {"command": "cat notes/deploy.txt notes/db.txt .bashrc"}, "reader"),
        ("run_command", {"command": "python3 -c \"print(open('notes/deploy.txt').read())\""}, "approved"),
    ]
    llm_env.enqueue(Reply.tool_calls(calls), Reply.text("Done."))
    session = Session(load_settings(), approver=AllowApprover(), cwd=home, probe_ollama=False)
    events = [e async for e in session.run("look around my home folder")]
    finished = {e.call_id: e for e in events if isinstance(e, ToolCallFinished)}
    assert len(finished) == len(calls)

    sent = json.dumps([r["body"] for r in llm_env.requests])
    leaked = [rel for rel, _c, secret in files if secret in sent]
    assert leaked == [], f"values from {leaked} reached the model"
    saved = session.session_file.read_text()
    assert [rel for rel, _c, secret in files if secret in saved] == []  # nor the transcript on disk

    results = tool_messages(llm_env, 1)
    by_path = {rel: results[f"read{i}"] for i, (rel, _c, _s) in enumerate(files)}
    for rel in (".codex/auth.json", ".claude/.credentials.json", ".gemini/oauth_creds.json", ".android/adbkey",
                ".config/swebash-ai/config.toml", ".swebash-ai/sessions/earlier.jsonl", ".ngrok2/ngrok.yml",
                ".cloudflared/6f1d2a7e.json"):
        assert by_path[rel].startswith("Denied:"), (rel, by_path[rel])  # protected by name
    assert by_path["notes/old-laptop.txt"].startswith("Denied:") and "private key" in by_path["notes/old-laptop.txt"]
    for rel in ("notes/deploy.txt", "notes/db.txt", ".bashrc", "projects/app/settings.py", "projects/app/api.http"):
        assert "[masked:" in by_path[rel] and "(note:" in by_path[rel], (rel, by_path[rel])
    assert by_path["projects/app/sa-prod.json"].startswith("Denied:")  # a key with a few labels: a key file
    assert "[private key removed]" in by_path["projects/app/test_tls.py"]  # a test that embeds a key: read,
    assert "def test_load_11():" in by_path["projects/app/test_tls.py"]  # without the key
    assert "run the deploy on friday" in by_path["notes/deploy.txt"]

    for i, content in enumerate(ORDINARY.values()):
        shown = results[f"code{i}"]
        assert "masked" not in shown and "removed" not in shown, shown
        numbered = [line.split("| ", 1)[1] if "| " in line else "" for line in shown.splitlines()[1:]]
        assert numbered == content.splitlines(), shown  # ordinary code reads unchanged

    assert "[masked:" in results["approved"] and "run the deploy on friday" in results["approved"]
    assert finished["approved"].decided_by == "--yes"  # the user's approval does not unmask the output
    # a reader nobody approved: the loop's scan adds the stricter rules, with the same markers and note
    assert "GITHUB_TOKEN=[masked:github-token]" in results["reader"] and "***" not in results["reader"]
    assert results["reader"].count("(note: ") == 1
    assert "[masked:" in results["search"]
    assert finished["approved"].result.metadata["masked_kinds"] == ["github-token"]


async def test_the_output_of_an_unasked_command_is_scanned_once(
    llm_env: FakeLLMServer, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader nobody approved gets the stricter rules (a secret-named assignment, a URL password) in the loop's
    one scan: its output is read once, and the model sees each value masked and one note."""
    import swebash_ai.safety.redact as redact_module
    import swebash_ai.safety.secrets as secrets_module

    password, db = rand(16), rand(18)
    (home / "settings.env").write_text(f"DB_PASSWORD={password}\nDATABASE_URL=postgres://app:{db}@db:5432/app\n")
    scans: list[int] = []
    real = redact_module.mask_secrets

    def counting(text: str) -> Any:
        scans.append(len(text))
        return real(text)

    monkeypatch.setattr(redact_module, "mask_secrets", counting)
    monkeypatch.setattr(secrets_module, "mask_secrets", counting)  # the loop's scan imports it when it runs
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "cat settings.env"})]), Reply.text("ok"))
    session = Session(load_settings(), approver=AllowApprover(), cwd=home, probe_ollama=False)
    events = [e async for e in session.run("show the settings")]
    (result,) = tool_messages(llm_env, 1).values()
    assert password not in result and db not in result, result
    assert "DB_PASSWORD=[masked:secret-env]" in result and "app:[masked:url-password]@db" in result
    assert result.count("(note: ") == 1
    done = next(e for e in events if isinstance(e, ToolCallFinished))
    assert done.decided_by != "--yes"  # allowed by rule: nobody approved it
    assert done.result.metadata["masked_kinds"] == ["secret-env", "url-password"]
    assert len(scans) == 1, scans  # one scan of the output, not the tool's and then the loop's


async def test_a_web_result_is_masked_like_every_tool_result(llm_env: FakeLLMServer, home: Path) -> None:
    """Web, MCP and file tools alike: the loop masks every result where it becomes the model's text."""
    token = "xoxb-" + rand(12, string.digits) + "-" + rand(24)
    password = rand(16)
    found = [{"title": "leaked config", "href": f"https://admin:{password}@ci.example.com/",
              "body": f"bot token {token} pasted in an issue"}]
    session = Session(load_settings(), approver=AllowApprover(), cwd=home, probe_ollama=False,
                      services={"web_search": lambda query, n, timeout: found})
    llm_env.enqueue(Reply.tool_calls([("web_search", {"query": "our ci config"})]), Reply.text("ok"))
    events = [e async for e in session.run("search")]
    (result,) = tool_messages(llm_env, 1).values()
    assert token not in result and password not in result, result
    assert "[masked:slack-token]" in result and "https://admin:[masked:url-password]@ci.example.com/" in result
    done = next(e for e in events if isinstance(e, ToolCallFinished))
    assert done.result.metadata["masked_secrets"] == 2  # the front ends and the audit see the masked result


async def test_a_mask_written_back_is_refused_and_the_secret_kept(llm_env: FakeLLMServer, home: Path) -> None:
    """The model saw ``[masked:...]``; writing what it saw would replace the user's key with the placeholder."""
    key = "sk-ant-api03-" + rand(90)
    rc = home / "keys.sh"  # not ~/.bashrc: a write there asks a person first (persistence point)
    rc.write_text(f"export ANTHROPIC_API_KEY={key}\n")
    seen = "export ANTHROPIC_API_KEY=[masked:anthropic-key]\n"
    llm_env.enqueue(
        Reply.tool_calls([("write_file", {"path": "keys.sh", "content": seen + "alias ll='ls -l'\n"}, "w"),
                          ("edit_file", {"path": "keys.sh", "old": "export", "new": "# " + seen}, "e")]),
        Reply.text("ok"),
    )
    session = Session(load_settings(), approver=AllowApprover(), cwd=home, probe_ollama=False)
    [e async for e in session.run("add an alias")]
    results = tool_messages(llm_env, 1)
    assert results["w"].startswith("Error:") and "placeholder for a secret" in results["w"]
    assert results["e"].startswith("Error:") and "placeholder for a secret" in results["e"]
    assert rc.read_text() == f"export ANTHROPIC_API_KEY={key}\n"


async def test_a_large_result_is_scanned_too(llm_env: FakeLLMServer, home: Path) -> None:
    """Results over 128 KiB are scanned in a thread (the event loop keeps drawing): still masked."""
    token = "ghp_" + rand(36)
    (home / "build.log").write_text("".join(f"step {i}: ok\n" for i in range(30_000)) + f"push with {token}\n")
    llm_env.enqueue(Reply.tool_calls([("read_file", {"path": "build.log"})]), Reply.text("ok"))
    session = Session(load_settings(), cwd=home, probe_ollama=False)
    [e async for e in session.run("read the log")]
    (result,) = tool_messages(llm_env, 1).values()
    assert len(result) > 128 * 1024 and token not in result and "push with [masked:github-token]" in result

"""Images in one-shot: ``swebash-ai -c "what is wrong here? @shot.png"`` and ``cat shot.png | swebash-ai -c
describe`` (stdin known for an image by its magic numbers), through the real entry point, against the loopback
server."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from tests.images._pictures import picture

from ._helpers import command


def _last_user(server: FakeLLMServer) -> Any:
    return server.requests[-1]["body"]["messages"][-1]


def _pipe(data: bytes, *args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(command(*args), input=data, capture_output=True, cwd=cwd, env=env, timeout=60,
                          start_new_session=True)


def test_a_mentioned_image_is_sent_and_shown_on_stderr(llm_env: FakeLLMServer, run_cli: Any,
                                                       workspace: Path) -> None:
    data = picture("PNG", (200, 120))
    (workspace / "shot.png").write_bytes(data)
    llm_env.enqueue(Reply.text("The label overlaps the button."))
    res = run_cli("-c", "what is wrong here? @shot.png")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "The label overlaps the button."
    assert "shot.png (image, PNG, 200×120" in res.stderr
    text, image = _last_user(llm_env)["content"]
    assert text["text"].startswith("what is wrong here? @shot.png")
    assert image["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(data).decode()


def test_an_image_piped_to_stdin_is_sent_as_an_image(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                     workspace: Path) -> None:
    data = picture("JPEG", (320, 240))
    llm_env.enqueue(Reply.text("A red rectangle."))
    res = _pipe(data, "-c", "describe", env=cli_env, cwd=workspace)
    assert res.returncode == 0, res.stderr.decode()
    assert res.stdout.decode().strip() == "A red rectangle."
    assert "stdin (image, JPEG, 320×240" in res.stderr.decode()
    text, image = _last_user(llm_env)["content"]
    assert text["text"].startswith("describe\n\n[Attached by the user: stdin (image, JPEG, 320×240")
    assert "binary data" not in text["text"]
    assert image["image_url"]["url"] == "data:image/jpeg;base64," + base64.b64encode(data).decode()


def test_piped_bytes_that_are_no_image_stay_binary_data(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                        workspace: Path) -> None:
    llm_env.enqueue(Reply.text("ok"))
    res = _pipe(b"\x00\x01PNG but not one" * 10, "-c", "what is this?", env=cli_env, cwd=workspace)
    assert res.returncode == 0, res.stderr.decode()
    assert "170 bytes of binary data" in _last_user(llm_env)["content"]


def test_a_model_without_image_input_is_told_before_any_request(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                                workspace: Path) -> None:
    env = {**cli_env, "SWEBASH_AI_MODEL": "openai/gpt-3.5-turbo"}
    res = _pipe(picture("PNG"), "-c", "describe", env=env, cwd=workspace)
    assert res.returncode == 1
    assert "openai/gpt-3.5-turbo takes no images" in res.stderr.decode()
    assert llm_env.requests == []


def test_export_sends_the_image_in_the_record_and_names_it_in_the_transcript(
    llm_env: FakeLLMServer, run_cli: Any, workspace: Path
) -> None:
    data = picture("PNG", (64, 32))
    (workspace / "shot.png").write_bytes(data)
    llm_env.enqueue(Reply.text("A red bar."))
    assert run_cli("-c", "describe @shot.png").returncode == 0
    record = json.loads(run_cli("export").stdout)
    user = record["messages"][1]
    assert user["role"] == "user" and user["content"][0]["type"] == "text"
    assert user["content"][1] == {"type": "image_url",
                                  "image_url": {"url": "data:image/png;base64," + base64.b64encode(data).decode()}}
    transcript = run_cli("export", "--format", "markdown").stdout
    digest = hashlib.sha256(data).hexdigest()
    assert f"*Image* shot.png: 64×32, kept as `attachments/{digest}.png` beside the session file." in transcript
    assert base64.b64encode(data).decode()[:40] not in transcript

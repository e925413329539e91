"""What goes over the wire with an image, lane by lane, against the scripted loopback server (real HTTP): the
OpenAI ``image_url`` data URL (the httpx lane and litellm), Anthropic's base64 ``image`` source and Gemini's
``inline_data`` (litellm); a model known to take no images (no request at all) and a provider's refusal (one
request, no retry)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent import TurnFailed, TurnFinished
from swebash_ai.agent.conversation import Conversation
from swebash_ai.agent.images import ImageAttachment, image_attachment
from swebash_ai.config.settings import load_settings
from swebash_ai.errors import ImageInputError, ModelNotFoundError
from swebash_ai.providers.base import RetryingProvider
from swebash_ai.providers.http_provider import HttpProvider
from swebash_ai.providers.litellm_provider import LiteLLMProvider
from swebash_ai.session import Session
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from ._pictures import picture


def _image() -> ImageAttachment:
    got = image_attachment(picture("PNG", (120, 80)), name="shot.png")
    assert isinstance(got, ImageAttachment)
    return got


def _messages(image: ImageAttachment) -> list[dict[str, Any]]:
    conv = Conversation()
    conv.images.attach_to_next([image])
    conv.add_user("what is wrong here?", typed=True)
    return conv.for_request("You help.", 100_000)


async def _drain(provider: RetryingProvider, messages: list[dict[str, Any]]) -> None:
    async for _ in provider.stream(messages):
        pass


@pytest.mark.parametrize("lane", [HttpProvider, LiteLLMProvider], ids=["httpx", "litellm"])
async def test_openai_lanes_send_an_image_url_data_url(fake_llm: FakeLLMServer, lane: type[RetryingProvider]) -> None:
    image = _image()
    fake_llm.enqueue(Reply.text("a red square"))
    provider = lane("openai/fake-model", api_base=fake_llm.base_url, api_key="sk-x", retries=0, timeout=10)
    await _drain(provider, _messages(image))
    (request,) = fake_llm.requests
    user = request["body"]["messages"][-1]
    assert user == {"role": "user", "content": [
        {"type": "text", "text": "what is wrong here?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(image.data).decode()}},
    ]}
    assert fake_llm.violations == []


async def test_litellm_sends_anthropic_a_base64_image_source(fake_anthropic: FakeLLMServer) -> None:
    image = _image()
    fake_anthropic.enqueue(Reply.text("a red square"))
    provider = LiteLLMProvider("anthropic/claude-sonnet-4-5", api_base=fake_anthropic.base_url, api_key="sk-ant-x",
                               retries=0, timeout=10)
    await _drain(provider, _messages(image))
    (request,) = fake_anthropic.requests
    (user,) = request["body"]["messages"]
    assert user["content"] == [
        {"type": "text", "text": "what is wrong here?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": base64.b64encode(image.data).decode()}},
    ]


async def test_litellm_sends_gemini_inline_data() -> None:
    """The fake server speaks no Gemini: it records litellm's request to ``…:streamGenerateContent`` and answers
    404 (noting the unknown route), which is enough to see the wire format."""
    image = _image()
    with FakeLLMServer("openai") as server:
        provider = LiteLLMProvider("gemini/gemini-2.5-flash", api_base=server.base_url, api_key="g-key",
                                   retries=0, timeout=10)
        with pytest.raises(ModelNotFoundError):
            await _drain(provider, _messages(image))
    (request,) = server.requests
    assert ":streamGenerateContent" in request["path"] and len(server.violations) == 1
    (user,) = request["body"]["contents"]
    assert user["parts"] == [{"text": "what is wrong here?"},
                             {"inline_data": {"mime_type": "image/png", "data": base64.b64encode(image.data).decode()}}]


async def test_a_mentioned_image_goes_out_is_saved_once_by_reference_and_comes_back_on_resume(
    llm_env: FakeLLMServer, workspace: Path
) -> None:
    data = picture("PNG", (300, 200))
    (workspace / "shot.png").write_bytes(data)
    llm_env.enqueue(Reply.text("The button is cut off."), Reply.text("Still cut off."))
    session = Session(load_settings(), tools=[], probe_ollama=False)
    prepared = session.prepare("what is wrong here? @shot.png")
    assert prepared.notices == () and [i.name for i in prepared.images] == ["shot.png"]
    events = [e async for e in session.run(prepared.text, prepared.images)]
    assert isinstance(events[-1], TurnFinished)
    encoded = base64.b64encode(data).decode()
    sent = llm_env.requests[0]["body"]["messages"][-1]["content"]
    assert sent[0]["text"].startswith("what is wrong here? @shot.png\n\n[Attached by the user: shot.png (image, PNG")
    assert sent[1]["image_url"]["url"] == "data:image/png;base64," + encoded

    locations = session.loaded.locations
    stored = locations.sessions_dir / "attachments" / f"{prepared.images[0].sha256}.png"
    assert stored.read_bytes() == data and stored.stat().st_mode & 0o777 == 0o600
    assert stored.parent.stat().st_mode & 0o777 == 0o700
    saved = session.session_file.read_text()
    assert encoded[:40] not in saved  # the session holds the reference, not the image
    assert json.loads(saved.splitlines()[1])["images"] == [prepared.images[0].reference()]
    for log in (locations.audit_log, locations.turns_log):  # neither statistics nor the audit see the image
        assert not log.exists() or encoded[:40] not in log.read_text()

    again = Session(load_settings(), tools=[], probe_ollama=False)
    again.resume(None)
    [e async for e in again.run("and now?")]
    first = llm_env.requests[1]["body"]["messages"][1]
    assert first["content"][1]["image_url"]["url"] == "data:image/png;base64," + encoded  # read back from disk
    assert llm_env.requests[1]["body"]["messages"][-1] == {"role": "user", "content": "and now?"}


async def test_a_stored_image_that_changed_is_not_sent_and_the_model_is_told(
    llm_env: FakeLLMServer, workspace: Path
) -> None:
    (workspace / "shot.png").write_bytes(picture("PNG", (30, 20)))
    llm_env.enqueue(Reply.text("ok"), Reply.text("ok"))
    session = Session(load_settings(), tools=[], probe_ollama=False)
    prepared = session.prepare("see @shot.png")
    [e async for e in session.run(prepared.text, prepared.images)]
    stored = session.loaded.locations.sessions_dir / "attachments" / f"{prepared.images[0].sha256}.png"
    stored.write_bytes(picture("PNG", (31, 20)))  # not the image the hash names
    again = Session(load_settings(), tools=[], probe_ollama=False)
    again.resume(None)
    [e async for e in again.run("again")]
    parts = llm_env.requests[1]["body"]["messages"][1]["content"]
    assert [p["type"] for p in parts] == ["text", "text"]
    assert parts[1]["text"] == "[The image shot.png is no longer stored; it is not sent again.]"


async def test_a_model_known_to_take_no_images_is_refused_before_any_request(
    llm_env: FakeLLMServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWEBASH_AI_MODEL", "openai/gpt-3.5-turbo")  # listed without supports_vision
    session = Session(load_settings(), tools=[], probe_ollama=False)
    events = [e async for e in session.run("describe", [_image()])]
    (failed,) = events
    assert isinstance(failed, TurnFailed) and isinstance(failed.error, ImageInputError)
    assert "openai/gpt-3.5-turbo takes no images" in failed.error.message and "shot.png" in failed.error.message
    assert llm_env.requests == [] and session.conversation.messages == []


async def test_a_providers_refusal_of_the_image_is_said_once_without_a_retry(
    llm_env: FakeLLMServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWEBASH_AI_PROVIDER_RETRIES", "3")
    llm_env.enqueue(Reply.error(400, "Invalid content type. image_url is only supported by certain models."))
    session = Session(load_settings(), tools=[], probe_ollama=False)  # openai/fake-model: not listed, so asked
    events = [e async for e in session.run("describe", [_image()])]
    failed = next(e for e in events if isinstance(e, TurnFailed))
    assert isinstance(failed.error, ImageInputError)
    assert "refused the image" in failed.error.message and "takes images" in (failed.error.hint or "")
    assert len(llm_env.requests) == 1


@pytest.mark.parametrize(("dialect", "lane", "model"), [
    ("openai", HttpProvider, "openai/fake-model"),
    ("openai", LiteLLMProvider, "openai/fake-model"),
    ("anthropic", LiteLLMProvider, "anthropic/claude-sonnet-4-5"),
], ids=["httpx", "litellm-openai", "litellm-anthropic"])
async def test_every_lane_reports_a_refused_image_once(dialect: str, lane: type[RetryingProvider], model: str) -> None:
    with FakeLLMServer(dialect) as server:  # type: ignore[arg-type]
        server.enqueue(Reply.error(400, "This model does not support image input."))
        provider = lane(model, api_base=server.base_url, api_key="sk-x", retries=3, base_delay=0, timeout=10)
        with pytest.raises(ImageInputError) as raised:
            await _drain(provider, _messages(_image()))
        assert len(server.requests) == 1  # not retried: it would be refused again
    assert "does not support image input" in raised.value.message

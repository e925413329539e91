"""Test helpers that ship with the package: a scripted, loopback-only fake LLM server (``fake_server``)."""

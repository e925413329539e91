"""A scriptable language server over stdio, for tests and benchmarks of the language-server client.

Run as ``python -m swebash_ai.testing.fake_lsp [SCRIPT.json]``. It speaks just enough LSP: ``initialize``,
``shutdown``, ``exit``, ``didOpen`` / ``didChange`` (full text) / ``didClose``, and answers every other request
with ``null``. After each open or change it publishes diagnostics computed from the text: a line holding
``ERROR: message`` gives an error at that line (its column is where ``ERROR`` starts), ``WARN: message`` a
warning, and ``BREAKS: other.py`` an error in that other file (a change that breaks another file).

The script (a JSON object, every key optional) makes it misbehave the way real servers do:

* ``delay``: seconds before each publication;
* ``omit_version``: publish without the document's version (as many servers do);
* ``stale_first``: publish the previous version's diagnostics first, then the right ones;
* ``never``: never publish anything;
* ``publish_twice``: publish a partial list first (errors only), then the whole list;
* ``crash_on_change``: exit with code 3 at the N-th change (1 = the first ``didChange``);
* ``crash_on_start``: exit with code 3 before answering ``initialize``;
* ``ignore_shutdown``: never answer ``shutdown`` nor obey ``exit`` (it must be killed);
* ``child``: start a ``sleep`` child process (a server's helper) and write its pid to ``pid_file``;
* ``pid_file``: write this process's pid (and the child's, on the next line) there at start;
* ``log``: append every method received to this file;
* ``probe_write``: try to create this file at start (a sandboxed server cannot), and say how it went in an
  information diagnostic of every publication (``probe: wrote`` or ``probe: refused ...``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from typing import Any

_SEVERITY = {"ERROR": 1, "WARN": 2}


def _read(stream: Any) -> dict[str, Any] | None:
    length = 0
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    body = stream.read(length)
    message: dict[str, Any] = json.loads(body)
    return message


_lock = threading.Lock()


def _send(message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    with _lock:
        sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        sys.stdout.buffer.flush()


def _diagnostics(text: str, errors_only: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    found: list[dict[str, Any]] = []
    broken: list[str] = []
    for number, line in enumerate(text.split("\n")):
        for word, severity in _SEVERITY.items():
            at = line.find(word + ":")
            if at < 0 or (errors_only and severity != 1):
                continue
            found.append({
                "range": {"start": {"line": number, "character": at}, "end": {"line": number, "character": len(line)}},
                "severity": severity, "code": f"fake-{word.lower()}", "source": "fake",
                "message": line[at + len(word) + 1:].strip(),
            })
        at = line.find("BREAKS:")
        if at >= 0:
            broken.append(line[at + len("BREAKS:"):].strip())
    return found, broken


class Server:
    def __init__(self, script: dict[str, Any]) -> None:
        self.script = script
        self.probe = ""
        if script.get("probe_write"):
            try:
                with open(script["probe_write"], "w") as f:
                    f.write("written by a language server\n")
                self.probe = "probe: wrote"
            except OSError as exc:
                self.probe = f"probe: refused ({exc.strerror})"
        self.docs: dict[str, tuple[int, str]] = {}
        self.changes = 0
        self.root = ""

    def log(self, method: str) -> None:
        if self.script.get("log"):
            with open(self.script["log"], "a") as f:
                f.write(method + "\n")

    def publish(self, uri: str, version: int, text: str) -> None:
        if self.script.get("never"):
            return
        delay = float(self.script.get("delay", 0))
        previous = self.docs.get(uri)

        def go() -> None:
            if delay:
                time.sleep(delay)
            if self.script.get("stale_first") and previous is not None:
                self._publish(uri, previous[0], previous[1])
            if self.script.get("publish_twice"):
                self._publish(uri, version, text, errors_only=True)
            self._publish(uri, version, text)

        threading.Thread(target=go, daemon=True).start()

    def _publish(self, uri: str, version: int, text: str, errors_only: bool = False) -> None:
        found, broken = _diagnostics(text, errors_only)
        if self.probe:
            found.append({"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                          "severity": 3, "source": "fake", "message": self.probe})
        params: dict[str, Any] = {"uri": uri, "diagnostics": found}
        if not self.script.get("omit_version"):
            params["version"] = version
        _send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})
        folder = uri.rsplit("/", 1)[0]
        for name in broken:
            other = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                     "severity": 1, "code": "fake-broken", "source": "fake",
                     "message": f"broken by a change in {uri.rsplit('/', 1)[1]}"}
            _send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                   "params": {"uri": f"{folder}/{name}", "diagnostics": [other]}})

    def handle(self, msg: dict[str, Any]) -> bool:
        method = msg.get("method", "")
        self.log(method)
        params = msg.get("params") or {}
        if method == "initialize":
            if self.script.get("crash_on_start"):
                sys.exit(3)
            self.root = params.get("rootUri") or ""
            _send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "capabilities": {"textDocumentSync": 1}, "serverInfo": {"name": "fake-lsp", "version": "1"}}})
        elif method == "shutdown":
            if not self.script.get("ignore_shutdown"):
                _send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif method == "exit":
            if not self.script.get("ignore_shutdown"):
                return False
        elif method == "textDocument/didOpen":
            doc = params["textDocument"]
            self.publish(doc["uri"], doc["version"], doc["text"])
            self.docs[doc["uri"]] = (doc["version"], doc["text"])
        elif method == "textDocument/didChange":
            self.changes += 1
            if self.changes == self.script.get("crash_on_change"):
                sys.exit(3)
            doc = params["textDocument"]
            text = params["contentChanges"][-1]["text"]
            self.publish(doc["uri"], doc["version"], text)
            self.docs[doc["uri"]] = (doc["version"], text)
        elif method == "textDocument/didClose":
            self.docs.pop(params["textDocument"]["uri"], None)
        elif "id" in msg:
            _send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        return True


def main(argv: list[str]) -> int:
    script: dict[str, Any] = {}
    if argv:
        with open(argv[0]) as f:
            script = json.load(f)
    child = None
    if script.get("child"):
        child = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    if script.get("pid_file"):
        with open(script["pid_file"], "w") as f:
            f.write(f"{os.getpid()}\n{child.pid if child else ''}\n")
    server = Server(script)
    while True:
        msg = _read(sys.stdin.buffer)
        if msg is None:
            if script.get("ignore_shutdown"):
                time.sleep(600)
            return 0
        if not server.handle(msg):
            return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A local OpenAI-compatible HTTP server with scripted replies, for tests (no network).

It answers ``POST /v1/chat/completions`` (and ``GET /v1/models``) on 127.0.0.1 at a free port.
Each request takes the next scripted reply from a queue, or, when the queue is empty, calls the
``responder`` function with the request's JSON. A reply is one of:

- ``str``: the assistant's message content (usage is reported unless ``report_usage=False``);
- :class:`Status`: an HTTP error (e.g. ``Status(429, retry_after=0)``, ``Status(500)``);
- :class:`Raw`: a raw response body, e.g. malformed JSON;
- :class:`Slow`: another reply sent only after a delay (a client with a shorter timeout sees a
  timeout; the late write to its closed socket is ignored).

Every request is recorded in ``server.requests`` (parsed JSON bodies) so tests can count calls
and read prompts. Use the ``fake_llm`` fixture (import it into a test module) or the class
directly as a context manager.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Status:
    code: int
    retry_after: float | None = None
    message: str = "scripted error"


@dataclass
class Raw:
    body: str
    code: int = 200
    content_type: str = "application/json"


@dataclass
class Slow:
    seconds: float
    reply: "str | Status | Raw"


Reply = str | Status | Raw | Slow
Responder = Callable[[dict[str, Any]], Reply]


def _approx_tokens(text: str) -> int:
    from kg_platform.tokens import count_tokens

    return count_tokens(text)


class FakeOpenAI:
    """Scripted OpenAI-compatible server. ``base_url`` ends in ``/v1`` like the real ones."""

    def __init__(
        self, responder: Responder | None = None, *, report_usage: bool = True, delay_s: float = 0.0
    ) -> None:
        self.replies: queue.Queue[Reply] = queue.Queue()
        self.responder = responder
        self.report_usage = report_usage
        self.delay_s = delay_s
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # -------------------------------------------------------------- control
    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply) -> "FakeOpenAI":
        for r in replies:
            self.replies.put(r)
        return self

    @property
    def calls(self) -> int:
        return len(self.requests)

    def prompts(self) -> list[str]:
        """The last user message of every recorded request."""
        out = []
        for req in self.requests:
            users = [m["content"] for m in req.get("messages", []) if m.get("role") == "user"]
            out.append(users[-1] if users else "")
        return out

    def start(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "FakeOpenAI":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -------------------------------------------------------------- serving
    def _next_reply(self, body: dict[str, Any]) -> Reply:
        try:
            return self.replies.get_nowait()
        except queue.Empty:
            if self.responder is None:
                return Status(500, message="fake server: no scripted reply left")
            return self.responder(body)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(
                self,
                code: int,
                body: str,
                ctype: str = "application/json",
                headers: dict[str, str] | None = None,
            ) -> None:
                data = body.encode("utf-8")
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): what a real server would see too

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(
                        200,
                        json.dumps(
                            {
                                "object": "list",
                                "data": [
                                    {"id": "fake-model", "object": "model", "owned_by": "tests"}
                                ],
                            }
                        ),
                    )
                else:
                    self._send(404, json.dumps({"error": {"message": "not found"}}))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8")
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(400, json.dumps({"error": {"message": "bad json"}}))
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": "not found"}}))
                    return
                with fake._lock:
                    fake.requests.append(body)
                    fake._in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake._in_flight)
                try:
                    if fake.delay_s:
                        time.sleep(fake.delay_s)
                    reply = fake._next_reply(body)
                    self._answer(body, reply)
                finally:
                    with fake._lock:
                        fake._in_flight -= 1

            def _answer(self, body: dict[str, Any], reply: Reply) -> None:
                if isinstance(reply, Slow):
                    time.sleep(reply.seconds)
                    self._answer(body, reply.reply)
                    return
                if isinstance(reply, Status):
                    headers = {}
                    if reply.retry_after is not None:
                        headers["Retry-After"] = str(reply.retry_after)
                    self._send(
                        reply.code,
                        json.dumps(
                            {
                                "error": {
                                    "message": reply.message,
                                    "type": "scripted",
                                    "code": reply.code,
                                }
                            }
                        ),
                        headers=headers,
                    )
                    return
                if isinstance(reply, Raw):
                    self._send(reply.code, reply.body, reply.content_type)
                    return
                payload: dict[str, Any] = {
                    "id": f"chatcmpl-fake-{len(fake.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "fake-model"),
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": reply},
                        }
                    ],
                }
                if fake.report_usage:
                    pt = (
                        sum(
                            _approx_tokens(str(m.get("content") or "")) + 4
                            for m in body.get("messages", [])
                        )
                        + 3
                    )
                    ct = _approx_tokens(reply)
                    payload["usage"] = {
                        "prompt_tokens": pt,
                        "completion_tokens": ct,
                        "total_tokens": pt + ct,
                    }
                self._send(200, json.dumps(payload))

        return Handler


@pytest.fixture()
def fake_llm() -> Iterator[FakeOpenAI]:
    """A running scripted server; script replies with ``fake_llm.script(...)`` or set
    ``fake_llm.responder``."""
    with FakeOpenAI() as server:
        yield server


def llm_settings_for(server: FakeOpenAI, cache_dir: Any, **llm: Any) -> Any:
    """``Settings`` whose LLM points at ``server`` with instant retries and ``cache_dir``."""
    from kg_platform.config import Settings

    cfg = {
        "base_url": server.base_url,
        "model": "fake-model",
        "api_key": "test",
        "retry_base_s": 0.0,
        "retry_max_s": 0.0,
        "max_retries": 3,
    }
    cfg.update(llm)
    return Settings(llm=cfg, cache_dir=cache_dir)

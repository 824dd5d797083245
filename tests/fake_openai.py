"""A real OpenAI-compatible HTTP server on 127.0.0.1 whose behaviour a test sets: the chat model's faults,
reproduced on the wire so the real `openai` client (through `langchain-openai`) meets them.

Modes (`server.mode`):
  ok       streams a grounded reply: the first sentence of source [1] of the prompt, cited "[1]"
  error    HTTP 500 with an OpenAI-style error body
  auth     HTTP 401 whose message echoes the API key it was sent (as api.openai.com does, partly)
  garbage  HTTP 200, `text/event-stream`, bytes that are not server-sent events of JSON
  slow     waits `server.delay` seconds before the first byte (for client timeouts)
  die      streams two chunks, then drops the connection (a server killed mid-answer)

Every request body is kept in `server.requests` (to measure prompt sizes and see what was sent).
`server.reply_delay` spaces the streamed chunks (a model that takes time, for load tests).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_SOURCE_ONE = re.compile(r"^\[1\] [^\n]*\n(.+?)(?:\n\n|\Z)", re.MULTILINE | re.DOTALL)


def grounded_reply(prompt: str) -> str:
    """The first sentence of source [1], cited; or the refusal wording when there is no source."""
    found = _SOURCE_ONE.search(prompt)
    if not found:
        return "The retrieved papers do not cover this question."
    first = re.split(r"(?<=[.!?])\s+", found.group(1).strip())[0].rstrip(".")
    return f"{first} [1]."


def _chunk(content: str, finish: str | None = None) -> bytes:
    body = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\n\n".encode()


class _Handler(BaseHTTPRequestHandler):
    server: "FakeOpenAI"
    protocol_version = "HTTP/1.1"  # streams are chunked, as llama.cpp's and OpenAI's are

    def _send_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def log_message(self, *args) -> None:  # quiet
        pass

    def _json(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # /health and /v1/models, like llama.cpp's server
        self._json(200, {"status": "ok", "data": [{"id": "fake"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        fake = self.server
        with fake.lock:
            fake.requests.append({"body": body, "auth": self.headers.get("Authorization", "")})
            fake.active += 1
            fake.max_active = max(fake.max_active, fake.active)
        try:
            self._reply(body)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with fake.lock:
                fake.active -= 1

    def _reply(self, body: dict) -> None:
        fake = self.server
        mode = fake.mode
        if mode == "error":
            return self._json(500, {"error": {"message": "internal failure", "type": "server_error"}})
        if mode == "auth":
            key = self.headers.get("Authorization", "").removeprefix("Bearer ")
            return self._json(401, {"error": {"message": f"Incorrect API key provided: {key}.",
                                              "type": "invalid_request_error", "code": "invalid_api_key"}})
        if mode == "slow":
            time.sleep(fake.delay)
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        words = grounded_reply(prompt).split(" ")
        if not body.get("stream"):
            return self._json(200, {"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
                                    "choices": [{"index": 0, "finish_reason": "stop",
                                                 "message": {"role": "assistant", "content": " ".join(words)}}]})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if mode == "garbage":
            self._send_chunk(b"data: {not json at all\n\n\x00\xff\xfe garbage <html>\n\n")
            self._send_chunk(b"")
            return
        for i, word in enumerate(words):
            if mode == "die" and i == 2:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)  # no last chunk: a server killed mid-answer
                return
            self._send_chunk(_chunk(word if i == 0 else " " + word))
            if fake.reply_delay:
                time.sleep(fake.reply_delay / max(len(words), 1))
        self._send_chunk(_chunk("", "stop") + b"data: [DONE]\n\n")
        self._send_chunk(b"")


class FakeOpenAI(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int = 0, mode: str = "ok"):
        super().__init__(("127.0.0.1", port), _Handler)
        self.mode, self.delay, self.reply_delay = mode, 5.0, 0.0
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.active = self.max_active = 0
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> "FakeOpenAI":
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()

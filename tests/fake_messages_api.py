"""A scripted fake of the Anthropic Messages API, for running the real Claude Code CLI offline.

The CLI only calls `POST /v1/messages?beta=true` with `"stream": true`, one request per model turn,
and expects the server-sent-event sequence below (see the CLI spec): message_start, then per content
block content_block_start / content_block_delta / content_block_stop, then message_delta and
message_stop. A test scripts the model as a list of turns; each request takes the next turn. Every
request body is recorded so a test can prove what the CLI sent (and what it never sent).

The server listens on 127.0.0.1 only, on a free port, and shuts itself down after `lifetime`
seconds even if a test forgets to stop it.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAKE_MODEL = "claude-sonnet-4-5-20250929"


@dataclass(frozen=True)
class Text:
    """A text content block."""

    text: str


@dataclass(frozen=True)
class ToolUse:
    """A tool_use content block: the model asks the CLI to run `name` with `input`."""

    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """One model turn: the content blocks it streams, and the usage it reports."""

    blocks: tuple[Text | ToolUse, ...]
    input_tokens: int = 1200
    output_tokens: int = 40

    @property
    def stop_reason(self) -> str:
        return "tool_use" if any(isinstance(b, ToolUse) for b in self.blocks) else "end_turn"


@dataclass(frozen=True)
class HttpError:
    """A turn answered with an HTTP error instead of a stream."""

    status: int
    error_type: str = "api_error"
    message: str = "Internal server error"


def turn(*blocks: Text | ToolUse, input_tokens: int = 1200, output_tokens: int = 40) -> Turn:
    return Turn(blocks=blocks, input_tokens=input_tokens, output_tokens=output_tokens)


def structured_output(answer: dict[str, Any], **usage: int) -> Turn:
    """The turn that ends a `--json-schema` run: a call of the CLI's StructuredOutput tool."""
    return turn(ToolUse("StructuredOutput", answer), **usage)


Script = list[Turn | HttpError] | Callable[[int, dict[str, Any]], Turn | HttpError]


@dataclass
class FakeMessagesApi:
    """Run with `with FakeMessagesApi(script) as api:` and point ANTHROPIC_BASE_URL at `api.url`."""

    script: Script
    lifetime: float = 120.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    other_requests: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._stopper = threading.Timer(self.lifetime, self.stop)
        self._stopper.daemon = True

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeMessagesApi:
        self._thread.start()
        self._stopper.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stopper.cancel()
        self._server.shutdown()
        self._server.server_close()

    def all_request_text(self) -> str:
        """Every request body as one string, to prove something never reached the model."""
        return "\n".join(json.dumps(body) for body in self.requests)

    def tool_results(self) -> list[str]:
        """The text of every tool_result the CLI sent back, in order."""
        results: list[str] = []
        for body in self.requests:
            for message in body.get("messages", []):
                content = message.get("content")
                if not isinstance(content, list):
                    continue
                for block in content:
                    if block.get("type") == "tool_result":
                        results.append(_tool_result_text(block))
        # Later requests repeat earlier turns: keep each result once, in first-seen order.
        return list(dict.fromkeys(results))

    def _next_turn(self, body: dict[str, Any]) -> Turn | HttpError:
        with self._lock:
            index = len(self.requests)
            self.requests.append(body)
        if callable(self.script):
            return self.script(index, body)
        if index < len(self.script):
            return self.script[index]
        return turn(Text("The script has no more turns."))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                """Keep test output quiet."""

            def do_HEAD(self) -> None:
                api.other_requests.append(f"HEAD {self.path}")
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                api.other_requests.append(f"GET {self.path}")
                self._send_json(404, {"type": "error", "error": {"type": "not_found_error"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                if self.path.split("?", 1)[0] != "/v1/messages":
                    api.other_requests.append(f"POST {self.path}")
                    self._send_json(404, {"type": "error", "error": {"type": "not_found_error"}})
                    return
                reply = api._next_turn(json.loads(raw or b"{}"))
                if isinstance(reply, HttpError):
                    error = {"type": reply.error_type, "message": reply.message}
                    self._send_json(reply.status, {"type": "error", "error": error})
                    return
                self._send_stream(reply)

            def _send_json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _send_stream(self, reply: Turn) -> None:
                data = "".join(_sse_frames(reply, next(api._ids))).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _frame(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def _sse_frames(reply: Turn, message_number: int) -> list[str]:
    message = {
        "id": f"msg_fake{message_number:04d}",
        "type": "message",
        "role": "assistant",
        "model": FAKE_MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": reply.input_tokens,
            "output_tokens": 1,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }
    frames = [_frame("message_start", {"type": "message_start", "message": message})]
    for index, block in enumerate(reply.blocks):
        if isinstance(block, Text):
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block.text}
        else:
            tool_id = f"toolu_fake{message_number:04d}{index:02d}"
            start = {"type": "tool_use", "id": tool_id, "name": block.name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.input)}
        frames += [
            _frame(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            ),
            _frame(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            ),
            _frame("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    frames += [
        _frame(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": reply.output_tokens},
            },
        ),
        _frame("message_stop", {"type": "message_stop"}),
    ]
    return frames


def _tool_result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""

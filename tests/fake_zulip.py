"""A fake Zulip on 127.0.0.1: `POST /api/v1/messages` and `GET /api/v1/users/me`, as Zulip's REST API answers.

    with FakeZulip() as zulip:                       # http://127.0.0.1:<port>
        ... ZULIP_SITE=zulip.url, ZULIP_EMAIL=zulip.email, ZULIP_API_KEY=zulip.api_key ...
        zulip.messages                               # [{"to": ..., "topic": ..., "content": ...}]

Unknown streams answer 400 STREAM_DOES_NOT_EXIST, wrong credentials 401. Stops by itself after `lifetime`.
"""

from __future__ import annotations

import base64
import json
import threading
from typing import Any

from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response


class _Quiet(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


class FakeZulip:
    def __init__(self, *, streams: tuple[str, ...] = ("ops",), lifetime: float = 600.0) -> None:
        self.email = "rounds-bot@example.zulipchat.com"
        self.api_key = "zulip-test-key"
        self.streams = set(streams)
        self.messages: list[dict[str, Any]] = []
        self._server = make_server("127.0.0.1", 0, self._app, threaded=True, request_handler=_Quiet)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._timer = threading.Timer(lifetime, self.stop)
        self._timer.daemon = True

    def __enter__(self) -> FakeZulip:
        self._thread.start()
        self._timer.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._timer.cancel()
        self._server.shutdown()
        self._server.server_close()

    def _app(self, environ: dict, start_response: Any) -> Any:
        request = Request(environ)
        response = self._answer(request)
        return response(environ, start_response)

    def _answer(self, request: Request) -> Response:
        if not self._authorised(request):
            return _json(401, {"result": "error", "msg": "Invalid API key", "code": "INVALID_API_KEY"})
        if request.method == "GET" and request.path == "/api/v1/users/me":
            return _json(200, {"result": "success", "msg": "", "email": self.email, "full_name": "rounds"})
        if request.method == "POST" and request.path == "/api/v1/messages":
            form = request.form
            if form.get("type") not in ("stream", "channel"):
                return _json(400, {"result": "error", "msg": "Invalid message type", "code": "BAD_REQUEST"})
            if form.get("to") not in self.streams:
                return _json(
                    400,
                    {
                        "result": "error",
                        "msg": f"Stream '{form.get('to')}' does not exist",
                        "code": "STREAM_DOES_NOT_EXIST",
                        "stream": form.get("to"),
                    },
                )
            if len(form.get("content", "").encode()) > 10_000:
                return _json(400, {"result": "error", "msg": "Message too long", "code": "BAD_REQUEST"})
            self.messages.append({k: form.get(k) for k in ("type", "to", "topic", "content")})
            return _json(200, {"result": "success", "msg": "", "id": 1000 + len(self.messages)})
        return _json(404, {"result": "error", "msg": "Not Found", "code": "BAD_REQUEST"})

    def _authorised(self, request: Request) -> bool:
        scheme, _, encoded = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            email, _, key = base64.b64decode(encoded).decode().partition(":")
        except ValueError:
            return False
        return (email, key) == (self.email, self.api_key)


def _json(status: int, payload: dict[str, Any]) -> Response:
    return Response(json.dumps(payload), status=status, content_type="application/json")

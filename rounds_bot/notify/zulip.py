"""Round summaries and new-issue notices in a Zulip stream, through Zulip's REST API.

    POST {ZULIP_SITE}/api/v1/messages     (HTTP basic auth: ZULIP_EMAIL and ZULIP_API_KEY)
        type=stream  to=<ROUNDS_ZULIP_STREAM>  topic=<ROUNDS_ZULIP_TOPIC>  content=<Zulip Markdown>
    -> {"result": "success", "msg": "", "id": 42}
    -> {"result": "error", "msg": "Stream 'x' does not exist", "code": "STREAM_DOES_NOT_EXIST"}  (400)

    GET {ZULIP_SITE}/api/v1/users/me      who the key belongs to (`rounds doctor` checks the credentials)

Off unless all four of ZULIP_SITE, ZULIP_EMAIL, ZULIP_API_KEY and ROUNDS_ZULIP_STREAM are set; a partial
configuration is an error that names what is missing. Text from telemetry (titles, services) is shown inside
inline code, where Zulip renders no mention (`@**all**`), link or formatting.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from rounds_bot.errors import ConfigError, NotifyError
from rounds_bot.models import Frozen
from rounds_bot.settings import Settings

# Zulip refuses message content over 10,000 bytes.
MAX_CONTENT_BYTES = 10_000
# A rate-limited send waits at most this long for one retry; longer and the notice is reported as not sent.
MAX_RETRY_WAIT_SECONDS = 10.0
_VARIABLES = ("ZULIP_SITE", "ZULIP_EMAIL", "ZULIP_API_KEY", "ROUNDS_ZULIP_STREAM")


class ZulipTarget(Frozen):
    site: str
    email: str
    stream: str
    topic: str


class ZulipNotifier:
    def __init__(
        self,
        target: ZulipTarget,
        api_key: str,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout_seconds: float = 15.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.target = target
        self._client = httpx.Client(
            base_url=target.site.rstrip("/"),
            auth=(target.email, api_key),
            timeout=timeout_seconds,
            transport=transport,
            headers={"User-Agent": "rounds-bot"},
        )
        self._sleep = sleep

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> ZulipNotifier:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def send(self, content: str) -> int:
        """Post one message to the stream and topic; its id. Raises NotifyError."""
        form = {
            "type": "stream",
            "to": self.target.stream,
            "topic": self.target.topic,
            "content": fit(content),
        }
        data = self._request(
            "POST", "/api/v1/messages", f"post to the stream {self.target.stream!r}", data=form
        )
        return int(data.get("id") or 0)

    def whoami(self) -> str:
        """The full name and email the credentials belong to (no message is posted)."""
        data = self._request("GET", "/api/v1/users/me", "read the bot's own profile")
        return f"{data.get('full_name', '?')} <{data.get('email', self.target.email)}>"

    def _request(
        self, method: str, path: str, what: str, data: dict[str, str] | None = None
    ) -> dict[str, Any]:
        for attempt in range(2):
            try:
                response = self._client.request(method, path, data=data)
            except httpx.HTTPError as exc:
                raise NotifyError(
                    f"Zulip at {self.target.site} did not answer when asked to {what}: "
                    f"{exc.__class__.__name__}: {exc}",
                    hint="check ZULIP_SITE and that the runner can reach it",
                ) from exc
            if response.status_code == 429 and attempt == 0:
                wait = _retry_after(response)
                if wait is not None and wait <= MAX_RETRY_WAIT_SECONDS:
                    self._sleep(wait)
                    continue
            return self._answer(response, what)
        raise AssertionError("unreachable: the second attempt always returns or raises")

    def _answer(self, response: httpx.Response, what: str) -> dict[str, Any]:
        """Zulip's JSON answer, an object; a refusal raises NotifyError with what Zulip said."""
        payload: dict[str, Any]
        try:
            payload = response.json()
        except ValueError:
            payload = {}
        message = str(payload.get("msg") or response.reason_phrase)
        if response.status_code == 401:
            raise NotifyError(
                f"Zulip at {self.target.site} refused the credentials of {self.target.email}: {message}",
                hint="set ZULIP_EMAIL to the bot's email and ZULIP_API_KEY to its API key (Settings -> Bots)",
            )
        if response.status_code != 200 or payload.get("result") != "success":
            code = payload.get("code")
            said = f"{message} ({code})" if code else message
            raise NotifyError(
                f"Zulip refused to {what}: {response.status_code} {said}",
                hint="check ROUNDS_ZULIP_STREAM exists and the bot is subscribed to it"
                if code == "STREAM_DOES_NOT_EXIST"
                else None,
            )
        return payload


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        try:
            value = response.json().get("retry-after")
        except ValueError:
            return None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def fit(content: str) -> str:
    """At most MAX_CONTENT_BYTES of UTF-8, cut at a line when it has to be cut."""
    encoded = content.encode("utf-8")
    if len(encoded) <= MAX_CONTENT_BYTES:
        return content
    note = "\n\n… (cut to fit Zulip's message size)"
    cut = encoded[: MAX_CONTENT_BYTES - len(note.encode("utf-8"))].decode("utf-8", errors="ignore")
    if "\n" in cut:
        cut = cut[: cut.rfind("\n")]
    return cut + note


def code(text: str, limit: int = 120) -> str:
    """Untrusted text as inline code: no mention, link or formatting can come out of it."""
    text = " ".join(str(text).split()).replace("`", "'")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"`{text}`" if text else "`?`"


def zulip_from_settings(
    settings: Settings, *, transport: httpx.BaseTransport | None = None
) -> ZulipNotifier | None:
    """The notifier, or None when Zulip is not configured at all. Half a configuration is a ConfigError."""
    values = {
        "ZULIP_SITE": settings.zulip_site,
        "ZULIP_EMAIL": settings.zulip_email,
        "ZULIP_API_KEY": settings.zulip_api_key,
        "ROUNDS_ZULIP_STREAM": settings.zulip_stream,
    }
    missing = [name for name in _VARIABLES if not values[name]]
    if len(missing) == len(_VARIABLES):
        return None
    if missing:
        raise ConfigError(
            f"Zulip notifications are half configured: {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not set",
            hint="set all of " + ", ".join(_VARIABLES) + ", or none to turn notifications off",
        )
    assert settings.zulip_api_key is not None
    target = ZulipTarget(
        site=str(settings.zulip_site),
        email=str(settings.zulip_email),
        stream=str(settings.zulip_stream),
        topic=settings.zulip_topic,
    )
    return ZulipNotifier(target, settings.zulip_api_key.get_secret_value(), transport=transport)

"""A problem's headline: one line a maintainer reads first, from the occurrence's own (redacted) words.

    exception   KeyError: 'currency'
    HTTP error  502 from POST api.paymentsprovider.example/v1/charges   (a call out; OTel HTTP conventions)
                504 on GET /api/recommendations/:productId              (a request in)
    error log   SMTP_421: Delivery of message <…> to customer 48317 failed: (421, b'4.7.0 mx2.relay.m…

The error code comes first when the event has one; text is cut at a word boundary with an ellipsis. A log or
span error's headline takes the problem's template instead of the instance's words when the grouping engine
gives one (`headline(event, template=...)`: parameters as placeholders, `label request for shipment <*> failed
after <*> attempts`); the instance's values stay in the body. No headline shows a redaction marker: a redacted
value reads as a placeholder of its category (`[REDACTED:email]` becomes `<email>`).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from rounds_bot.grouping.exception_chain import shown_type
from rounds_bot.models import AttributeValue, ErrorEvent

ELLIPSIS = "…"
HEADLINE_CHARS = 110
# A cut may go back this far to find a word boundary; past that, a long word is cut where it stands.
_BOUNDARY_REACH = 24
# rounds' redaction marker (`redact.rule.REDACTED`), with the angle brackets a message may hold it in
_MARKER = re.compile(r"<?\[REDACTED:([A-Za-z0-9_.-]+)\]>?")


def headline(event: ErrorEvent, *, template: str | None = None, limit: int = HEADLINE_CHARS) -> str:
    """The headline of `event`, at most `limit` characters; a log or span error's message replaced by the
    problem's `template` (the mined template, else the normalised message) when there is one."""
    if template and event.kind != "exception":
        event = event.model_copy(update={"message": template})
    text = _http_headline(event) or _typed_message(event)
    code = event.error_code
    if code and code not in text:
        text = f"{code}: {text}" if text else code
    return trim(unmarked(text) or "(no message)", limit)


def unmarked(text: str) -> str:
    """`text` with each redaction marker shown as a placeholder of its category: `<email>`."""
    return _MARKER.sub(lambda m: f"<{m.group(1)}>", text)


def summary_of(event: ErrorEvent) -> str:
    """The occurrence in a sentence: its message, or for an HTTP error what was called and what came back."""
    return _http_headline(event) or " ".join(event.message.split())


def trim(text: str, limit: int) -> str:
    """One line of at most `limit` characters, cut at a word boundary with an ellipsis when too long."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - len(ELLIPSIS)]
    space = cut.rfind(" ")
    if space >= len(cut) - _BOUNDARY_REACH and space > 0:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + ELLIPSIS


def _typed_message(event: ErrorEvent) -> str:
    message = " ".join(event.message.split())
    kind = shown_type(event.error_type)
    if not kind or kind.isdigit():
        return message
    if message.startswith((f"{kind}:", f"{(event.error_type or '').strip()}:")):
        return message  # the message already names its type: "KeyError: 'user_id'"
    return f"{kind}: {message}" if message else kind


def _http_headline(event: ErrorEvent) -> str | None:
    """`<status> from <METHOD> <host/path>` for a call out; `<status> on <METHOD> <route>` for one in."""
    if event.kind != "span_error":
        return None
    attributes = event.attributes
    status = _text(attributes.get("http.response.status_code")) or _numeric(event.error_type)
    method = _text(attributes.get("http.request.method"))
    if not status or not method:
        return None
    target = _remote_target(attributes)
    if target:
        line = f"{status} from {method} {target}"
    else:
        route = _text(attributes.get("http.route")) or _text(attributes.get("url.path")) or ""
        line = f"{status} on {method} {route}".rstrip()
    detail = " ".join(event.message.split())
    if detail and detail not in (method, f"{method} {attributes.get('http.route') or ''}".strip()):
        line = f"{line}: {detail}"
    return line


def _remote_target(attributes: dict[str, AttributeValue]) -> str | None:
    """Where a client call went: host and path of `url.full`, else `server.address` and `url.path`."""
    full = _text(attributes.get("url.full"))
    if full:
        try:
            parts = urlsplit(full)
            host = parts.hostname
        except ValueError:  # not a URL after all (a redacted one, `http://[REDACTED:…]`)
            host = None
        if host:
            return f"{host}{parts.path}"
    server = _text(attributes.get("server.address"))
    if server:
        return f"{server}{_text(attributes.get('url.path')) or ''}"
    return None


def _text(value: AttributeValue | None) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    text = str(value).strip()
    return text or None


def _numeric(value: str | None) -> str | None:
    return value.strip() if value and value.strip().isdigit() else None

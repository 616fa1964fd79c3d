"""Whether a frame's URL is a browser extension's: code the user installed in their browser, never the app's.

Extensions inject content scripts into every page and wrap the page's functions (`fetch`, `addEventListener`,
`console`): their frames sit inside the app's traces, innermost or between the app's own, and differ with
every user's extensions. The URL schemes are those Sentry's Relay recognises an event an extension caused by
(`relay-filter/src/browser_extensions.rs`, `EXTENSION_EXC_SOURCES`, a case-insensitive pattern): Chrome's
`chrome-extension://` (and `chrome://`, Chrome's pages and Firefox's own browser code), Firefox's
`moz-extension://`, Safari's `safari-extension://` and `safari-web-extension://`, and the
`webkit-masked-url://hidden/` Safari prints instead of an extension's URL it hides, matched anywhere in it.
"""

from __future__ import annotations

_EXTENSION_SCHEMES = (
    "chrome://",
    "chrome-extension://",
    "moz-extension://",
    "safari-extension://",
    "safari-web-extension://",
)
_MASKED_EXTENSION = "webkit-masked-url"


def is_browser_extension(path: str) -> bool:
    """Whether a frame's file (a URL, as browsers print it) is a browser extension's."""
    lowered = path.lower()
    return lowered.startswith(_EXTENSION_SCHEMES) or _MASKED_EXTENSION in lowered


#: what every extension's URL holds somewhere (each scheme above ends in one of the first two)
_MENTIONS = ("-extension://", "chrome://", _MASKED_EXTENSION)


def mentions_browser_extension(text: str) -> bool:
    """Whether a printed stack trace may hold a browser extension's frame: it names an extension's URL
    anywhere. A trace that names none has no such frame, and need not be parsed to tell (a few microseconds
    for a trace of a thousand characters)."""
    lowered = text.lower()
    return any(mention in lowered for mention in _MENTIONS)

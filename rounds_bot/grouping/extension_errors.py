"""Whether an error was raised in a browser extension: its stack trace has frames, and every one of them is a
browser extension's (`browser_extensions`), by the in-app rules (`inapp`), so no code of the app, its tests or
any library it ships ran. Such an error is no bug the team can fix, whatever the extension broke.

Sentry's inbound filter "browser extensions" (Relay's `relay-filter/src/browser_extensions.rs`) drops such
errors before they are stored; rounds asks for more before it holds one back: *every* frame an extension's,
not the innermost alone, since an extension that wraps the app's `fetch` is the innermost frame of the app's
own bugs too. A frame the in-app rules make the app's (ROUNDS_IN_APP_INCLUDE naming the extension's URL, say)
is the app's here as well.
"""

from __future__ import annotations

from rounds_bot.grouping.browser_extensions import mentions_browser_extension
from rounds_bot.grouping.inapp import EXTENSION, InAppRules
from rounds_bot.grouping.stacktrace import parse_stacktrace


def raised_in_browser_extension(stacktrace: str | None, rules: InAppRules) -> bool:
    """Whether a printed stack trace has at least one frame and every frame is a browser extension's."""
    # almost every trace names no extension: it is not parsed to tell
    if not stacktrace or not mentions_browser_extension(stacktrace):
        return False
    trace = parse_stacktrace(stacktrace)
    if trace is None:
        return False
    # asked once per signature without an issue: the roles are not kept in the rules' trace memo
    roles = [role for exception in rules.roles(trace, remember=False).frames for role in exception]
    return bool(roles) and all(role.reason == EXTENSION for role in roles)

"""A trace's `site` hash: its service, its chain's exception types and its crash site with the root cause's
(`crash_site.Site`), what one problem has in common wherever it was called from (`fingerprint` registers it
beside the frames' hashes).

A framework's wrapper is no part of those types (`unwrapped`): the same exception reaches a trace's spans
wrapped and bare. Releases before kept the wrapper's type; the site hash they gave is still looked up
(`fingerprint.trace_fingerprint`).
"""

from __future__ import annotations

from rounds_bot.grouping.components import Component, leaf, node
from rounds_bot.grouping.crash_site import Site
from rounds_bot.grouping.exception_chain import short_type
from rounds_bot.grouping.inapp import TraceRoles
from rounds_bot.grouping.stacktrace import ParsedTrace


def site_tree(
    service: str, trace: ParsedTrace, site: Site | None, roles: TraceRoles | None = None
) -> Component | None:
    """Service, the chain's exception types and the site: what one problem has in common
    wherever it was called from (None without a crash site). With the frames' `roles`, a framework's
    wrappers are left out of the types (`unwrapped`); without, they are kept, as releases before kept
    them and as earlier readings are hashed."""
    if site is None or site.key is None:
        return None
    chain = [e for e in trace.exceptions if e.relation != "suppressed"]
    if roles is not None and trace.runtime != "go":
        chain = chain[unwrapped(trace, roles) :]
    types = [short_type(e.type) or e.type for e in chain]
    if trace.runtime == "go":
        types = types[:1]  # the other goroutines of a dump are no part of the panic
    return node(
        "site",
        leaf("service", service),
        *(leaf("type", name) for name in types),
        leaf("crash-site", site.key),
    )


def unwrapped(trace: ParsedTrace, roles: TraceRoles) -> int:
    """How many exceptions lead the chain as a framework's wrappers: raised with no frame of the app's,
    each over the next as its cause (`Caused by:`, an inner exception), up to the first with one. Spring's
    DispatcherServlet wraps a controller's exception in a `ServletException`: the server span records the
    wrapper and the controller's span the exception itself, one problem (the crash site, the first app
    frame of the chain, is the same already)."""
    exceptions = trace.exceptions
    count = 0
    while (
        count + 1 < len(exceptions)
        and exceptions[count].relation != "suppressed"
        and exceptions[count + 1].relation in ("cause", "inner")
        and not any(role.in_app for role in roles.frames[count])
    ):
        count += 1
    return count if any(role.in_app for role in roles.frames[count]) else 0

"""The engine's caching layer: answers it has given, kept so the same question is not worked out twice.

Nothing here decides where an event goes; every entry is a shortcut to an answer the tiers
(`engine`) gave and would give again, and each says why it cannot go stale:

- a *route* per message shape, service and error type: the template its skeleton matched and the
  signature that template leads to (a template, once registered, always leads to the same
  signature; the miner's answer for a skeleton never changes once given, see `templates`);
- per route, the assignment given per normalised message (and error type, environment and
  version when set): it stands while the template has not widened (`tokens` is the template's
  tokens when the answers were given, so a widened template is noticed by identity and its
  answers dropped);
- per trace candidate (the candidate reader memoises candidates, so the same trace and message
  give the same object), the fingerprint tier's assignment: a hash, once registered, always
  leads to the same signature; they are dropped whole when hashes of a signature found by an
  earlier version's are registered after a batch (`found_earlier`), since a candidate answered by
  its site's hash may then be found by its frames';
- per signature and tier, the placement without an assignment a round's repeats are given
  (`placement.KeptPlacements`): it holds nothing but the two, and is never changed;
- per bucket and skeleton, that the miner fetched the lookup keys of its templates
  (`TemplateMiner._fetch_for`): the keys are a function of the two, and a key fetched once is
  never fetched again.

The other memos are of pure functions and sit beside what they memoise: message shapes
(`shapes`), parsed traces, by shape, by a Go dump's key (`stacktrace.go_key`), by the text with the
event's message cut out (`trace_cut`)
and by what grouping reads of them (`trace_memo`), trace, error-code and template candidates and
what a trace's frames decide, with the hashes they give (`candidates`), frame components and
module paths (`frames`),
stack components (`fingerprint`), frame and trace roles (`inapp`), lines' runtimes and frame
lines (`stacktrace`), rendered trees (`explanation`) and stacks (`components`), skeletons'
templates (`templates`). Every
memo is bounded and cleared whole when full, never evicted piecemeal; the engine's own are
`memo.BoundedMemo`s, bounded by the bytes they hold as well as by entries. They serve the throughput of
`rounds group` and of long rounds (`bench/grouping.py` measures both beside Drain3); a round of a
few hundred events would be as right without them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rounds_bot.grouping.route import ANSWERS_PER_ROUTE, AnswerKey, Route

if TYPE_CHECKING:
    from rounds_bot.grouping.candidates import Candidate
    from rounds_bot.grouping.shapes import ShapeInfo
    from rounds_bot.grouping.templates import MinedTemplate
    from rounds_bot.models import Assignment

#: trace answers kept in all before they are cleared
TRACE_ANSWERS = ANSWERS_PER_ROUTE * 16


def answer_key(
    normalized: str, error_type: str | None, environment: str | None, version: str | None
) -> AnswerKey:
    """Most events carry none of the three: the message alone is then the key."""
    if error_type is None and environment is None and version is None:
        return normalized
    return (normalized, error_type, environment, version)


class Answers:
    """The shortcuts: routes per shape and template, and the answers given on each."""

    def __init__(self) -> None:
        self._routes: dict[str, Route] = {}
        #: the fingerprint tier's answers per memoised candidate (keyed by identity; the entry
        #: keeps the candidate alive, so an id is never reused while it is a key)
        self._traces: dict[int, tuple[Candidate, Assignment]] = {}

    def route(self, shape: ShapeInfo, where: str, error_type: str | None) -> Route | None:
        return shape.routes.get((where, error_type))

    def learn_route(
        self, shape: ShapeInfo, where: str, error_type: str | None, template: MinedTemplate, signature_id: str
    ) -> Route:
        """The route of a shape whose template leads to `signature_id` (one per template)."""
        route = self._routes.get(template.template_id)
        if route is None:
            route = self._routes[template.template_id] = Route(template, signature_id)
        shape.routes[(where, error_type)] = route
        return route

    def answer(self, route: Route, key: AnswerKey) -> Assignment | None:
        # Answers given for this template stand while the template has not widened.
        if route.tokens is not route.template.tokens:
            route.answers.clear()
            route.tokens = route.template.tokens
        return route.answers.get(key)

    def remember(self, route: Route, key: AnswerKey, answer: Assignment) -> None:
        if len(route.answers) >= ANSWERS_PER_ROUTE:
            route.answers.clear()
        route.answers[key] = answer

    def trace_answer(self, candidate: Candidate) -> Assignment | None:
        found = self._traces.get(id(candidate))
        return found[1] if found is not None and found[0] is candidate else None

    def forget_traces(self) -> None:
        """Drop every trace answer: a hash registered since may now lead a candidate answered by a later
        key (its site's) to another signature (`found_earlier`)."""
        self._traces.clear()

    def remember_trace(self, candidate: Candidate, answer: Assignment) -> None:
        if len(self._traces) >= TRACE_ANSWERS:
            self._traces.clear()
        self._traces[id(candidate)] = (candidate, answer)

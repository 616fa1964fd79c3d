"""Log template mining: one template per log statement, for errors that carry no stack trace.

A message's *skeleton* (`skeletons`; without a trailing clause that only carries redacted values,
which is context and not the log statement) is looked up in a small miner:

- templates live in buckets keyed on service, error type and token count;
- a skeleton joins the template it is *compatible* with (equal token, or `<*>` in the template);
- a skeleton that differs from one template only where it has a parameter and the template a
  word *generalises* that template (the word was a value: `user webmaster` then `user test9`);
- otherwise it starts a new template.

Which words are values is also learned from the service's own lines: a word a bucket's templates
use as a key (`user=<*>`) names a field, so where the same word stands in prose the word after it
is that field's value (`session opened for user cyrus`: the user name is a parameter). Learned
keys only ever help a skeleton that no template matches as it is, so an answer once given stands.

Precision first: a differing word against a differing word never merges (`from NEW to RUNNING` and
`from RUNNING to DONE` are different statements), except where a round's whole batch shows the
position varies (`expect`, see `variability`): then a skeleton no template matches as it is takes
that position as a parameter. The miner keeps one invariant: no two
templates can both match the same skeleton. A change that would break it is not made; a new
skeleton that would break it becomes an *exact* template, matched only by that very skeleton.
Because of that invariant the answer for a skeleton never changes once given, matching depends
only on the set of templates (which is what a signature stores), and a re-loaded miner answers
exactly as the one that saved it.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import Field

from rounds_bot.grouping.lookup_keys import skeleton_key, template_keys
from rounds_bot.grouping.skeletons import (
    WILDCARD,
    has_constant_word,
    is_exact_skeleton,
    keys_of,
    mask_after_keys,
)
from rounds_bot.grouping.variability import varying_skeletons
from rounds_bot.models import Frozen, sharing_fields_set

#: skeletons `TemplateMiner._fetch_for` remembers having fetched the keys of, before it forgets them all
FETCHED_SKELETONS = 65_536


class TemplateState(Frozen):
    """One mined template, as a signature stores it."""

    template_id: str
    bucket: str = Field(description="service and error type the template belongs to")
    tokens: list[str] = Field(description="current template; `<*>` marks a parameter")
    first_tokens: list[str] = Field(description="the skeleton the template was created from")
    exact: bool = Field(default=False, description="matched only by this very skeleton")
    seq: int = Field(description="creation order; older templates are scanned first")


@dataclass
class MinedTemplate:
    """A template as the miner holds it: `tokens` widen in place as it generalises."""

    template_id: str
    bucket: str
    tokens: tuple[str, ...]
    first: tuple[str, ...]
    exact: bool
    seq: int

    def state(self) -> TemplateState:
        # every field given: one set of their names for every template's state (`sharing_fields_set`)
        return sharing_fields_set(
            TemplateState(
                template_id=self.template_id,
                bucket=self.bucket,
                tokens=list(self.tokens),
                first_tokens=list(self.first),
                exact=self.exact,
                seq=self.seq,
            )
        )


@dataclass(frozen=True)
class TemplateMatch:
    template_id: str
    template: tuple[str, ...]
    created: bool = False
    generalized: bool = False


def template_id_for(bucket: str, tokens: tuple[str, ...]) -> str:
    digest = hashlib.sha256(("\x1f".join((bucket, *tokens))).encode("utf-8", "surrogatepass")).hexdigest()
    return "tpl_" + digest[:16]


@dataclass
class TemplateMiner:
    """Online template miner; see the module docstring for the rules it follows."""

    max_cached_skeletons: int = 100_000
    _templates: dict[str, MinedTemplate] = field(default_factory=dict)
    _by_skeleton: dict[tuple[str, tuple[str, ...]], str] = field(default_factory=dict)
    _cached: dict[tuple[str, tuple[str, ...]], str] = field(default_factory=dict)
    _buckets: dict[tuple[str, int], list[MinedTemplate]] = field(default_factory=dict)
    # The same templates filed under their first token as well: a template can only match,
    # widen towards or overlap a skeleton whose first token equals its own, or when either
    # first token is a parameter.
    _by_first: dict[tuple[str, int, str], list[MinedTemplate]] = field(default_factory=dict)
    #: per bucket, the field names its templates use as keys (`user=<*>`)
    _keys: dict[str, set[str]] = field(default_factory=dict)
    #: the seq the next new template gets (above every template known)
    next_seq: int = 0
    #: where templates not loaded yet are found (see `known`): `fetch` is given the lookup keys
    #: of a skeleton before it is matched (it loads what they find), `fetch_learned` gives the
    #: keys a bucket's templates use, once per bucket
    fetch: Callable[[list[str]], object] | None = None
    fetch_learned: Callable[[str], set[str]] | None = None
    _fetched: set[str] = field(default_factory=set)
    #: the skeletons (with their bucket) whose keys were all fetched: `_fetch_for` does nothing more for them
    #: (the keys are a function of the two, and a key fetched once is never fetched again), so a repeat
    #: builds no keys; bounded, cleared whole when full (a skeleton then builds its keys once more)
    _fetched_for: set[tuple[str, tuple[str, ...]]] = field(default_factory=set)
    #: the skeletons of the batch being grouped that have a varying position, with it opened
    #: (see `variability`); set by `expect`
    _varying: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = field(default_factory=dict)
    #: templates a varying position decided (for "why grouped")
    varied_templates: set[str] = field(default_factory=set)

    def expect(self, lines: list[tuple[tuple[str, tuple[str, ...]], int]]) -> None:
        """Learn from a whole batch, (bucket, skeleton) and how many lines have it, which words
        vary (see `variability`):
        a skeleton no template matches as it is then takes its varying position as a parameter."""
        self._varying = varying_skeletons(lines)

    def load(self, state: TemplateState) -> None:
        template = MinedTemplate(
            state.template_id,
            state.bucket,
            tuple(state.tokens),
            tuple(state.first_tokens),
            state.exact,
            state.seq,
        )
        self._add(template)
        self.next_seq = max(self.next_seq, state.seq + 1)

    def state(self, template_id: str) -> TemplateState:
        return self._templates[template_id].state()

    def release(self) -> None:
        """Drop all but the templates themselves, for a miner let go with its engine
        (`Registry.released_states`): it matches nothing more; `released_state` reads each template."""
        self._by_skeleton.clear()
        self._cached.clear()
        self._buckets.clear()
        self._by_first.clear()
        self._keys.clear()
        self._fetched.clear()
        self._fetched_for.clear()
        self._varying = {}
        self.varied_templates.clear()
        self.fetch = self.fetch_learned = None

    def released_state(self, template_id: str) -> TemplateState:
        """`state`, the template dropped as it is read (a template belongs to one signature: `Registry`)."""
        return self._templates.pop(template_id).state()

    def template(self, template_id: str) -> tuple[str, ...]:
        return self._templates[template_id].tokens

    def handle(self, template_id: str) -> MinedTemplate:
        """The live template (read-only for callers): `.tokens` changes when it widens."""
        return self._templates[template_id]

    def first_template(self, template_id: str) -> tuple[str, ...]:
        return self._templates[template_id].first

    def __len__(self) -> int:
        return len(self._templates)

    def match(self, bucket: str, tokens: tuple[str, ...]) -> TemplateMatch:
        """The template a skeleton belongs to, creating or generalising one if needed."""
        key = (bucket, tokens)
        known = self._by_skeleton.get(key) or self._cached.get(key)
        if known is None and self.fetch is not None:
            self._fetch_for(bucket, tokens)
            known = self._by_skeleton.get(key)
        if known is not None:
            return TemplateMatch(known, self._templates[known].tokens)
        if is_exact_skeleton(tokens):
            return self._create(bucket, tokens, exact=True)
        varied = self._varying.get(key)
        if varied is not None and not any(
            _compatible(t.tokens, tokens) for t in self._candidates(bucket, tokens)
        ):
            found = self._match(bucket, varied)
            self._remember(key, found.template_id)
            self.varied_templates.add(found.template_id)
            return found
        keys = self._keys.get(bucket)
        if keys:
            masked = mask_after_keys(tokens, keys)
            if masked != tokens and not any(
                _compatible(t.tokens, tokens) for t in self._candidates(bucket, tokens)
            ):
                found = self._match(bucket, masked)
                self._remember(key, found.template_id)
                return found
        return self._match(bucket, tokens)

    def find(self, bucket: str, tokens: tuple[str, ...]) -> str | None:
        """The template a skeleton matches as the templates stand, or None: nothing is created
        or widened (how a skeleton read the way an earlier version read it finds its template)."""
        if self.fetch is not None:
            self._fetch_for(bucket, tokens)
        known = self._by_skeleton.get((bucket, tokens)) or self._cached.get((bucket, tokens))
        if known is not None:
            return known
        if is_exact_skeleton(tokens):
            return None
        return next(
            (t.template_id for t in self._candidates(bucket, tokens) if _compatible(t.tokens, tokens)), None
        )

    def _fetch_for(self, bucket: str, tokens: tuple[str, ...]) -> None:
        """Load every known template that could take part in matching `tokens`."""
        if (bucket, tokens) in self._fetched_for:
            return
        if len(self._fetched_for) >= FETCHED_SKELETONS:
            self._fetched_for.clear()
        self._fetched_for.add((bucket, tokens))
        if self.fetch_learned is not None and bucket not in self._fetched:
            self._fetched.add(bucket)
            learned = self.fetch_learned(bucket)
            if learned:
                self._keys.setdefault(bucket, set()).update(learned)
        keys = [skeleton_key(bucket, tokens)] if is_exact_skeleton(tokens) else template_keys(bucket, tokens)
        wanted = [k for k in keys if k not in self._fetched]
        if wanted and self.fetch is not None:
            self._fetched.update(wanted)
            self.fetch(wanted)

    def _match(self, bucket: str, tokens: tuple[str, ...]) -> TemplateMatch:
        key = (bucket, tokens)
        if self.fetch is not None:
            self._fetch_for(bucket, tokens)
        known = self._by_skeleton.get(key) or self._cached.get(key)
        if known is not None:
            return TemplateMatch(known, self._templates[known].tokens)
        candidates = self._candidates(bucket, tokens)
        for template in candidates:
            if _compatible(template.tokens, tokens):
                self._remember(key, template.template_id)
                return TemplateMatch(template.template_id, template.tokens)
        generalizable = [t for t in candidates if _generalizes(t.tokens, tokens)]
        if len(generalizable) == 1:
            template = generalizable[0]
            widened = tuple(
                WILDCARD if new == WILDCARD else old for old, new in zip(template.tokens, tokens, strict=True)
            )
            others = (t for t in candidates if t is not template)
            if has_constant_word(widened) and not any(_overlap(widened, t.tokens) for t in others):
                self._refile(template, widened)
                self._remember(key, template.template_id)
                return TemplateMatch(template.template_id, widened, generalized=True)
        clashes = any(_overlap(tokens, t.tokens) for t in candidates)
        return self._create(bucket, tokens, exact=clashes)

    def _create(self, bucket: str, tokens: tuple[str, ...], *, exact: bool) -> TemplateMatch:
        template = MinedTemplate(
            template_id_for(bucket, tokens), bucket, tokens, tokens, exact, self.next_seq
        )
        self.next_seq += 1
        self._add(template)
        return TemplateMatch(template.template_id, tokens, created=True)

    def _candidates(self, bucket: str, tokens: tuple[str, ...]) -> list[MinedTemplate]:
        """Non-exact templates that could match, widen towards or overlap `tokens`, oldest first."""
        if tokens[0] == WILDCARD:
            found = self._buckets.get((bucket, len(tokens)), [])
        else:
            same = self._by_first.get((bucket, len(tokens), tokens[0]), [])
            open_ = self._by_first.get((bucket, len(tokens), WILDCARD), [])
            found = sorted(same + open_, key=lambda t: t.seq) if same and open_ else (same or open_)
        return [t for t in found if not t.exact]

    def _add(self, template: MinedTemplate) -> None:
        self._templates[template.template_id] = template
        # The skeleton a template was created from always leads back to it.
        self._by_skeleton[(template.bucket, template.first)] = template.template_id
        self._learn_keys(template.bucket, template.tokens)
        if template.exact or not template.tokens:
            return
        for shelf in (
            self._buckets.setdefault((template.bucket, len(template.tokens)), []),
            self._by_first.setdefault((template.bucket, len(template.tokens), template.tokens[0]), []),
        ):
            bisect.insort(shelf, template, key=_seq)

    def _refile(self, template: MinedTemplate, widened: tuple[str, ...]) -> None:
        if widened[0] != template.tokens[0]:
            old = (template.bucket, len(template.tokens), template.tokens[0])
            self._by_first[old].remove(template)
            shelf = self._by_first.setdefault((template.bucket, len(widened), widened[0]), [])
            bisect.insort(shelf, template, key=_seq)
        template.tokens = widened
        self._learn_keys(template.bucket, widened)

    def _learn_keys(self, bucket: str, tokens: tuple[str, ...]) -> None:
        found = keys_of(tokens)
        if found:
            self._keys.setdefault(bucket, set()).update(found)

    def _remember(self, key: tuple[str, tuple[str, ...]], template_id: str) -> None:
        if len(self._cached) >= self.max_cached_skeletons:
            self._cached.clear()
        self._cached[key] = template_id


def _seq(template: MinedTemplate) -> int:
    return template.seq


def _compatible(template: tuple[str, ...], tokens: tuple[str, ...]) -> bool:
    return all(t in (s, WILDCARD) for t, s in zip(template, tokens, strict=True))


def _generalizes(template: tuple[str, ...], tokens: tuple[str, ...]) -> bool:
    """True when `tokens` differs from `template` only by parameters where it has words."""
    widens = False
    for t, s in zip(template, tokens, strict=True):
        if t == s:
            continue
        if s == WILDCARD and t != WILDCARD:
            widens = True
            continue
        return False  # a different word, or a word where the template has a parameter
    return widens


def _overlap(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """True when some skeleton could match both templates."""
    return all(x in (y, WILDCARD) or y == WILDCARD for x, y in zip(a, b, strict=True))

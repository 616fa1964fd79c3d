"""Issue titles and bodies, rendered from a template (`templates/issue.md.j2`)."""

from __future__ import annotations

import json
import re
from functools import cache

from jinja2 import Environment, Template
from pydantic import Field

from rounds_bot.headline import trim, unmarked
from rounds_bot.marker import MarkerState, write_marker
from rounds_bot.models import Frozen
from rounds_bot.render import fences
from rounds_bot.render import markdown as md
from rounds_bot.render.cascade_section import reference

# GitHub refuses issue bodies over 65,536 characters; keep a margin for the marker and table.
MAX_BODY_CHARS = 65_000
# what an over-long stack trace keeps before the diagnosis is cut (its innermost frames and more)
KEPT_TRACE_CHARS = 8_000
#: what an issue says in place of the sections left out to fit (`_without_telemetry_sections`)
LEFT_OUT = (
    "_(this record's details, the error path and the code were left out to fit GitHub's limit on an issue)_"
)
TITLE_CHARS = 120
SUMMARY_CHARS = 300
#: what the Occurrences table lists of the services, versions and environments: the first of them, each
#: cut, then how many more (a mobile app's hundreds of versions, or values a client set to any length)
LISTED_VALUES = 10
LISTED_CHARS = 80
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>`]+")
TIER_TEXT = {
    "error_code": "same standardised error code",
    "fingerprint": "same fingerprint",
    "similarity": "similar to a known signature",
    "new": "a new fingerprint",
}


class RelatedLink(Frozen):
    """A possibly related signature as the issue names it: its issue when it has one, else its id."""

    signature_id: str
    issue_ref: str | None = Field(default=None, description="the tracker's reference rounds stored, e.g. #12")
    similarity: float | None = Field(default=None, description="TF-IDF cosine of the two signatures")

    def markdown(self) -> str:
        """`#12 (similarity 0.47)`; a draft as a relative link; the signature id (as code) when no issue was
        filed for it yet."""
        ref = reference(self.issue_ref, self.signature_id)
        return f"{ref} (similarity {self.similarity:.2f})" if self.similarity is not None else ref


class IssueView(Frozen):
    """Everything an issue body shows; built by the round from the store and the round's counts."""

    signature_id: str
    service: str
    error_type: str | None
    normalized_message: str
    title: str
    tier: str
    explanation: str
    round_count: int
    total_count: int
    first_seen: str
    last_seen: str
    services: list[str] = Field(default_factory=list)
    versions: list[str] = Field(default_factory=list)
    environments: list[str] = Field(default_factory=list)
    message: str = ""
    summary: str = Field(default="", description="what happened, in the occurrence's own words")
    stacktrace: str | None = None
    related: list[RelatedLink] = Field(default_factory=list)
    links: list[tuple[str, str]] = Field(default_factory=list)
    classification: str | None = None
    classification_key: str | None = Field(default=None, description="for the label: server-bug, ...")
    where_markdown: str = Field(
        default="", description="in-app frames, suspect commit (`render/code_section`)"
    )
    trend_markdown: str = Field(default="", description="occurrences over time (`render/chart`)")
    context_title: str = Field(default="", description='"Request" for a span error, "Log record" for a log')
    context_markdown: str = Field(default="", description="its table (`render/telemetry`)")
    cascade_line: str = Field(default="", description="caused by / causes (`render/cascade_section`)")
    path_markdown: str = Field(default="", description="the trace's error path (`render/cascade_section`)")
    confidence: str | None = None
    diagnosis_markdown: str | None = None
    next_step_markdown: str = Field(default="", description="what to do next (`render/next_step`)")
    marker: MarkerState


def _environment() -> Environment:
    """Markdown templates: every interpolation is escaped unless built as Markdown (`render.markdown`)."""
    return md.environment()


# the template ships with the package and the environment never reloads it (`markdown.environment`): looked
# up once, not for each of the thousands of bodies a round renders
@cache
def _template() -> Template:
    return _environment().get_template("issue.md.j2")


def issue_title(view: IssueView) -> str:
    return md.title_text(trim(f"[{view.service}] {view.title}", TITLE_CHARS), TITLE_CHARS)


def _fence_safe(text: str) -> str:
    """Untrusted text inside a ``` fence must not be able to close it."""
    return md.fence_safe(text)


def render_body(view: IssueView) -> str:
    """The issue body, within GitHub's limit, the marker always last: an over-long stack trace is cut
    first (down to `KEPT_TRACE_CHARS`), then the sections whose size the telemetry decides are left out
    when they hold more than that, then an over-long diagnosis is cut, then the stack trace again, then
    those sections whatever their size, and last the marker lets go of the largest services, versions
    and environments it remembers, only as many as the limit needs (`_lean`)."""
    stacktrace = _fence_safe(view.stacktrace) if view.stacktrace else None
    body = _render(view, stacktrace, truncated=False)
    if len(body) <= MAX_BODY_CHARS:
        return body
    if stacktrace:
        keep = max(len(stacktrace) - _overflow(body), min(len(stacktrace), KEPT_TRACE_CHARS))
        stacktrace = stacktrace[:keep]
        body = _render(view, stacktrace, truncated=True)
    if len(body) > MAX_BODY_CHARS and _telemetry_sections_size(view) > KEPT_TRACE_CHARS:
        view = _without_telemetry_sections(view)
        body = _render(view, stacktrace, truncated=stacktrace is not None)
    if len(body) > MAX_BODY_CHARS and view.diagnosis_markdown:
        diagnosis = view.diagnosis_markdown
        cut = _cut(diagnosis, max(len(diagnosis) - _overflow(body), 0))
        view = view.model_copy(update={"diagnosis_markdown": cut})
        body = _render(view, stacktrace, truncated=stacktrace is not None)
    if len(body) > MAX_BODY_CHARS and stacktrace:
        stacktrace = stacktrace[: max(len(stacktrace) - _overflow(body), 0)]
        body = _render(view, stacktrace, truncated=True)
    if len(body) > MAX_BODY_CHARS:
        view = _without_telemetry_sections(view)
        body = _render(view, stacktrace, truncated=stacktrace is not None)
    while len(body) > MAX_BODY_CHARS and _remembered_values(view.marker):
        view = view.model_copy(update={"marker": _lean(view.marker, _overflow(body))})
        body = _render(view, stacktrace, truncated=stacktrace is not None)
    return body


#: the marker's lists a database rebuilt from issues reads back (`github/rebuild.py`), and the only part of
#: it whose size the telemetry decides
_REMEMBERED_KINDS = ("services", "versions", "environments")


def _remembered_values(marker: MarkerState) -> list[tuple[str, str]]:
    return [(kind, value) for kind in _REMEMBERED_KINDS for value in getattr(marker, kind)]


def _lean(marker: MarkerState, excess: int) -> MarkerState:
    """The marker without its largest remembered values, as written, until `excess` characters are gone;
    the rest kept in order. It writes its state as ASCII JSON (`json.dumps`), so a character outside
    ASCII (a phone app's Chinese version name, an emoji) takes six or twelve there: a hundred such values
    can fill GitHub's whole limit on a body. A rebuilt database lacks the dropped ones until their next
    occurrence adds them again (`signature.remembered`), as it lacks the values the marker never kept."""
    by_size = sorted(_remembered_values(marker), key=lambda item: (-_written_size(item[1]), item))
    dropped: set[tuple[str, str]] = set()
    for item in by_size:
        if excess <= 0:
            break
        dropped.add(item)
        excess -= _written_size(item[1])
    kept = {
        kind: [v for v in getattr(marker, kind) if (kind, v) not in dropped] for kind in _REMEMBERED_KINDS
    }
    return marker.model_copy(update=kept)


def _written_size(value: str) -> int:
    """What a value takes in the marker's JSON: quoted, escaped to ASCII, and its separating comma."""
    return len(json.dumps(value).replace("--", "-\\u002d")) + 1


def _telemetry_sections_size(view: IssueView) -> int:
    return sum(
        len(markdown)
        for markdown in (view.context_markdown, view.path_markdown, view.where_markdown, view.trend_markdown)
    )


def _without_telemetry_sections(view: IssueView) -> IssueView:
    """The view without the sections whose length the telemetry decides (a record's attributes, the error
    path, the code, the trend, links), saying so: filed that way rather than refused by GitHub every round."""
    return view.model_copy(
        update={
            "context_title": view.context_title or "Context",
            "context_markdown": LEFT_OUT,
            "path_markdown": "",
            "where_markdown": "",
            "trend_markdown": "",
            "related": [],
            "links": [],
        }
    )


def _overflow(body: str) -> int:
    return len(body) - MAX_BODY_CHARS + 200


def _cut(markdown: str, keep: int) -> str:
    """Escaped Markdown cut at a line end before `keep` characters (`markdown.cut`), saying so."""
    return str(md.cut(markdown, keep, "_(the diagnosis was truncated to fit the issue)_"))


def _sentence(text: str) -> str:
    """Untrusted words escaped, and each URL in them as code: a URL in a code span is neither linked nor
    broken up, so it copies whole (escaped plain text would need an invisible break to stay unlinked)."""
    pieces: list[str] = []
    cursor = 0
    for match in _URL.finditer(text):
        words = _words(text[cursor : match.start()])
        # a word shown as code (a SHA's) touching the URL's span would run into it: one space apart
        pieces += [words + (" " if words.endswith("`") else ""), md.code(match.group(0))]
        cursor = match.end()
    pieces.append(_words(text[cursor:]))
    return "".join(pieces)


def _words(text: str) -> str:
    """Escaped, with the spaces around it kept (they separate it from a URL beside it)."""
    inner = text.strip()
    if not inner:
        return " " if text else ""
    return (" " if text[0].isspace() else "") + md.escape(inner) + (" " if text[-1].isspace() else "")


def _render(view: IssueView, stacktrace: str | None, *, truncated: bool) -> str:
    template = _template()
    # a span error's type is its status code, which the sentence starts with already
    kind = md.code(view.error_type) if view.error_type and not view.error_type.isdigit() else "An error"
    sentence = _sentence(trim(unmarked(view.summary or view.normalized_message), SUMMARY_CHARS))
    summary = md.trusted(f"{kind} in **{md.escape(view.service)}**: {sentence}")
    return template.render(
        summary=summary,
        classification=view.classification,
        confidence=view.confidence,
        round_count=view.round_count,
        total_count=view.total_count,
        first_seen=view.first_seen,
        last_seen=view.last_seen,
        services=listed(view.services),
        versions=listed(view.versions),
        environments=listed(view.environments),
        stacktrace=md.trusted(f"```\n{stacktrace}\n```") if stacktrace else None,
        stacktrace_truncated=truncated,
        message=md.fenced(view.message[:2_000]) if view.message and not view.stacktrace else "",
        tier_text=TIER_TEXT.get(view.tier, view.tier),
        explanation=md.fenced(view.explanation),
        related=md.trusted(", ".join(link.markdown() for link in view.related)) if view.related else None,
        links=view.links,
        diagnosis=md.trusted(view.diagnosis_markdown) if view.diagnosis_markdown else None,
        where=md.trusted(view.where_markdown) if view.where_markdown else None,
        trend=md.trusted(view.trend_markdown) if view.trend_markdown else None,
        context_title=view.context_title,
        context=md.trusted(view.context_markdown) if view.context_markdown else None,
        cascade=md.trusted(view.cascade_line) if view.cascade_line else None,
        path=md.trusted(view.path_markdown) if view.path_markdown else None,
        next_step=md.trusted(view.next_step_markdown) if view.next_step_markdown else None,
        marker=md.trusted(write_marker(view.marker)),
    )


def listed(values: list[str]) -> list[str]:
    """The first `LISTED_VALUES` values, each cut to `LISTED_CHARS`, then `and N more` when there are more."""
    shown = [trim(value, LISTED_CHARS) for value in values[:LISTED_VALUES]]
    hidden = len(values) - len(shown)
    return [*shown, f"and {hidden:,} more"] if hidden else shown


def body_section(body: str, summary: str) -> str | None:
    """The fenced text inside `<details><summary>{summary}...</summary>` of a rendered issue body: the
    template's own `<details>` line, outside any fenced block and before the diagnosis heading, followed by
    a fenced block. Untrusted text cannot stand for one: escaped text never starts a line with `<`
    (`markdown.escape`), a fence's content never has a line that closes it (`markdown.fence_safe`,
    `fences.fence_for`), fences are read as CommonMark 0.31 §4.5 reads them (`render.fences`, as the
    model's code blocks are written), so a line inside a block of four backticks is code, and rounds writes
    these sections before the model's diagnosis, so nothing after its heading is read."""
    lines = body.split("\n")
    opening = re.compile(r"<details><summary>" + re.escape(summary) + r"[^<]*</summary>")
    at = 0
    while at < len(lines):
        if lines[at] == DIAGNOSIS_HEADING:
            return None
        fence = fences.OPENER.fullmatch(lines[at])
        if fence is not None:
            at = fences.closing(lines, at + 1, fence["fence"]) + 1
        elif opening.fullmatch(lines[at]):
            return _fenced_after(lines, at + 1)
        else:
            at += 1
    return None


#: the heading `templates/issue.md.j2` writes before the model's diagnosis, after every section rounds
#: reads back (`body_section`)
DIAGNOSIS_HEADING = "## Diagnosis"
#: the fence rounds writes around a section's text (`markdown.fenced`)
_SECTION_FENCE = "```"


def _fenced_after(lines: list[str], start: int) -> str | None:
    """The content of the ``` block that follows `lines[start:]` after blank lines, if one does and closes."""
    at = start
    while at < len(lines) and not lines[at].strip():
        at += 1
    if at >= len(lines) or lines[at] != _SECTION_FENCE:
        return None
    end = fences.closing(lines, at + 1, _SECTION_FENCE)
    return md.unfence("\n".join(lines[at + 1 : end])) if end < len(lines) else None

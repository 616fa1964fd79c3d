"""Render a diagnosis as Markdown sections for an issue body.

Every free text field came from a model that read untrusted telemetry (and was redacted when the answer
was read, `Diagnosis.from_answer`), so it reaches Markdown only through `render.markdown`: escaped prose,
inert code spans, and the prose's own fenced code blocks as blocks nothing in them can close
(`render.prose`). Each field is cut to its own limit BEFORE it is escaped (cutting escaped Markdown could
leave a code span open and the rest of the text live), so a diagnosis renders within a known size whatever
the model wrote. Evidence the bot could not verify, or did not check, is marked as such, and a confidence
rounds lowered says why.
"""

from __future__ import annotations

import re

from rounds_bot.diagnosis.model import (
    Diagnosis,
    DiagnosisOutcome,
    Evidence,
    EvidenceCheck,
    FaultLocation,
    LocationCheck,
)
from rounds_bot.render import markdown as md
from rounds_bot.render.prose import escape_prose

#: the blank lines (whitespace only) a text starts with
_BLANK_LINES_BEFORE = re.compile(r"\A(?:[^\S\n]*\n)+")

CLASSIFICATION_LABELS = {
    "server_bug": "Server bug",
    "client_misuse": "Client misuse",
    "documentation_gap": "Documentation gap",
    "dependency_failure": "Dependency or infrastructure failure",
    "unknown": "Unknown (the diagnosis abstains)",
}


#: plain-text limits per field, applied before escaping (a diagnosis renders in about 40,000 characters)
PROSE_CHARS = 4_000
REASON_CHARS = 1_000
EXPLANATION_CHARS = 500
POINTER_CHARS = 300
ITEM_CHARS = 300
ERROR_CODE_CHARS = 100
MAX_EVIDENCE_ITEMS = 20
MAX_MISSING_ITEMS = 10

_FAILED = {
    "timeout": "the model gave no answer in time",
    "turn_limit": "the model used all its turns without answering",
    "budget_exhausted": "the model reached its budget without answering",
    "api_error": "the model could not be reached or answered with an error",
    "invalid_answer": "the model's answer could not be read",
    "no_data": "there was nothing to diagnose",
}


def render_diagnosis(
    diagnosis: Diagnosis,
    checks: list[EvidenceCheck] | None = None,
    *,
    crash_site: str | None = None,
    location_check: LocationCheck | None = None,
) -> str:
    """The diagnosis as Markdown: classification (or the abstention and what is missing), where the fault
    is beside where it crashed, root cause, evidence, fix, observability. `checks` defaults to the ones the
    diagnosis carries (`Diagnosis.checked`); `crash_site`: the innermost in-app frame as `path:line`."""
    by_index = {check.index: check for check in (diagnosis.evidence_checks if checks is None else checks)}
    sections = ["### Classification", _classification(diagnosis)]
    if diagnosis.abstains:
        sections += _abstention(diagnosis)
    if diagnosis.fault_location is not None:
        sections += ["### Where the fault is", _where(diagnosis.fault_location, crash_site, location_check)]
    sections += ["### Root cause", _text(diagnosis.root_cause, PROSE_CHARS) or "_Not determined._"]
    sections += ["### Evidence", _evidence_list(diagnosis.evidence, by_index)]
    sections += ["### Suggested fix", _text(diagnosis.suggested_fix, PROSE_CHARS) or "_None suggested._"]
    if diagnosis.missing_observability:
        items = diagnosis.missing_observability
        lines = [f"- {_item(item, ITEM_CHARS)}" for item in items[:MAX_MISSING_ITEMS]]
        if len(items) > MAX_MISSING_ITEMS:
            lines.append(f"- _… and {len(items) - MAX_MISSING_ITEMS} more_")
        sections += ["### Missing observability", "\n".join(lines)]
    if diagnosis.suggested_error_code:
        sections += [
            "### Suggested error code",
            md.code(_cut(diagnosis.suggested_error_code, ERROR_CODE_CHARS)),
        ]
    return "\n\n".join(sections) + "\n"


def render_failed_attempt(outcome: DiagnosisOutcome) -> str:
    """One line for an issue whose diagnosis attempt failed this round: what went wrong, and that the next
    round tries again. Only rounds' own words and figures: the model's text is never shown here."""
    what = _FAILED.get(outcome.status, outcome.status.replace("_", " "))
    why = ""
    if outcome.status == "invalid_answer" and outcome.detail:
        why = f" ({md.escape(outcome.detail, 200)})"
    return f"_This round's diagnosis failed: {what}{why}. rounds tries again at the next round._\n"


def _classification(diagnosis: Diagnosis) -> str:
    line = f"**{CLASSIFICATION_LABELS[diagnosis.classification]}**, confidence {diagnosis.confidence}."
    if diagnosis.stated_confidence and diagnosis.stated_confidence != diagnosis.confidence:
        line += (
            f" The answer said {diagnosis.stated_confidence}; rounds lowered it because not all of its "
            "evidence could be verified."
        )
    if diagnosis.tentative:
        line += " _A hypothesis: other explanations remain open; nothing is done automatically on it._"
    return line


def _abstention(diagnosis: Diagnosis) -> list[str]:
    lines = ["**Not enough evidence to diagnose.**"]
    if (diagnosis.unknown_reason or "").strip():
        lines.append(f"Why: {_item(diagnosis.unknown_reason or '', REASON_CHARS)}")
    missing = [item for item in diagnosis.missing_evidence if item.strip()][:MAX_MISSING_ITEMS]
    if missing:
        lines.append("What is missing:\n" + "\n".join(f"- {_item(item, ITEM_CHARS)}" for item in missing))
    return lines


def _where(location: FaultLocation, crash_site: str | None, check: LocationCheck | None) -> str:
    mark = ""
    if check is not None and not check.verified:
        mark = f" ⚠️ _unverified: {_item(check.reason, REASON_CHARS)}_"
    pointer = md.code(location.pointer()[:POINTER_CHARS])
    rows = [f"- Fault: {pointer} in {md.code(location.function[:POINTER_CHARS])}{mark}"]
    if crash_site:
        rows.append(f"- Crash site: {md.code(crash_site[:POINTER_CHARS])}")
    return "\n".join(rows)


def _evidence_list(evidence: list[Evidence], checks: dict[int, EvidenceCheck]) -> str:
    if not evidence:
        return "_No evidence given._"
    lines = []
    for index, item in enumerate(evidence[:MAX_EVIDENCE_ITEMS]):
        explanation = _item(item.explanation, EXPLANATION_CHARS)
        lines.append(f"- {_pointer(item)}: {explanation}{_mark(checks.get(index))}")
    if len(evidence) > MAX_EVIDENCE_ITEMS:
        lines.append(f"- _… and {len(evidence) - MAX_EVIDENCE_ITEMS} more items, not shown_")
    return "\n".join(lines)


def _mark(check: EvidenceCheck | None) -> str:
    if check is None:
        return " ⚠️ _not checked by rounds_"
    if not check.verified:
        return f" ⚠️ _unverified: {_item(check.reason, ITEM_CHARS)}_"
    return ""


def _pointer(item: Evidence) -> str:
    if item.kind == "file":
        return md.code(f"{_cut(item.path or '', POINTER_CHARS)}:{item.line}")
    if item.kind == "event":
        return f"event {md.code(_cut(item.event_id or '', POINTER_CHARS))}"
    return f"log line {md.code(_cut((item.log_line or '').strip(), EXPLANATION_CHARS))}"


def _cut(text: str, limit: int) -> str:
    """Plain text cut to `limit` characters, before any escaping."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _item(text: str, limit: int) -> str:
    """Model text that stands in a list item or a sentence of rounds' (an explanation, a missing item, a
    reason) as one line of escaped Markdown: a blank line in it would end the item, and the rest would read
    as rounds' own paragraphs with rounds' flag after them, away from the item it flags."""
    return str(md.escape(text.strip(), limit))


def _text(text: str, limit: int) -> str:
    """Model prose as Markdown that renders as written and pings, references, links and embeds nothing, its
    fenced code blocks kept as code (`render.prose`); cut to `limit` characters of text first."""
    # only the blank lines around are taken off: the first line's indentation may be a fence's, which its
    # code's lines are read against (four spaces or more and it is no fence: `render.prose`). It does not
    # count toward the limit, as it did not when the text was stripped: prose drops it when it is escaped,
    # and a fence's is at most three spaces
    prose = _BLANK_LINES_BEFORE.sub("", text).rstrip()
    indent = len(prose) - len(prose.lstrip(" \t"))
    return str(escape_prose(prose, limit=limit + indent))

"""Render a diagnosis as Markdown sections for an issue body.

Every free text field came from a model that read untrusted telemetry (and was redacted when the answer
was read, `Diagnosis.from_answer`), so it reaches Markdown only through `render.markdown`: escaped prose,
inert code spans. Evidence the bot could not verify is marked as such.
"""

from __future__ import annotations

from rounds_bot.diagnosis.model import Diagnosis, Evidence, EvidenceCheck, FaultLocation, LocationCheck
from rounds_bot.render import markdown as md

CLASSIFICATION_LABELS = {
    "server_bug": "Server bug",
    "client_misuse": "Client misuse",
    "documentation_gap": "Documentation gap",
    "dependency_failure": "Dependency or infrastructure failure",
    "unknown": "Unknown (the diagnosis abstains)",
}


def render_diagnosis(
    diagnosis: Diagnosis,
    checks: list[EvidenceCheck] | None = None,
    *,
    crash_site: str | None = None,
    location_check: LocationCheck | None = None,
) -> str:
    """The diagnosis as Markdown: classification (or the abstention and what is missing), where the fault
    is beside where it crashed, root cause, evidence, fix, observability. `crash_site`: the innermost
    in-app frame as `path:line`, when known."""
    by_index = {check.index: check for check in checks or []}
    sections = ["### Classification", _classification(diagnosis)]
    if diagnosis.abstains:
        sections += _abstention(diagnosis)
    if diagnosis.fault_location is not None:
        sections += ["### Where the fault is", _where(diagnosis.fault_location, crash_site, location_check)]
    sections += ["### Root cause", _text(diagnosis.root_cause) or "_Not determined._"]
    sections += ["### Evidence", _evidence_list(diagnosis.evidence, by_index)]
    sections += ["### Suggested fix", _text(diagnosis.suggested_fix) or "_None suggested._"]
    if diagnosis.missing_observability:
        sections += [
            "### Missing observability",
            "\n".join(f"- {_text(item)}" for item in diagnosis.missing_observability),
        ]
    if diagnosis.suggested_error_code:
        sections += [
            "### Suggested error code",
            md.code(diagnosis.suggested_error_code),
        ]
    return "\n\n".join(sections) + "\n"


def _classification(diagnosis: Diagnosis) -> str:
    line = f"**{CLASSIFICATION_LABELS[diagnosis.classification]}**, confidence {diagnosis.confidence}."
    if diagnosis.tentative:
        line += " _A hypothesis: other explanations remain open; nothing is done automatically on it._"
    return line


def _abstention(diagnosis: Diagnosis) -> list[str]:
    lines = ["**Not enough evidence to diagnose.**"]
    if (diagnosis.unknown_reason or "").strip():
        lines.append(f"Why: {_text(diagnosis.unknown_reason or '')}")
    missing = [item for item in diagnosis.missing_evidence if item.strip()]
    if missing:
        lines.append("What is missing:\n" + "\n".join(f"- {_text(item)}" for item in missing))
    return lines


def _where(location: FaultLocation, crash_site: str | None, check: LocationCheck | None) -> str:
    mark = ""
    if check is not None and not check.verified:
        mark = f" ⚠️ _unverified: {_text(check.reason)}_"
    rows = [f"- Fault: {md.code(location.pointer())} in {md.code(location.function)}{mark}"]
    if crash_site:
        rows.append(f"- Crash site: {md.code(crash_site)}")
    return "\n".join(rows)


def _evidence_list(evidence: list[Evidence], checks: dict[int, EvidenceCheck]) -> str:
    if not evidence:
        return "_No evidence given._"
    lines = []
    for index, item in enumerate(evidence):
        check = checks.get(index)
        mark = ""
        if check is not None and not check.verified:
            mark = f" ⚠️ _unverified: {_text(check.reason)}_"
        lines.append(f"- {_pointer(item)}: {_text(item.explanation)}{mark}")
    return "\n".join(lines)


def _pointer(item: Evidence) -> str:
    if item.kind == "file":
        return md.code(f"{item.path}:{item.line}")
    if item.kind == "event":
        return f"event {md.code(item.event_id or '')}"
    return f"log line {md.code((item.log_line or '').strip())}"


def _text(text: str) -> str:
    """Model prose as Markdown that renders as written and pings, references, links and embeds nothing."""
    return str(md.escape_block(text.strip()))

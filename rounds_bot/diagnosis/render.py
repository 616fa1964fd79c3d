"""Render a diagnosis as Markdown sections for an issue body.

Every free text field came from a model that read untrusted telemetry, so it is sanitised and
redacted again here, and evidence the bot could not verify is marked as such.
"""

from __future__ import annotations

from rounds_bot.diagnosis.model import Diagnosis, Evidence, EvidenceCheck
from rounds_bot.redact import clean

CLASSIFICATION_LABELS = {
    "server_bug": "Server bug",
    "client_misuse": "Client misuse",
    "documentation_gap": "Documentation gap",
    "unknown": "Unknown (the diagnosis abstains)",
}


def render_diagnosis(diagnosis: Diagnosis, checks: list[EvidenceCheck] | None = None) -> str:
    """The diagnosis as Markdown: classification, root cause, evidence, fix, observability."""
    by_index = {check.index: check for check in checks or []}
    sections = [
        "### Classification",
        f"**{CLASSIFICATION_LABELS[diagnosis.classification]}**, confidence {diagnosis.confidence}.",
    ]
    if diagnosis.classification == "unknown":
        sections.append(f"Why: {_text(diagnosis.unknown_reason or '')}")
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
            f"`{_inline_code(diagnosis.suggested_error_code)}`",
        ]
    return "\n\n".join(sections) + "\n"


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
        return f"`{_inline_code(f'{item.path}:{item.line}')}`"
    if item.kind == "event":
        return f"event `{_inline_code(item.event_id or '')}`"
    return f"log line `{_inline_code(item.log_line or '')}`"


def _text(text: str) -> str:
    """Model text, cleaned; mentions and issue references defused so the issue pings nobody."""
    cleaned = clean(text).strip()
    return cleaned.replace("@", "@\u200b") if "@" in cleaned else cleaned


def _inline_code(text: str) -> str:
    return clean(text).replace("`", "'").replace("\n", " ").strip()

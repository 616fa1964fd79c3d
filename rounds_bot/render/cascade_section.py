"""A cascade as the issue shows it: one line under the summary ("Caused by #12" / "Causes #15"), so the
problem is read with its cause, and the "Error path" section, one trace's errors from where it began to where
it surfaced, each linked to its issue.

References are rounds' own (`#12` from its database, a draft's file name); titles were made by rounds from
redacted telemetry and are escaped like any other text (`render.markdown`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from rounds_bot.render import markdown as md

TITLE_CHARS = 90
_DRAFT = re.compile(r"[A-Za-z0-9_.-]+\.md")


@dataclass(frozen=True)
class PathStep:
    """One error of a trace, on its way from where it began to where it surfaced."""

    signature_id: str
    service: str
    title: str
    kind: str
    timestamp: datetime


@dataclass(frozen=True)
class Cascade:
    """What the round's traces say of one signature: the signatures of other services whose errors came
    first in the same trace (`caused_by`) or after (`causes`), each with the number of traces that show it,
    and one trace's error path (the earliest trace with the most errors)."""

    caused_by: dict[str, int] = field(default_factory=dict)
    causes: dict[str, int] = field(default_factory=dict)
    trace_id: str | None = None
    path: tuple[PathStep, ...] = ()


def reference(ref: str | None, signature_id: str) -> str:
    """An issue as a link: `#12` (GitHub links it), a draft's file name as a relative link (the drafts lie
    side by side), another tracker's reference escaped, and the signature id as code when no issue was filed
    for it yet."""
    if ref and re.fullmatch(r"#\d+", ref):
        return ref
    if ref and _DRAFT.fullmatch(ref):
        return f"[{md.escape(ref)}]({ref})"
    return str(md.escape(ref)) if ref else str(md.code(signature_id))


def cascade_line(cascade: Cascade | None, refs: dict[str, str]) -> str:
    """ "Caused by #12 …" and/or "Causes #15 …", or "" when the round's traces link no other service."""
    if cascade is None:
        return ""
    parts = []
    if cascade.caused_by:
        parts.append(f"**Caused by** {_listed(cascade.caused_by, refs)}: the same traces failed there first.")
    if cascade.causes:
        parts.append(f"**Causes** {_listed(cascade.causes, refs)}: those errors follow from this one.")
    return " ".join(parts)


def path_section(cascade: Cascade | None, refs: dict[str, str], own_id: str) -> str:
    """The numbered errors of one trace, cause first, or "" when there is no cascade."""
    if cascade is None or not cascade.path or cascade.trace_id is None:
        return ""
    services = len({step.service for step in cascade.path})
    failed = f"failed in {services} services" if services > 1 else f"holds {len(cascade.path)} errors"
    lines = [
        f"Trace {md.code(cascade.trace_id)} {failed}; its errors from where it began "
        "(a callee's error before its caller's, else by time):",
        "",
    ]
    start = cascade.path[0].timestamp
    for number, step in enumerate(cascade.path, start=1):
        lines.append(f"{number}. {_step(step, refs, own_id, (step.timestamp - start).total_seconds())}")
    return "\n".join(lines)


def _step(step: PathStep, refs: dict[str, str], own_id: str, offset: float) -> str:
    where = (
        "this issue"
        if step.signature_id == own_id
        else reference(refs.get(step.signature_id), step.signature_id)
    )
    title = md.code(step.title if len(step.title) <= TITLE_CHARS else step.title[: TITLE_CHARS - 1] + "…")
    at = f", +{offset * 1000:.0f} ms" if offset else ""
    return f"**{md.escape(step.service)}**, {_kind(step.kind)}: {title} — {where}{at}"


def _listed(counts: dict[str, int], refs: dict[str, str]) -> str:
    ordered = sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))
    shown = []
    for signature_id, traces in ordered:
        word = "trace" if traces == 1 else "traces"
        shown.append(f"{reference(refs.get(signature_id), signature_id)} ({traces} {word})")
    return ", ".join(shown)


def _kind(kind: str) -> str:
    return {"exception": "exception", "span_error": "failed span", "log": "error log"}.get(kind, kind)

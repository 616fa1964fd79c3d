"""What an issue's marker remembers beyond the signature: its latest good diagnosis and the model calls paid
for it. A database rebuilt from the issues (`github/rebuild.py`) reads them back, so the diagnosis stays in
the issue body, is not paid for again, and the month's spending still counts against the monthly budget."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from rounds_bot.clock import parse_iso
from rounds_bot.diagnosis.model import Diagnosis, DiagnosisOutcome
from rounds_bot.render.marker import MarkedDiagnosis, MarkedSpend, MarkerMemory
from rounds_bot.store import DiagnosisRecord, Store

REBUILT_RUN = "rebuilt"
# The answer is also in the body, rendered; carried twice, a long one could push the body past GitHub's
# limit. Longer answers are left out of the marker: a rebuild then diagnoses that signature again.
MAX_MARKED_ANSWER_CHARS = 8_000


def marker_memory(
    store: Store, signature_ids: Iterable[str], latest: Mapping[str, DiagnosisRecord] | None = None
) -> dict[str, MarkerMemory]:
    """Each signature's diagnosis and spending as its marker carries them (after this round's calls).
    `latest` is each signature's latest good diagnosis (`Store.latest_good_diagnoses`) when the caller
    has read it already; it is read here otherwise."""
    ids = list(signature_ids)
    if latest is None:
        latest = store.latest_good_diagnoses(ids)
    memory: dict[str, MarkerMemory] = {}
    for signature_id in ids:
        record = latest.get(signature_id)
        memory[signature_id] = MarkerMemory(
            diagnosis=_marked(record) if record is not None else None,
            spend=[
                MarkedSpend(at=paid.at, usd=paid.usd, model=paid.model, note=paid.note)
                for paid in store.bookings(signature_id)
            ],
        )
    return memory


def restore_memory(store: Store, signature_id: str, memory: MarkerMemory) -> list[str]:
    """Write back what a marker remembers (inside the caller's transaction); returns what could not be."""
    problems: list[str] = []
    for paid in memory.spend:
        try:
            at = parse_iso(paid.at)
        except ValueError:
            problems.append(f"a paid model call has an unreadable time ({paid.at[:40]!r}); not counted")
            continue
        store.book_cost(
            run_id=REBUILT_RUN,
            signature_id=signature_id,
            usd=paid.usd,
            model=paid.model,
            note=paid.note,
            at=at,
        )
    marked = memory.diagnosis
    if marked is None:
        return problems
    try:
        answer = Diagnosis.model_validate(marked.answer)
        parse_iso(marked.at)
    except ValueError as exc:
        problems.append(f"its diagnosis could not be read back ({exc.__class__.__name__}); diagnosed again")
        return problems
    store.record_diagnosis(
        DiagnosisRecord(
            cache_key=marked.cache_key,
            signature_id=signature_id,
            revision=marked.revision,
            at=marked.at,
            status="ok",
            trigger=marked.trigger,
            outcome=DiagnosisOutcome(status="ok", diagnosis=answer, detail="read back from the issue"),
        )
    )
    return problems


def _marked(record: DiagnosisRecord) -> MarkedDiagnosis | None:
    if record.outcome.diagnosis is None:
        return None
    answer = record.outcome.diagnosis.model_dump(mode="json")
    if len(json.dumps(answer)) > MAX_MARKED_ANSWER_CHARS:
        return None
    return MarkedDiagnosis(
        cache_key=record.cache_key,
        revision=record.revision,
        at=record.at,
        trigger=record.trigger,
        answer=answer,
    )

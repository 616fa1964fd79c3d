"""A frozen model's set of given fields shared by the models given the same fields (`sharing_fields_set`): the
same model to every reader, and a copy never changes the set the others share."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rounds_bot.models
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import Assignment, ErrorEvent, Frozen, sharing_fields_set
from rounds_bot.signature import Signature
from rounds_bot.store.signatures import from_row, to_row
from rounds_bot.tally import Tally

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


class IssueRef(Frozen):
    """A small frozen model with optional fields (an issue reference as a model, for these tests)."""

    signature_id: str
    ref: str
    url: str | None = None
    state: str = "open"
    state_reason: str | None = None


#: optional fields of an issue reference and values for them
REF_OPTIONAL = {
    "url": st.none() | st.text(max_size=20),
    "state": st.sampled_from(["open", "closed"]),
    "state_reason": st.none() | st.sampled_from(["completed", "not_planned", "reopened"]),
}


@st.composite
def issue_refs(draw: st.DrawFn) -> dict[str, object]:
    """The fields of an issue reference, each optional one given or left out."""
    fields: dict[str, object] = {
        "signature_id": draw(st.text(min_size=1, max_size=12)),
        "ref": draw(st.text(max_size=12)),
    }
    for name, values in REF_OPTIONAL.items():
        if draw(st.booleans()):
            fields[name] = draw(values)
    return fields


@settings(max_examples=200, deadline=None)
@given(st.lists(issue_refs(), min_size=1, max_size=6))
def test_a_model_sharing_its_set_of_given_fields_is_the_model_validation_made(lines: list[dict[str, object]]):
    shared = [sharing_fields_set(IssueRef(**fields)) for fields in lines]  # type: ignore[arg-type]
    for fields, line in zip(lines, shared, strict=True):
        own = IssueRef(**fields)  # type: ignore[arg-type]
        assert line == own and line.model_fields_set == own.model_fields_set == set(fields)
        assert line.model_dump() == own.model_dump()
        assert line.model_dump(exclude_unset=True) == own.model_dump(exclude_unset=True)
        assert line.model_dump_json(exclude_unset=True) == own.model_dump_json(exclude_unset=True)
    for line in shared:  # models given the same fields hold one set between them
        alike = [other for other in shared if other.model_fields_set == line.model_fields_set]
        assert all(other.model_fields_set is line.model_fields_set for other in alike)


def test_a_copy_with_an_update_never_changes_the_set_the_others_share():
    first = sharing_fields_set(IssueRef(signature_id="a", ref="#1"))
    second = sharing_fields_set(first.model_copy())
    shared = first.model_fields_set
    noted = second.model_copy(update={"url": "https://example.test/1"})
    assert noted.model_fields_set == shared | {"url"} and "url" not in shared
    assert first.model_fields_set is shared and "url" not in first.model_fields_set
    with pytest.raises(
        ValueError, match="frozen"
    ):  # a frozen model refuses the one other change pydantic makes
        first.url = "x"  # type: ignore[misc]
    assert "url" not in shared


def test_past_the_cap_a_model_keeps_its_own_set(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(rounds_bot.models, "_FIELDS_SETS", {})
    monkeypatch.setattr(rounds_bot.models, "MAX_SHARED_FIELDS_SETS", 1)
    first = sharing_fields_set(IssueRef(signature_id="a", ref="#1"))
    other = IssueRef(signature_id="b", ref="#2", url="u")
    own = other.model_fields_set
    assert sharing_fields_set(other).model_fields_set is own and own == first.model_fields_set | {"url"}
    again = sharing_fields_set(first.model_copy())  # a set seen before the cap is still shared
    assert again.model_fields_set is first.model_fields_set


def _tally(n: int, services: list[str], versions: list[str], related: list[str]) -> Tally:
    tally = Tally(
        assignment=Assignment(
            signature_id=f"sig_{n}",
            tier="new",
            fingerprint_hash=f"h{n}",
            fingerprint_version="fp-1",
            explanation="message",
            title=f"Error: failed {n}",
            normalized_message=f"failed {n}",
            related=related,
        )
    )
    for index, service in enumerate(services):
        moment = T0 + timedelta(minutes=index)
        event = ErrorEvent(
            event_id=f"e{n}-{index}",
            timestamp=moment,
            service=service,
            service_version=versions[index % len(versions)] if versions else None,
            environment="prod" if index % 2 else None,
            error_type="Error",
            message=f"failed {n}",
        )
        tally.add(event, 1, moment, moment)
    return tally


names = st.lists(st.sampled_from(["api", "web", "worker", "1.0", "2.0", "sig_9"]), max_size=3)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 50),
    st.lists(st.sampled_from(["api", "web", "worker"]), min_size=1, max_size=4),
    names,
    names,
    st.booleans(),
)
def test_signatures_made_absorbed_filed_and_read_back_are_those_validation_makes(
    n: int, services: list[str], versions: list[str], related: list[str], filed: bool
):
    state = SignatureState(signature_id=f"sig_{n}", service=services[0], seq=n, hashes=[f"h{n}"])
    tally = _tally(n, services, versions, related)
    first = Signature.first(tally, state, run_id="r1", now=T0)
    validated = Signature(**{name: getattr(first, name) for name in first.model_fields_set})
    assert first == validated and first.model_fields_set == validated.model_fields_set
    assert first.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
    later = first.absorb(_tally(n, services[::-1], versions, related), state, now=T0)
    copied = validated.model_copy(update=dict.fromkeys(later.model_fields_set - first.model_fields_set))
    assert later.model_fields_set == copied.model_fields_set
    saved = later.filed_as("#7") if filed else later
    read = from_row(to_row(saved))
    assert read == saved and read.model_fields_set == set(Signature.model_fields)
    again = Signature.first(tally, state, run_id="r1", now=T0)
    assert again.model_fields_set is first.model_fields_set  # one set for the signatures of a round

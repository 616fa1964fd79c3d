"""A model the engine builds with every field given (an assignment, a signature's state, its templates' and
its vector) shares one set of the names of its fields with every other such model (`sharing_fields_set`),
and is in every other way the model validating its fields gives: equal, with the same fields set, dumped
and pickled alike, copied with an update of its own; a model given some fields alone has a set of those."""

from __future__ import annotations

import pickle
import random

from pydantic import BaseModel
from test_grouping_corpus import EVENTS

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import Assignment, sharing_fields_set


def _validated_anew(model: BaseModel) -> BaseModel:
    """The model as validating its fields, each given, makes it: with a set of its own."""
    return type(model)(**{name: getattr(model, name) for name in type(model).model_fields})


def _assert_as_validated(models: list[BaseModel]) -> None:
    for model in models:
        anew = _validated_anew(model)
        assert model == anew
        assert model.model_fields_set == anew.model_fields_set == set(type(model).model_fields)
        assert model.model_dump(exclude_unset=True) == anew.model_dump(exclude_unset=True)
        assert model.model_dump_json() == anew.model_dump_json()
        assert pickle.loads(pickle.dumps(model)) == model
    for kind in {type(model) for model in models}:
        of_kind = [model for model in models if type(model) is kind]
        assert len({id(model.model_fields_set) for model in of_kind}) == 1  # one set for all of them


def _parts(state: SignatureState) -> list[BaseModel]:
    return [state, *state.templates, *([state.similarity] if state.similarity is not None else [])]


def test_the_engine_s_assignments_and_states_are_those_validating_their_fields_gives() -> None:
    events = EVENTS + EVENTS
    random.Random(7).shuffle(events)
    engine = GroupingEngine()
    assignments: list[BaseModel] = list(engine.assign_each(events))
    states = [engine.state(signature_id) for signature_id in engine.signature_ids()]
    assert any(state.templates for state in states) and any(state.similarity for state in states)
    _assert_as_validated(assignments)
    _assert_as_validated([part for state in states for part in _parts(state)])


def test_a_copy_with_an_update_changes_no_other_model_s_fields_set() -> None:
    first, second = GroupingEngine().assign_all(EVENTS[:2])
    copied = first.model_copy(update={"explanation": "changed"})
    assert copied.explanation == "changed" and first.explanation != "changed"
    assert first.model_fields_set == second.model_fields_set == set(Assignment.model_fields)
    assert copied.model_fields_set == set(Assignment.model_fields)
    assert copied.model_fields_set is not first.model_fields_set


def test_a_model_given_some_fields_has_a_set_of_those_alone() -> None:
    values = {
        "signature_id": "sig_1",
        "tier": "new",
        "fingerprint_hash": "h",
        "fingerprint_version": "v",
        "explanation": "e",
        "title": "t",
        "normalized_message": "m",
    }
    some = sharing_fields_set(Assignment(**values))
    assert some == Assignment(**values)
    assert some.model_fields_set == set(values)
    every = sharing_fields_set(Assignment(**values, related=[], related_similarity={}, similarity=None))
    assert every.model_fields_set == set(Assignment.model_fields)
    assert some.model_fields_set == set(values)

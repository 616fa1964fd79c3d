"""A tally's assignment, kept as its field values: the model is put together again when it is read.

A round keeps a tally per signature to its end, and each its `Assignment`: the model and its `__dict__` are
some 350 bytes, its empty `related` list and `related_similarity` dict 120 more, beside the values
themselves (its explanation, title, ... are held by the signature built from it too). Kept as a tuple of
its values (an empty list or dict as None), it is a third of that; it is read a few times a round
(`Signature.first`, the summary, the filing), each time the model it was, field for field, with the same
set of given fields.
"""

from __future__ import annotations

from typing import Any

from rounds_bot.models import Assignment, assembled, sharing_fields_set

#: the model's fields, in its order (as validating it leaves its `__dict__`)
_FIELDS = tuple(Assignment.model_fields)
_RELATED = _FIELDS.index("related")
_RELATED_SIMILARITY = _FIELDS.index("related_similarity")

#: an assignment's field values in `_FIELDS`' order (empty `related` and `related_similarity` as None), then
#: its set of given fields
PackedAssignment = tuple[Any, ...]


def packed(assignment: Assignment) -> PackedAssignment:
    """What `unpacked` puts together as `assignment` again (its set of given fields shared, once made)."""
    values = sharing_fields_set(assignment).__dict__
    kept = [values[name] for name in _FIELDS]
    kept[_RELATED] = kept[_RELATED] or None
    kept[_RELATED_SIMILARITY] = kept[_RELATED_SIMILARITY] or None
    return (*kept, assignment.__pydantic_fields_set__)


def unpacked(kept: PackedAssignment) -> Assignment:
    """The assignment `packed` was given: its fields' values (a new empty list or dict for one left empty)
    and its set of given fields (`assembled`): nothing is validated again (it was when it was made)."""
    values = dict(zip(_FIELDS, kept, strict=False))
    if values["related"] is None:
        values["related"] = []
    if values["related_similarity"] is None:
        values["related_similarity"] = {}
    return assembled(Assignment, values, kept[-1])

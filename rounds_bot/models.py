"""The values that cross module boundaries: immutable pydantic models."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import Any, Literal, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

AttributeValue = str | int | float | bool
EventKind = Literal["exception", "span_error", "log"]
Tier = Literal["error_code", "fingerprint", "similarity", "new"]


class Frozen(BaseModel):
    # defer_build: a model's validator is built when first used, not at import; a command pays only
    # for the models it uses (`rounds group` starts in 0.19 s of CPU instead of 0.29 s)
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


FrozenModel = TypeVar("FrozenModel", bound=Frozen)

#: each distinct set of given fields `sharing_fields_set` hands out, once; past the cap a model keeps its own
_FIELDS_SETS: dict[frozenset[str], set[str]] = {}
MAX_SHARED_FIELDS_SETS = 256


def sharing_fields_set(model: FrozenModel) -> FrozenModel:
    """`model`, its set of the fields it was given (`model_fields_set`) swapped for an equal one shared by the
    models given the same fields. Pydantic makes that set for each instance, a hash table of the field names:
    most of a small model's memory (2.2 KB of a 3.4 KB signature), and a round keeps one per signature. It is
    safe to share for a frozen model: pydantic changes the set only when a field is assigned, which a frozen
    model refuses, and in `model_copy`, after copying it; everything pydantic derives from it (dumps with
    `exclude_unset`, equality, copies) reads the same names."""
    given = model.__pydantic_fields_set__
    shared = _FIELDS_SETS.get(frozenset(given))
    if shared is None:
        if len(_FIELDS_SETS) >= MAX_SHARED_FIELDS_SETS:
            return model
        shared = _FIELDS_SETS[frozenset(given)] = set(given)
    _set(model, "__pydantic_fields_set__", shared)
    return model


#: neighbouring records an error log carries at most, and characters of each one's body
MAX_CONTEXT_RECORDS = 5
CONTEXT_BODY_CHARS = 512


class ContextRecord(Frozen):
    """A log record of lesser severity logged shortly before an error log, in its trace or service: what the
    code was doing just before it failed."""

    timestamp: datetime
    severity: str = ""
    body: str = ""


class ErrorEvent(Frozen):
    """One error occurrence as read from a telemetry source, before grouping."""

    event_id: str = Field(description="stable id of this occurrence; re-reading it must not count twice")
    timestamp: datetime
    service: str = "unknown"
    kind: EventKind = "exception"
    error_type: str | None = None
    message: str = ""
    stacktrace: str | None = None
    error_code: str | None = None
    severity: str | None = Field(default=None, description="ERROR or FATAL for logs")
    fatal: bool = False
    trace_id: str | None = None
    span_id: str | None = None
    parent_span_id: str | None = Field(default=None, description="a span error's parent span, when known")
    span_kind: str | None = Field(default=None, description="a span error's kind: server, client, ...")
    service_version: str | None = None
    environment: str | None = None
    attributes: dict[str, AttributeValue] = Field(default_factory=dict)
    source_group_id: str | None = Field(default=None, description="the backend's own group id, a hint")
    count: int = Field(default=1, ge=1, description="occurrences this event stands for")
    source_url: str | None = None
    context: list[ContextRecord] = Field(
        default_factory=list,
        max_length=MAX_CONTEXT_RECORDS,
        description="an error log's neighbouring records before it, oldest first (OTLP files only)",
    )

    @classmethod
    def of_typed(cls, **values: Any) -> ErrorEvent:
        """The event of these field values, each one already of its field's type (a source that made them
        so, from records it checked): put together as validating them would (the fields not given take
        their defaults; the ones given are the event's `model_fields_set`), without validating them again,
        which is more than half the cost of making an event. Unknown or missing fields are refused."""
        # in the fields' order, as validation leaves `__dict__` (a merge keeps each key where it first was);
        # an unknown field would make it longer
        full = _EVENT_TEMPLATE | values
        if len(full) != len(_EVENT_TEMPLATE) or not values.keys() >= _REQUIRED:
            raise TypeError(f"ErrorEvent fields: {sorted(values)} (required {sorted(_REQUIRED)})")
        for name, factory in _FACTORIES:
            if name not in values:
                full[name] = factory()
        return assembled_event(full, set(values))


#: every field of an event, in order, with its default (None for a required one or a default factory's)
_EVENT_TEMPLATE: dict[str, Any] = {
    name: None if field.is_required() or field.default_factory is not None else field.default
    for name, field in ErrorEvent.model_fields.items()
}
_FACTORIES: tuple[tuple[str, Callable[[], Any]], ...] = tuple(
    (name, cast("Callable[[], Any]", field.default_factory))  # `dict` or `list`: they take no data
    for name, field in ErrorEvent.model_fields.items()
    if field.default_factory is not None
)
_REQUIRED = frozenset(name for name, field in ErrorEvent.model_fields.items() if field.is_required())


def assembled_event(values: dict[str, Any], fields_set: set[str]) -> ErrorEvent:
    """The event whose `__dict__` is `values` (every field, in order, each of its type), as `assembled`
    puts one together: nothing is validated or copied."""
    return assembled(ErrorEvent, values, fields_set)


_Model = TypeVar("_Model", bound=BaseModel)


def assembled(model_type: type[_Model], values: dict[str, Any], fields_set: AbstractSet[str]) -> _Model:
    """The model whose `__dict__` is `values` (every field, in order, each of its type) and whose given
    fields are `fields_set`, as unpickling puts one back (pydantic's `__setstate__`): nothing is validated
    or copied. For values that were checked when they were first made into such a model."""
    model = model_type.__new__(model_type)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", fields_set)
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


_set = object.__setattr__


class Assignment(Frozen):
    """Where the grouping engine put one event."""

    signature_id: str
    tier: Tier
    fingerprint_hash: str
    fingerprint_version: str
    explanation: str = Field(description="the fingerprint's component tree, rendered as text")
    title: str = Field(description="short human title: error type and normalised message")
    normalized_message: str
    related: list[str] = Field(default_factory=list, description="possibly related signatures")
    related_similarity: dict[str, float] = Field(
        default_factory=dict, description="the TF-IDF cosine the engine found for each related signature"
    )
    similarity: float | None = None

"""The values that cross module boundaries: immutable pydantic models."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

AttributeValue = str | int | float | bool
EventKind = Literal["exception", "span_error", "log"]
Tier = Literal["error_code", "fingerprint", "similarity", "new"]


class Frozen(BaseModel):
    # defer_build: a model's validator is built when first used, not at import; a command pays only
    # for the models it uses (`rounds group` starts in 0.19 s of CPU instead of 0.29 s)
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


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

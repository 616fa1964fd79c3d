"""What goes into a diagnosis and what comes out of it.

`Diagnosis` is the model's answer; its JSON schema (see `diagnosis_json_schema`) is the one handed
to the CLI with `--json-schema`, so every field here is something the model must be able to fill.
`DiagnosisOutcome` is what a diagnoser returns: a status, never an exception, with the cost that
was really incurred even when the run failed.
"""

from __future__ import annotations

import copy
import functools
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from rounds_bot.diagnosis.paths import RepositoryPath
from rounds_bot.diagnosis.whole_numbers import integers_where_declared
from rounds_bot.models import ErrorEvent, Frozen
from rounds_bot.redact import redact_json

Classification = Literal["server_bug", "client_misuse", "documentation_gap", "dependency_failure", "unknown"]
Confidence = Literal["high", "medium", "low"]
EvidenceKind = Literal["file", "log", "event"]
OutcomeStatus = Literal[
    "ok",
    "no_data",
    "timeout",
    "turn_limit",
    "budget_exhausted",
    "api_error",
    "invalid_answer",
]


class Evidence(Frozen):
    """One fact the diagnosis rests on, pointing at something the bot can check exists."""

    kind: EvidenceKind = Field(
        description=(
            "file: a line in the repository (path relative to the repository root, and line); "
            "log: a log line quoted verbatim from the telemetry; event: an event id from the samples"
        )
    )
    path: RepositoryPath | None = Field(
        default=None, description="for kind=file: path relative to the repository root"
    )
    # strict: the schema says `integer`; `true` or `"7"` is no line (lax conversion would read `true` as 1)
    line: int | None = Field(
        default=None, ge=1, strict=True, description="for kind=file: 1-based line number"
    )
    log_line: str | None = Field(default=None, description="for kind=log: the log line, verbatim")
    event_id: str | None = Field(default=None, description="for kind=event: the event id")
    explanation: str = Field(description="what this evidence shows, in one sentence")

    @model_validator(mode="after")
    def _has_the_pointer_its_kind_needs(self) -> Evidence:
        missing = {
            "file": self.path is None or self.line is None,
            "log": not self.log_line,
            "event": not self.event_id,
        }[self.kind]
        if missing:
            needed = {"file": "path and line", "log": "log_line", "event": "event_id"}[self.kind]
            raise ValueError(f"evidence of kind {self.kind!r} needs {needed}")
        return self


class EvidenceCheck(Frozen):
    """Whether one evidence item points at something that exists."""

    index: int
    verified: bool
    reason: str


class FaultLocation(Frozen):
    """Where the fault is: the code to change, which need not be where it crashed. Checked like evidence:
    the file and lines must exist at the revision, and the function must be found there."""

    path: RepositoryPath = Field(description="file, relative to the repository root")
    function: str = Field(
        min_length=1,
        description="the function or method to change, by its name as written in the file (e.g. parseDate)",
    )
    start_line: int = Field(ge=1, strict=True, description="first line of the faulty code, 1-based")
    end_line: int | None = Field(
        default=None, ge=1, strict=True, description="last line of the faulty code; default start_line"
    )

    @property
    def last_line(self) -> int:
        return max(self.end_line or self.start_line, self.start_line)

    def pointer(self) -> str:
        lines = (
            f"{self.start_line}"
            if self.last_line == self.start_line
            else f"{self.start_line}-{self.last_line}"
        )
        return f"{self.path}:{lines}"


class Diagnosis(Frozen):
    """The model's answer for one signature. Abstaining (`unknown`, saying what is missing) is valid.

    Answers stored before `fault_location` and `missing_evidence` existed still read: both default empty.
    """

    classification: Classification = Field(
        description=(
            "server_bug: the service is wrong; client_misuse: a caller used it wrongly and the "
            "service answered correctly; documentation_gap: the service behaves as built but its "
            "documentation or error message does not let a caller use it right; dependency_failure: "
            "something the service depends on failed (a downstream API, database, queue, network, "
            "disk, or the platform) and the service's own code is not at fault; unknown: abstain"
        )
    )
    unknown_reason: str | None = Field(
        default=None, description="when classification is unknown: why you abstain, in one sentence"
    )
    missing_evidence: list[str] = Field(
        default_factory=list,
        description=(
            "when classification is unknown: what is missing to decide, each a thing someone could "
            "fetch or add (e.g. the request body of a failing call, the payment provider's status)"
        ),
    )
    fault_location: FaultLocation | None = Field(
        default=None,
        description=(
            "where the fault is (the code a fix changes, not necessarily the crash site); for "
            "client_misuse, documentation_gap or dependency_failure, the code that rejects or "
            "depends (or the documentation file); null when abstaining or when no code is at fault"
        ),
    )
    root_cause: str = Field(description="the root cause in a few sentences, or what is known of it")
    evidence: list[Evidence] = Field(
        default_factory=list, description="facts the root cause rests on, each checkable"
    )
    suggested_fix: str = Field(description="what to change, where; empty when abstaining")
    confidence: Confidence
    missing_observability: list[str] = Field(
        default_factory=list,
        description="telemetry that would have made this diagnosis easier or certain",
    )
    suggested_error_code: str | None = Field(
        default=None,
        description=(
            "when the error carries no standardised error code: a code to give it, "
            "UPPER_SNAKE_CASE, e.g. ORDER_NOT_FOUND"
        ),
    )

    # What rounds found when it checked the answer: never part of the answer's schema, never taken from it.
    evidence_checks: SkipJsonSchema[list[EvidenceCheck]] = Field(
        default_factory=list, description="rounds' check of each evidence item, in order"
    )
    stated_confidence: SkipJsonSchema[Confidence | None] = Field(
        default=None, description="the answer's own confidence, when rounds lowered it"
    )

    @classmethod
    def from_answer(cls, answer: dict[str, Any]) -> Diagnosis:
        """The model's answer, validated, with its text redacted once, here: the model read the repository
        and the telemetry, and may quote a secret from either. What rounds records of its own checks is
        dropped from the answer. Raises pydantic's ValidationError."""
        answer = {key: value for key, value in answer.items() if key not in _ROUNDS_OWN}
        answer = integers_where_declared(answer, _answer_schema())  # a line of 7.0 is 7 (`whole_numbers`)
        return cls.model_validate(redact_json(answer))

    def checked(self, checks: list[EvidenceCheck]) -> Diagnosis:
        """This diagnosis with rounds' evidence checks; `high` confidence only when every item of its
        evidence was verified (there is at least one): an answer resting on what rounds could not find is
        at most `medium`, and so never qualifies for an automatic fix."""
        update: dict[str, Any] = {"evidence_checks": list(checks)}
        stated = self.stated_confidence or self.confidence
        if stated == "high" and not _all_verified(self.evidence, checks):
            update |= {"confidence": "medium", "stated_confidence": "high"}
        return self.model_copy(update=update)

    @property
    def evidence_verified(self) -> bool:
        """True when there is evidence and rounds verified every item of it."""
        return _all_verified(self.evidence, self.evidence_checks)

    @model_validator(mode="after")
    def _abstention_says_why(self) -> Diagnosis:
        if self.classification == "unknown" and not (
            (self.unknown_reason or "").strip() or any(item.strip() for item in self.missing_evidence)
        ):
            raise ValueError(
                "classification 'unknown' needs missing_evidence (or unknown_reason): say what is missing"
            )
        return self

    @property
    def abstains(self) -> bool:
        """The answer declines to classify: not enough evidence."""
        return self.classification == "unknown"

    @property
    def tentative(self) -> bool:
        """A class given with low confidence: shown as a hypothesis, never acted on automatically
        (the auto-fix gate asks for high confidence), and scored as such by the eval."""
        return self.confidence == "low" and not self.abstains


_ROUNDS_OWN = frozenset({"evidence_checks", "stated_confidence"})


def _all_verified(evidence: list[Evidence], checks: list[EvidenceCheck]) -> bool:
    verified = {check.index for check in checks if check.verified}
    return bool(evidence) and all(index in verified for index in range(len(evidence)))


class OccurrenceStats(Frozen):
    """How often a signature occurred: the context a reader of the diagnosis needs first."""

    total: int = Field(ge=0)
    in_window: int = Field(default=0, ge=0, description="occurrences in the current round")
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    services: list[str] = Field(default_factory=list)
    service_versions: list[str] = Field(default_factory=list)
    environments: list[str] = Field(default_factory=list)


class RelatedSignature(Frozen):
    """A similar signature, or one diagnosed before, shown to the model for comparison."""

    signature_id: str
    title: str
    relation: Literal["similar", "previously_diagnosed"] = "similar"
    similarity: float | None = None
    classification: Classification | None = None
    root_cause: str | None = None
    issue_url: str | None = None


class LogLine(Frozen):
    """A log line related to the incident (same trace, or the same service around an occurrence)."""

    timestamp: datetime | None = None
    service: str | None = None
    severity: str | None = None
    body: str
    trace_id: str | None = None


class DiagnosisRequest(Frozen):
    """Everything context building needs for one signature. Paths are the caller's to trust."""

    signature_id: str
    title: str
    service: str = "unknown"
    error_type: str | None = None
    error_code: str | None = None
    normalized_message: str = ""
    stacktrace: str | None = Field(default=None, description="the representative stack trace")
    sample_events: list[ErrorEvent] = Field(default_factory=list)
    stats: OccurrenceStats = Field(default_factory=lambda: OccurrenceStats(total=0))
    related_logs: list[LogLine] = Field(default_factory=list)
    related: list[RelatedSignature] = Field(default_factory=list)
    checkout: Path = Field(description="the repository checkout at `code_revision`")
    code_revision: str = Field(description="commit the checkout is at; part of the cache key")
    rediagnose_hint: str | None = Field(
        default=None, description="why a new diagnosis was asked for, e.g. from a /rounds command"
    )

    def has_data(self) -> bool:
        """False when there is nothing to reason about: no sample, no trace, no message."""
        return bool(self.sample_events or self.stacktrace or self.normalized_message.strip())


class TokenUsage(Frozen):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    @property
    def total(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_input_tokens
            + self.cache_creation_input_tokens
        )


class LocationCheck(Frozen):
    """Whether the fault location exists: the file and lines at the revision, the function in them."""

    verified: bool
    reason: str


class LookupAnswer(Frozen):
    """What an incident look-up returned to the model during one diagnosis, so that a log line the model
    found that way (and quotes as evidence) can be checked against it."""

    tool: str
    arguments: dict[str, str | int] = Field(default_factory=dict)
    answer: str


class DiagnosisOutcome(Frozen):
    """The result of one diagnosis attempt. Failures are statuses; `cost_usd` is always booked."""

    status: OutcomeStatus
    diagnosis: Diagnosis | None = None
    detail: str = Field(default="", description="what happened, for the round report")
    cost_usd: float = Field(default=0.0, ge=0)
    cost_is_estimate: bool = Field(
        default=False, description="True when the backend reported no cost and the estimate was booked"
    )
    turns: int = 0
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    model: str | None = None
    duration_seconds: float | None = None
    evidence_checks: list[EvidenceCheck] = Field(default_factory=list)
    denied_tools: list[str] = Field(
        default_factory=list, description="tools the model asked for and was refused"
    )
    location_check: LocationCheck | None = Field(
        default=None, description="the fault location's check, when the answer gives one"
    )
    lookups: list[LookupAnswer] = Field(
        default_factory=list, description="the incident look-ups' answers during this diagnosis"
    )

    @model_validator(mode="before")
    @classmethod
    def _diagnosis_carries_its_checks(cls, data: Any) -> Any:
        """The evidence checks travel with the diagnosis (to the issue, the cache and the auto-fix gate),
        also for outcomes read back from before the diagnosis carried them."""
        if not isinstance(data, dict) or not data.get("evidence_checks") or data.get("diagnosis") is None:
            return data
        diagnosis = data["diagnosis"]
        diagnosis = diagnosis if isinstance(diagnosis, Diagnosis) else Diagnosis.model_validate(diagnosis)
        if diagnosis.evidence_checks:
            return data
        checks = [EvidenceCheck.model_validate(check) for check in data["evidence_checks"]]
        return {**data, "diagnosis": diagnosis.checked(checks)}

    @model_validator(mode="after")
    def _ok_carries_a_diagnosis(self) -> DiagnosisOutcome:
        if (self.status == "ok") != (self.diagnosis is not None):
            raise ValueError("a DiagnosisOutcome carries a diagnosis exactly when its status is ok")
        return self

    @property
    def unverified_evidence(self) -> list[int]:
        return [check.index for check in self.evidence_checks if not check.verified]


def diagnosis_json_schema() -> dict[str, Any]:
    """The answer's JSON schema, self-contained (no `$ref`), as given to the model."""
    schema = Diagnosis.model_json_schema()
    definitions = schema.pop("$defs", {})
    return _without_titles(_inline_refs(schema, definitions))


@functools.cache
def _answer_schema() -> dict[str, Any]:  # made once, for reading answers (never changed)
    return diagnosis_json_schema()


def _inline_refs(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = copy.deepcopy(definitions[ref.removeprefix("#/$defs/")])
            extra = {key: value for key, value in node.items() if key != "$ref"}
            return _inline_refs({**target, **extra}, definitions)
        return {key: _inline_refs(value, definitions) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline_refs(item, definitions) for item in node]
    return node


def _strip_titles(node: Any) -> Any:
    """Pydantic's generated titles only repeat the field names: drop them to save tokens."""
    if isinstance(node, dict):
        return _without_titles(node)
    if isinstance(node, list):
        return [_strip_titles(item) for item in node]
    return node


def _without_titles(mapping: dict[str, Any]) -> dict[str, Any]:
    return {
        key: _strip_titles(value)
        for key, value in mapping.items()
        if not (key == "title" and isinstance(value, str))
    }

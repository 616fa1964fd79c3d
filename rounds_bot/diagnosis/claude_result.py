"""The Claude Code CLI's result object read into a `DiagnosisOutcome`.

The CLI prints one `{"type":"result",...}` object (the last line of stream-json output). Its
subtype says how the run ended: a turn or budget limit, an API error, or success with the answer
as `structured_output` (or, failing that, as JSON in the result text). The answer is validated
against the schema and its evidence checked against the checkout either way it came.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from rounds_bot.diagnosis.evidence import check_evidence, location_check
from rounds_bot.diagnosis.json_answer import (
    MAX_ANSWER_CHARS,
    MAX_ANSWER_DEPTH,
    answer_problem,
    json_object,
    nesting_depth,
    parse_json_answer,
    repeated_key,
    repeated_key_problem,
    value_problem,
)
from rounds_bot.diagnosis.model import (
    Diagnosis,
    DiagnosisOutcome,
    DiagnosisRequest,
    LookupAnswer,
    OutcomeStatus,
    TokenUsage,
)
from rounds_bot.diagnosis.process import Finished
from rounds_bot.redact import redact

_SUBTYPE_STATUS: dict[str, OutcomeStatus] = {
    "error_max_turns": "turn_limit",
    "error_max_budget_usd": "budget_exhausted",
    "error_max_structured_output_retries": "invalid_answer",
}


#: the longest result line read: the answer (as text and as structured output) and the run's figures
MAX_RESULT_CHARS = 3 * MAX_ANSWER_CHARS + 64_000
#: the result object wraps the answer one level deep
_RESULT_DEPTH = MAX_ANSWER_DEPTH + 1


def find_result(stdout_lines: list[str]) -> dict[str, Any] | None:
    """The final `{"type":"result",...}` object of json or stream-json output, if any (within bounds:
    `result_problem` says why a result line was not read)."""
    for line in reversed(stdout_lines):
        candidate = _result_object(line.strip())
        if candidate is not None and candidate.get("type") == "result":
            return candidate
    whole = "".join(stdout_lines).strip()
    candidate = _result_object(whole) if len(stdout_lines) > 1 else None
    if candidate is not None and candidate.get("type") == "result":
        return candidate
    return None


def _result_object(text: str) -> dict[str, Any] | None:
    if len(text) > MAX_RESULT_CHARS:
        return None
    return json_object(text, max_depth=_RESULT_DEPTH)


def result_problem(stdout_lines: list[str]) -> str | None:
    """Why the CLI's result was not read, when it printed one out of bounds: the model's answer was too
    long, nested too deep or repeated a key. None when no line looks like a result."""
    for line in reversed(stdout_lines):
        text = line.strip()
        if not text.startswith("{") or '"result"' not in text[:MAX_RESULT_CHARS]:
            continue
        if len(text) > MAX_RESULT_CHARS:
            return f"the CLI's result is {len(text):,} characters; at most {MAX_RESULT_CHARS:,} are read"
        if nesting_depth(text, _RESULT_DEPTH) > _RESULT_DEPTH:
            return f"the answer nests more than {MAX_ANSWER_DEPTH} levels deep; a diagnosis needs 3"
        # the CLI writes its own keys once: a key said twice is in the structured output, the model's
        key = repeated_key(text, max_depth=_RESULT_DEPTH)
        if key is not None:
            return repeated_key_problem(key)
    return None


def outcome_from_result(
    result: dict[str, Any],
    request: DiagnosisRequest,
    *,
    duration_seconds: float | None = None,
    fallback_model: str | None = None,
    lookups: list[LookupAnswer] | None = None,
) -> DiagnosisOutcome:
    """Map the CLI's result object to an outcome; validate the answer either way it came. `lookups`:
    what the incident look-ups returned during the run (quoted log lines are checked against them)."""
    common: dict[str, Any] = {
        "cost_usd": max(float(result.get("total_cost_usd") or 0.0), 0.0),
        "turns": int(result.get("num_turns") or 0),
        "tokens": token_usage(result.get("usage")),
        "model": _model(result) or fallback_model,
        "duration_seconds": duration_seconds,
        "denied_tools": [
            str(denial.get("tool_name"))
            for denial in result.get("permission_denials") or []
            if isinstance(denial, dict)
        ],
        "lookups": list(lookups or []),
    }
    subtype = str(result.get("subtype") or "")
    if subtype in _SUBTYPE_STATUS:
        return DiagnosisOutcome(
            status=_SUBTYPE_STATUS[subtype], detail=_error_detail(result, subtype), **common
        )
    if subtype.startswith("error") or result.get("is_error"):
        return DiagnosisOutcome(status="api_error", detail=_error_detail(result, subtype), **common)

    answer = result.get("structured_output")
    source = "structured_output"
    problem = value_problem(answer) if isinstance(answer, dict) else None
    if not isinstance(answer, dict):
        text = str(result.get("result") or "")
        answer = parse_json_answer(text)
        source = "result text (no structured_output)"
        problem = answer_problem(text.strip())
    if problem is not None:
        return DiagnosisOutcome(status="invalid_answer", detail=f"{problem} ({source})", **common)
    if answer is None:
        return DiagnosisOutcome(status="invalid_answer", detail=_no_object_detail(result), **common)
    try:
        diagnosis = Diagnosis.from_answer(answer)
    except (ValidationError, RecursionError) as error:
        return DiagnosisOutcome(
            status="invalid_answer",
            detail=f"the answer from {source} does not match the schema: {_errors(error)}",
            **common,
        )
    return DiagnosisOutcome(
        status="ok",
        diagnosis=diagnosis,
        detail=f"answer read from {source}",
        evidence_checks=check_evidence(diagnosis, request, lookups),
        location_check=location_check(diagnosis, request),
        **common,
    )


#: JSON's names for the types of value a structured output can be, other than an object
_JSON_TYPES = {list: "list", str: "string", bool: "boolean", int: "number", float: "number"}


def _no_object_detail(result: dict[str, Any]) -> str:
    """Why a result carried no answer object: its structured output was another kind of JSON value, its
    text was empty, or its text held no object (an excerpt of it, redacted)."""
    structured = result.get("structured_output")
    if structured is not None:
        kind = _JSON_TYPES.get(type(structured), type(structured).__name__)
        return f"the structured output is a JSON {kind}, not an object"
    text = str(result.get("result") or "")
    if not text.strip():
        return "the answer was empty"
    return "the answer held no JSON object: " + _excerpt(text)


def token_usage(raw: Any) -> TokenUsage:
    """The token counts of a `usage` object; zeros for what it lacks."""
    if not isinstance(raw, dict):
        return TokenUsage()
    return TokenUsage(
        input_tokens=int(raw.get("input_tokens") or 0),
        output_tokens=int(raw.get("output_tokens") or 0),
        cache_read_input_tokens=int(raw.get("cache_read_input_tokens") or 0),
        cache_creation_input_tokens=int(raw.get("cache_creation_input_tokens") or 0),
    )


def _model(result: dict[str, Any]) -> str | None:
    usage = result.get("modelUsage")
    if isinstance(usage, dict) and usage:
        return ",".join(sorted(str(name) for name in usage))
    return None


def _error_detail(result: dict[str, Any], subtype: str) -> str:
    parts = [f"subtype {subtype or 'unknown'}"]
    if result.get("terminal_reason"):
        parts.append(f"terminal reason {result['terminal_reason']}")
    if result.get("api_error_status"):
        parts.append(f"API status {result['api_error_status']}")
    message = result.get("result") or "; ".join(str(e) for e in result.get("errors") or [])
    if message:
        parts.append(_excerpt(str(message)))
    if "Not logged in" in str(message):
        parts.append("no credentials reached the CLI: set ANTHROPIC_API_KEY")
    return ", ".join(parts)


def no_result_detail(finished: Finished) -> str:
    """Why a run that printed no result object gave no answer: its exit, output and stderr."""
    stdout = "".join(finished.stdout_lines).strip()
    what = "printed no result object" if not stdout else "printed output that is not a result"
    stderr = _excerpt(finished.stderr.strip()) if finished.stderr.strip() else "empty stderr"
    return f"the CLI exited {finished.returncode} and {what}; stderr: {stderr}"


def _excerpt(text: str, limit: int = 300) -> str:
    """A short excerpt of the CLI's or the model's text for the round report, redacted (it may quote
    what the model read)."""
    text = " ".join(text[: limit * 4].split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return redact(text)


def _errors(error: ValidationError | RecursionError) -> str:
    if isinstance(error, RecursionError):
        return "the answer nests too deep to validate"
    return "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or 'answer'}: {item['msg']}"
        for item in error.errors()[:5]
    )

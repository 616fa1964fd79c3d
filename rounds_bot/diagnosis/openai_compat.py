"""Diagnose with any OpenAI-compatible chat-completions endpoint (a hosted or self-hosted model).

The model gets the context only, no tools: it cannot read the repository beyond the snippets the
context carries. With `structured_output=True` the request asks for `response_format` of type
`json_schema`; an endpoint that refuses it (HTTP 400 naming response_format) is asked once more
without it. Either way the JSON is read from the answer text and validated.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
from pydantic import ValidationError

from rounds_bot import telemetry
from rounds_bot.diagnosis.budget import CallShape, ModelPrice, estimate_cost
from rounds_bot.diagnosis.context import DEFAULT_BUDGET_TOKENS, build_context
from rounds_bot.diagnosis.evidence import check_evidence, location_check
from rounds_bot.diagnosis.json_answer import answer_problem, parse_json_answer
from rounds_bot.diagnosis.model import (
    Diagnosis,
    DiagnosisOutcome,
    DiagnosisRequest,
    TokenUsage,
    diagnosis_json_schema,
)
from rounds_bot.diagnosis.prompting import Prompt, PromptLibrary

#: a self-hosted model costs nothing per token; pass the provider's price otherwise
FREE = ModelPrice(input=0, output=0, cache_write=0, cache_read=0)


class OpenAICompatDiagnoser:
    """A `Diagnoser` over `POST {base_url}/chat/completions`, via httpx."""

    name = "openai-compat"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        structured_output: bool = True,
        timeout_seconds: float = 300.0,
        max_output_tokens: int = 2_000,
        context_budget_tokens: int = DEFAULT_BUDGET_TOKENS,
        price: ModelPrice = FREE,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.structured_output = structured_output
        self.timeout_seconds = timeout_seconds
        self.max_output_tokens = max_output_tokens
        self.context_budget_tokens = context_budget_tokens
        self.price = price
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(headers=headers, timeout=timeout_seconds, transport=transport)

    def close(self) -> None:
        self._http.close()

    def estimate_cost(self, request: DiagnosisRequest) -> float:
        prompt = self._prompt(request, with_schema=not self.structured_output)
        shape = CallShape(
            context_tokens=prompt.tokens,
            overhead_tokens=0,
            expected_turns=1,
            output_tokens_per_turn=self.max_output_tokens,
        )
        # One call, no prompt cache: every input token is paid at the input price.
        cached = self.price.model_copy(update={"cache_write": self.price.input})
        return estimate_cost(shape, cached)

    def diagnose(self, request: DiagnosisRequest) -> DiagnosisOutcome:
        if not request.has_data():
            return DiagnosisOutcome(
                status="no_data", detail="no sample event, stack trace or message to diagnose"
            )
        with telemetry.span("rounds.diagnose") as span:
            # Dotted attribute names go through `set`, which takes nothing but attributes.
            span.set(
                **{
                    "gen_ai.system": "openai_compatible",
                    "gen_ai.request.model": self.model,
                    "rounds.diagnoser": self.name,
                    "rounds.signature_id": request.signature_id,
                }
            )
            outcome = self._diagnose(request)
            span.set(
                **{
                    "rounds.status": outcome.status,
                    "gen_ai.usage.input_tokens": outcome.tokens.input_tokens,
                    "gen_ai.usage.output_tokens": outcome.tokens.output_tokens,
                    "rounds.turns": outcome.turns,
                    "rounds.cost_usd": outcome.cost_usd,
                }
            )
        return outcome

    def _prompt(self, request: DiagnosisRequest, *, with_schema: bool) -> Prompt:
        context = build_context(request, budget_tokens=self.context_budget_tokens)
        schema = _schema_text() if with_schema else ""
        return PromptLibrary.for_checkout(request.checkout).render(context, tools=[], answer_schema=schema)

    def _diagnose(self, request: DiagnosisRequest) -> DiagnosisOutcome:
        started = time.monotonic()
        structured = self.structured_output
        try:
            response = self._post(request, structured)
            if structured and response.status_code == 400 and "response_format" in response.text:
                structured = False
                response = self._post(request, structured)
        except httpx.TimeoutException:
            return DiagnosisOutcome(
                status="timeout",
                detail=f"no answer from {self.base_url} within {self.timeout_seconds:g} s",
                model=self.model,
                duration_seconds=time.monotonic() - started,
            )
        except httpx.HTTPError as error:
            return DiagnosisOutcome(
                status="api_error",
                detail=f"{self.base_url} could not be reached: {error}",
                model=self.model,
                duration_seconds=time.monotonic() - started,
            )
        return self._outcome(request, response, time.monotonic() - started)

    def _post(self, request: DiagnosisRequest, structured: bool) -> httpx.Response:
        prompt = self._prompt(request, with_schema=not structured)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": prompt.user},
            ],
            "max_tokens": self.max_output_tokens,
            "temperature": 0,
        }
        if structured:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "diagnosis", "schema": diagnosis_json_schema()},
            }
        return self._http.post(f"{self.base_url}/chat/completions", json=body)

    def _outcome(
        self, request: DiagnosisRequest, response: httpx.Response, seconds: float
    ) -> DiagnosisOutcome:
        common: dict[str, Any] = {"model": self.model, "duration_seconds": seconds}
        if response.status_code >= 400:
            return DiagnosisOutcome(
                status="api_error",
                detail=f"{self.base_url} answered HTTP {response.status_code}: {response.text[:300]}",
                **common,
            )
        try:
            payload = response.json()
            choice = payload["choices"][0]
            content = choice["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
            return DiagnosisOutcome(
                status="api_error",
                detail=f"{self.base_url} answered something that is not a chat completion",
                **common,
            )
        usage = payload.get("usage") or {}
        tokens = TokenUsage(
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
        )
        common |= {
            "tokens": tokens,
            "turns": 1,
            "model": str(payload.get("model") or self.model),
            "cost_usd": (tokens.input_tokens * self.price.input + tokens.output_tokens * self.price.output)
            / 1_000_000,
        }
        # an answer cut at max_tokens is broken JSON: the reason says so beside what is broken
        cut = " (cut at max_tokens)" if choice.get("finish_reason") == "length" else ""
        problem = answer_problem(str(content).strip())
        if problem is not None:
            return DiagnosisOutcome(status="invalid_answer", detail=problem + cut, **common)
        answer = parse_json_answer(str(content))
        if answer is None:
            return DiagnosisOutcome(
                status="invalid_answer", detail=f"the answer held no JSON object{cut}", **common
            )
        try:
            diagnosis = Diagnosis.from_answer(answer)
        except RecursionError:
            return DiagnosisOutcome(
                status="invalid_answer", detail="the answer nests too deep to validate", **common
            )
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "answer"
            return DiagnosisOutcome(
                status="invalid_answer",
                detail=f"the answer does not match the schema: {where}: {first['msg']}",
                **common,
            )
        return DiagnosisOutcome(
            status="ok",
            diagnosis=diagnosis,
            evidence_checks=check_evidence(diagnosis, request),
            location_check=location_check(diagnosis, request),
            **common,
        )


def _schema_text() -> str:
    import json

    return json.dumps(diagnosis_json_schema(), indent=1)

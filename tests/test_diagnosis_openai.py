"""The OpenAI-compatible adapter over an httpx mock transport: no network."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from diagnosis_samples import good_answer, make_checkout, sample_request

from rounds_bot.diagnosis.budget import ModelPrice
from rounds_bot.diagnosis.openai_compat import OpenAICompatDiagnoser


def completion(content: str, finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "model": "local-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}
        ],
        "usage": {"prompt_tokens": 3000, "completion_tokens": 500},
    }


class Endpoint:
    """Scripted replies; records each request body."""

    def __init__(self, *replies: httpx.Response | Exception) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[httpx.Headers] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content))
        self.headers.append(request.headers)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def diagnoser(endpoint: Endpoint, **overrides: Any) -> OpenAICompatDiagnoser:
    settings: dict[str, Any] = {
        "base_url": "http://127.0.0.1:8000/v1/",
        "model": "local-model",
        "api_key": "sk-local",
        "price": ModelPrice(input=1, output=2, cache_write=1, cache_read=1),
        "transport": httpx.MockTransport(endpoint),
    }
    settings.update(overrides)
    return OpenAICompatDiagnoser(**settings)


@pytest.fixture
def request_(tmp_path: Path):
    return sample_request(make_checkout(tmp_path / "repo"))


def test_json_schema_answer_is_validated_and_costed(request_):
    endpoint = Endpoint(httpx.Response(200, json=completion(json.dumps(good_answer()))))
    outcome = diagnoser(endpoint).diagnose(request_)
    assert outcome.status == "ok"
    assert outcome.cost_usd == pytest.approx((3000 * 1 + 500 * 2) / 1e6)
    body = endpoint.bodies[0]
    assert body["response_format"]["type"] == "json_schema"
    assert "tools" not in body
    assert endpoint.headers[0]["authorization"] == "Bearer sk-local"
    assert all(check.verified for check in outcome.evidence_checks)


def test_endpoint_without_json_schema_support_is_asked_again_with_the_schema_in_the_prompt(request_):
    endpoint = Endpoint(
        httpx.Response(400, json={"error": {"message": "response_format json_schema is not supported"}}),
        httpx.Response(200, json=completion("Sure!\n```json\n" + json.dumps(good_answer()) + "\n```")),
    )
    outcome = diagnoser(endpoint).diagnose(request_)
    assert outcome.status == "ok"
    second = endpoint.bodies[1]
    assert "response_format" not in second
    assert '"classification"' in second["messages"][0]["content"]


def test_text_mode_parses_json_from_the_answer(request_):
    endpoint = Endpoint(httpx.Response(200, json=completion(json.dumps(good_answer()))))
    outcome = diagnoser(endpoint, structured_output=False).diagnose(request_)
    assert outcome.status == "ok"
    assert "response_format" not in endpoint.bodies[0]


def test_answer_cut_at_max_tokens_is_an_invalid_answer(request_):
    endpoint = Endpoint(httpx.Response(200, json=completion('{"classification": "ser', "length")))
    outcome = diagnoser(endpoint).diagnose(request_)
    assert outcome.status == "invalid_answer" and "max_tokens" in outcome.detail


def test_schema_violation_is_an_invalid_answer(request_):
    endpoint = Endpoint(httpx.Response(200, json=completion(json.dumps(good_answer(confidence="total")))))
    assert diagnoser(endpoint).diagnose(request_).status == "invalid_answer"


def test_server_error_and_timeout_are_statuses(request_):
    failing = Endpoint(httpx.Response(503, text="overloaded"))
    assert diagnoser(failing).diagnose(request_).status == "api_error"
    slow = Endpoint(httpx.ReadTimeout("slow"))
    assert diagnoser(slow).diagnose(request_).status == "timeout"
    refused = Endpoint(httpx.ConnectError("refused"))
    assert diagnoser(refused).diagnose(request_).status == "api_error"


def test_estimate_is_positive_for_a_priced_model_and_zero_when_self_hosted(request_):
    assert diagnoser(Endpoint()).estimate_cost(request_) > 0
    assert (
        diagnoser(Endpoint(), price=ModelPrice(input=0, output=0, cache_write=0, cache_read=0)).estimate_cost(
            request_
        )
        == 0
    )

"""Doppler's tokens are redacted by their own format, with no name before them, in every kind Doppler issues.

Doppler's "Auth Token Formats" reference (docs.doppler.com/reference/auth-token-formats) gives each kind a
prefix and 40 to 44 letters and digits: CLI `dp.ct.`, personal `dp.pt.` (gitleaks' doppler-api-token),
service `dp.st.` (which may carry its config's slug, `dp.st.dev.<token>`: 2 to 35 lowercase letters, digits,
`-` or `_`), service account `dp.sa.`, service account identity `dp.said.`, SCIM `dp.scim.`, audit
`dp.audit.`.
"""

from __future__ import annotations

import random
import string

import pytest

from rounds_bot.models import ErrorEvent
from rounds_bot.redact import Redactor, redact, redact_poll
from rounds_bot.sources.base import PollResult
from tests.test_redact_engine import assert_same

_ALNUM = string.ascii_letters + string.digits
_RANDOM = random.Random(20261128)


def _body(length: int = 43) -> str:
    return "".join(_RANDOM.choice(_ALNUM) for _ in range(length))


TOKENS = [
    "dp.ct." + _body(),
    "dp.pt." + _body(),
    "dp.st." + _body(40),
    "dp.st.dev." + _body(),
    "dp.st.prd_eu-west." + _body(44),
    "dp.sa." + _body(),
    "dp.said." + _body(),
    "dp.scim." + _body(),
    "dp.audit." + _body(),
]
#: where a log carries a token without naming it
CARRIERS = (
    "doppler setup --no-prompt --token {} failed: 401",
    "curl -u {}: https://api.doppler.com/v3/configs/config/secrets",
    '{{"input": "{}", "retry": 3}}',
    "rejected {}",
)
KEPT = (
    "the dp.st. prefix names a service token",
    "dp.st.dev is not a token",
    "version dp.pt.2 rolled out",
    "dp.said.short",
)


@pytest.mark.parametrize("value", TOKENS)
def test_a_doppler_token_of_every_kind_is_redacted_with_no_name_before_it(value: str) -> None:
    for carrier in CARRIERS:
        text = carrier.format(value)
        seen = redact(text)
        assert "[REDACTED:api_token]" in seen, text
        assert value.rsplit(".", 1)[1] not in seen and value not in seen, text


def test_a_service_tokens_config_slug_goes_with_it() -> None:
    token = "dp.st.prd." + _body()
    assert redact(f"DOPPLER_TOKEN rejected: {token}.") == "DOPPLER_TOKEN rejected: [REDACTED:api_token]."


@pytest.mark.parametrize("text", KEPT)
def test_text_that_only_names_a_doppler_prefix_stays(text: str) -> None:
    assert redact(text) == text


def test_a_doppler_token_is_gone_after_the_event_boundary() -> None:
    events = [
        ErrorEvent(
            event_id=f"e{n}", timestamp="2026-11-28T12:00:00Z", service="billing", message=f"token {value}"
        )
        for n, value in enumerate(TOKENS)
    ]
    seen = redact_poll(Redactor(), PollResult(events=events))
    for value, event in zip(TOKENS, seen.events, strict=True):
        assert value.rsplit(".", 1)[1] not in event.model_dump_json()


def test_the_engines_redact_doppler_tokens_as_the_reference_does() -> None:
    from rounds_bot.redact.text import _rules

    texts = [carrier.format(value) for value in TOKENS for carrier in CARRIERS] + list(KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)

"""Vendor tokens no gitleaks rule knows, by the format trufflehog's detectors read each vendor's tokens in:
each has a prefix of its own, so it is redacted with no name before it (an exception's message, a header, a
URL), and every engine gives the reference's text for it. A Replicate token is `r8_` and 37 characters."""

from __future__ import annotations

import random
import string

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules, redact_text
from tests.test_redact_engine import assert_same

_RANDOM = random.Random(20_241_128)
_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_LOWER = string.ascii_lowercase + string.digits


def _run(length: int, alphabet: str = _ALNUM) -> str:
    return "".join(_RANDOM.choice(alphabet) for _ in range(length))


def _uuid() -> str:
    h = _run(32, _HEX)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


TOKENS = {
    "docker personal": "dckr_pat_" + _run(27, _ALNUM + "_-"),
    "docker organisation": "dckr_oat_" + _run(32, _ALNUM + "_-"),
    "buildkite": "bkua_" + _run(40, _LOWER),
    "circleci": "CCIPAT_" + _run(22) + "_" + _run(40, _HEX),
    "contentful": "CFPAT-" + _run(43, _ALNUM + "_-"),
    "posthog": "phx_" + _run(45),
    "hubspot": "pat-na1-" + _uuid(),
    "hubspot eu": "pat-eu1-" + _uuid(),
    "nvidia": "nvapi-" + _run(64, _ALNUM + "_-"),
    "flutterwave live": "FLWSECK-" + _run(32, _LOWER) + "-X",
    "atlassian admin": "ATCTT3xFfG" + _run(120, _ALNUM + "_-") + "=" + _run(8),
    "bitbucket app password": "ATBB" + _run(32),
    "replicate": "r8_" + _run(37),
    "tines webhook": f"https://acme-1.tines.com/webhook/{_run(32, _LOWER)}/{_run(32, _LOWER)}",
    # Firebase Cloud Messaging's legacy server key (and a device's registration token, the same shape)
    "fcm server key": "AAAA" + _run(7, _ALNUM + "_-") + ":APA91b" + _run(134, _ALNUM + "_-"),
    # a registration token of today's shape: a 22-character instance id before `:APA91b`
    "fcm registration token": _run(22, _ALNUM + "_-") + ":APA91b" + _run(134, _ALNUM + "_-"),
}
PLACES = (
    "request failed using credential {token} (status 401)",
    "Authorization: Bearer {token}",
    "GET https://api.example.com/v1/items?key={token}&page=2",
    '{{"level": "error", "msg": "auth failed", "credential": "{token}"}}',
    '  File "deploy.py", line 12, in <module>\n    client = Client("{token}")',
)


@pytest.mark.parametrize("name", sorted(TOKENS))
@pytest.mark.parametrize("place", PLACES)
def test_a_vendor_token_with_a_prefix_of_its_own_is_redacted_wherever_it_stands(
    name: str, place: str
) -> None:
    token = TOKENS[name]
    out = redact(place.format(token=token))
    assert token not in out
    assert not any(token[i : i + 12] in out for i in range(len(token) - 11)), out
    assert "[REDACTED:" in out


KEPT = (
    "ATBBOTT role assigned",  # a word that starts like a Bitbucket password
    "phx_session expired",
    "pod dckr_pat-worker restarted",
    "https://docs.tines.com/webhook/overview",
    "error r8_model not found",
)


@pytest.mark.parametrize("text", KEPT)
def test_what_only_begins_like_such_a_token_stays(text: str) -> None:
    assert redact(text) == text


def test_fcms_legacy_authorization_header_is_one_marker_after_its_key() -> None:
    key = TOKENS["fcm server key"]
    result = redact_text(f"POST /fcm/send Authorization: key={key} failed")
    assert result.text == "POST /fcm/send Authorization: key=[REDACTED:api_token] failed", result.text
    assert sum(result.counts.values()) == 1, result.counts


def test_a_pair_whose_value_runs_into_another_secret_is_still_redacted() -> None:
    # only FCM's `Authorization: key=` is a label before a marker; any other value before one is a secret
    token = "ghp_" + _run(36)
    out = redact(f"password=S3cr3tPw9x={token}")
    assert "S3cr3tPw9x" not in out and token not in out, out


@pytest.mark.parametrize(
    "label",
    (
        "registrationToken:",
        "registration_token=",
        "to: ",
        # labels of exactly an instance id's or a server key's length (22, 11): a word of letters, or one
        # that ends in `token(s)`, is a label
        "deviceToken:",
        "push_tokens:",
        "firebaseMessagingToken:",
        "fcm_registration_token:",
        '{"deviceToken":"',
    ),
)
def test_a_registration_token_after_its_label_keeps_the_label(label: str) -> None:
    # a legacy registration id is `APA91b` and its tail alone; an instance id before `:APA91b` is 11 or 22
    # characters, so a longer word before the colon is the label, not part of the token
    tail = "APA91b" + _run(134, _ALNUM + "_-")
    assert redact(f"{label}{tail}") == f"{label}[REDACTED:api_token]"


@pytest.mark.parametrize("instance", ("yHnGA3cCcYseu52C5CdYP2", "fX-HnGAcCcYseuCCdYP_Qz", "AAAAhMqBgNj"))
def test_a_registration_token_with_its_instance_id_is_one_marker(instance: str) -> None:
    # an instance id is 22 characters of URL-safe base64 (a server key's `AAAA...` 11): it goes with the token
    tail = "APA91b" + _run(134, _ALNUM + "_-")
    assert redact(f"Sending to {instance}:{tail} failed") == "Sending to [REDACTED:api_token] failed"


def test_every_engine_gives_the_reference_text_for_these_tokens() -> None:
    texts = [place.format(token=token) for token in TOKENS.values() for place in PLACES] + list(KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)


SONAR = ("squ_" + _run(40, _HEX), "sqp_" + _run(40, _HEX), "sqa_" + _run(40, _HEX))
#: Braintree's access token: environment, the merchant's id, then the secret itself (32 hex digits)
BRAINTREE = "access_token$production$" + _run(16, _LOWER) + "$" + _run(32, _HEX)


@pytest.mark.parametrize("token", (*SONAR, BRAINTREE))
@pytest.mark.parametrize("place", PLACES)
def test_sonar_tokens_and_the_secret_part_of_a_braintree_token_are_redacted(token: str, place: str) -> None:
    out = redact(place.format(token=token))
    assert token[-24:] not in out, out

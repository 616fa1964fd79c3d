"""Vendor tokens whose format gitleaks' and trufflehog's rules confirm, each read as they read it.

A token whose detector's keyword is its own prefix (LaunchDarkly's `api-`/`sdk-` and a version-4 UUID,
Dropbox's short-lived `sl.`, Salesforce's refresh token `5AEP861` and connected app's consumer key `3MVG9`)
is redacted wherever it stands. A token in a plainer format (Discord's bot token, Okta's `00...`, NuGet's
46 characters, an Azure DevOps PAT, Netlify's, Trello's, a Salesforce session id, Asana's PAT, Twitter's,
ngrok's, ClickUp's) is redacted when the service's name stands before it, in a sentence as in an
assignment, within the 40 characters trufflehog's detectors allow (`PrefixRegex`); without the name, or as a
word, it stays."""

from __future__ import annotations

import random
import string

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

_RANDOM = random.Random(20_261_128)
_ALNUM = string.ascii_letters + string.digits
_LOWER = string.ascii_lowercase + string.digits
_HEX = "0123456789abcdef"


def _run(length: int, alphabet: str = _ALNUM) -> str:
    # a generated token holds a digit (trufflehog's `KeyIsRandom`): the first character is one
    return _RANDOM.choice(string.digits) + "".join(_RANDOM.choice(alphabet) for _ in range(length - 1))


def _uuid4() -> str:
    h = _run(32, _HEX)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{h[16:20]}-{h[20:]}"


ALONE = {
    "launchdarkly api": "api-" + _uuid4(),
    "launchdarkly sdk": "sdk-" + _uuid4(),
    "dropbox short-lived": "sl." + _run(135, _ALNUM + "-_"),
    "dropbox short-lived user": "sl.u." + _run(140, _ALNUM + "-_"),
    "salesforce refresh": "5AEP861" + _run(90, _ALNUM + "._"),
    "salesforce consumer key": "3MVG9" + _run(80, _ALNUM + "._"),
}
ALONE_PLACES = (
    "request failed using credential {token} (status 401)",
    "Authorization: Bearer {token}",
    '{{"level": "error", "msg": "auth failed", "credential": "{token}"}}',
    "GET https://api.example.com/v1/items?key={token}&page=2",
)


@pytest.mark.parametrize("name", sorted(ALONE))
@pytest.mark.parametrize("place", ALONE_PLACES)
def test_a_token_whose_keyword_is_its_prefix_is_redacted_with_no_name_before_it(
    name: str, place: str
) -> None:
    token = ALONE[name]
    out = redact(place.format(token=token))
    assert not any(token[i : i + 12] in out for i in range(len(token) - 11)), out


NAMED = {
    "discord bot": (
        "Discord",
        _run(24, _ALNUM + "_-") + "." + _run(6, _ALNUM + "_-") + "." + _run(27, _ALNUM + "_-"),
    ),
    "discord bot, longer hmac": ("discord", "MT" + _run(22) + "." + _run(6) + "." + _run(38, _ALNUM + "_-")),
    "okta": ("Okta", "00" + _run(40, _ALNUM + "_-")),
    "nuget": ("NuGet", "oy2" + _run(43, _LOWER)),
    "azure devops": ("Azure DevOps", _run(52, _LOWER)),
    "netlify": ("netlify", "nfp_" + _run(36, _ALNUM + "_")),
    "netlify older": ("Netlify", _run(43, _ALNUM + "_-")),
    "trello key": ("Trello", _run(32)),
    "trello token": ("trello", _run(64)),
    "salesforce session": ("Salesforce", "00D" + _run(12) + "!" + _run(96, _ALNUM + "._")),
    "asana": ("Asana", "2/" + _run(16, string.digits) + "/" + _run(16, string.digits) + ":" + _run(32, _HEX)),
    "twitter bearer": ("twitter", "A" * 22 + _run(90, _ALNUM + "%")),
    "twitter access": ("Twitter", _run(18, string.digits) + "-" + _run(30)),
    "ngrok": ("ngrok", "2" + _run(26) + "_" + _run(21)),
    "clickup": (
        "ClickUp",
        "pk_" + _run(8, string.digits) + "_" + _run(32, string.ascii_uppercase + string.digits),
    ),
}
NAMED_PLACES = (
    "{name} client failed: credential {token} rejected",
    "calling {name} api with key {token}",
    "{name} bot token {token}",
    "{name}: {token}",
)


@pytest.mark.parametrize("kind", sorted(NAMED))
@pytest.mark.parametrize("place", NAMED_PLACES)
def test_a_token_after_its_service_name_is_redacted(kind: str, place: str) -> None:
    name, token = NAMED[kind]
    out = redact(place.format(name=name, token=token))
    assert not any(token[i : i + 12] in out for i in range(len(token) - 11)), out
    assert name in out  # the service's name stays: it tells what failed


KEPT = (
    "azure storage account " + "a" * 52,  # no digit: not a generated key
    "trello board sync-marketing-campaign-board-2024-q1 failed",  # a name with its words
    "discord: message 1234567890123456789 deleted",  # a snowflake, not a token
    "api-service-7d9f8b6c5d restarted",
    "sl.example.com unreachable",
    "okta login failed for 00-the-user",
    "request " + "0" * 2 + _run(40, _ALNUM) + " from a service that is not named",
)


@pytest.mark.parametrize("text", KEPT)
def test_a_name_or_a_word_that_only_looks_like_such_a_token_stays(text: str) -> None:
    assert redact(text) == text


def test_every_engine_gives_the_reference_text_for_these_tokens() -> None:
    texts = [place.format(token=token) for token in ALONE.values() for place in ALONE_PLACES]
    texts += [place.format(name=n, token=t) for n, t in NAMED.values() for place in NAMED_PLACES]
    texts += list(KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)

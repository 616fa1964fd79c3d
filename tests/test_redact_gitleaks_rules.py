"""A secret of every gitleaks rule family is redacted wherever telemetry carries it, and the harmless text
those rules' false positives stand for stays.

The secrets are made fresh from each rule's facts (`gitleaks_families.py`) and planted in the places an error
carries text: a log message, an exception message, a stack trace's source line, an attribute's value (under a
neutral key, and under the service's name for a rule that reads one), a URL's query, a JSON body and an
`Authorization:` header line; each is judged by `redact` and by the event boundary (`redact_poll`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import pytest
from gitleaks_families import Secret, secrets

from rounds_bot.models import ErrorEvent
from rounds_bot.redact import Redactor, redact, redact_poll, redact_text
from rounds_bot.redact.text import _rules
from rounds_bot.sources.base import PollResult
from tests.redact_reference import reference_redact

#: a generated run this long or longer must not come out, even where the whole value does not
_RUN = 10


def _assigned(item: Secret, shape: str) -> str:
    """The value as a line of text writes it: in its context, after its name, or alone."""
    if item.context:
        return item.context % item.value
    if item.name:
        return shape.format(name=item.name, value=item.value)
    return item.value


def _json_body(item: Secret) -> str:
    if item.context:
        return json.dumps({"config": item.context % item.value, "retry": 3})
    return json.dumps({item.name or "upstream": item.value, "region": "eu-west-1", "retry": 3})


def _query(item: Secret) -> str:
    parameter = f"{item.name or 'ref'}={quote(item.value, safe='')}"
    return f"https://api.example.com/v2/orders?page=2&{parameter}&sort=asc"


def _stack(item: Secret) -> str:
    line = f'{item.name} = "{item.value}"' if item.name else f'client = Client("{item.value}")'
    return (
        "Traceback (most recent call last):\n"
        '  File "/app/billing/client.py", line 42, in connect\n'
        f"    {line}\n"
        "ValueError: upstream refused the request"
    )


def places(item: Secret) -> dict[str, str]:
    """Where telemetry carries the value: place -> the text that holds it."""
    found = {
        "log message": "upstream call failed: " + _assigned(item, "{name}={value}"),
        "exception message": "invalid configuration (" + _assigned(item, "{name}: {value}") + ")",
        "attribute value": _assigned(item, "{name}={value}"),
        "JSON body": "request body: " + _json_body(item),
    }
    if not item.context:
        found["stack trace line"] = _stack(item)
        found["URL query"] = "GET " + _query(item) + " 502"
        found["Authorization header"] = f"POST /v1/charge\nAuthorization: Bearer {item.value}\nAccept: */*"
    return found


def leaked(item: Secret, seen: str) -> bool:
    written = (item.value, quote(item.value, safe=""), json.dumps(item.value)[1:-1])
    runs = [run for run in item.runs if len(run) >= _RUN]
    return any(form in seen for form in written) or any(run in seen for run in runs)


SECRETS = secrets()


def _id(item: Secret) -> str:
    return f"{item.rule}:{item.value[:8]}"


@pytest.mark.parametrize("item", SECRETS, ids=_id)
def test_a_secret_of_each_gitleaks_rule_is_redacted_in_every_place_text_carries_it(item):
    assert [place for place, text in places(item).items() if leaked(item, redact(text))] == []


def _events(item: Secret) -> list[ErrorEvent]:
    at = datetime(2026, 11, 27, 12, tzinfo=UTC)
    where = places(item)

    def event(n: int, **fields: object) -> ErrorEvent:
        return ErrorEvent(event_id=f"e{n}", timestamp=at + timedelta(seconds=n), service="billing", **fields)

    attributes: dict[str, object] = {"app.detail": where["attribute value"]}
    if item.name:
        attributes[item.name] = item.value
    events = [
        event(0, kind="log", message=where["log message"]),
        event(1, kind="exception", error_type="ValueError", message=where["exception message"]),
        event(2, kind="log", message="payment declined", attributes=attributes),
        event(3, kind="log", message=where["JSON body"]),
    ]
    if not item.context:
        events += [
            event(4, kind="exception", error_type="KeyError", stacktrace=where["stack trace line"]),
            event(5, kind="span_error", message="upstream 502", attributes={"url.full": _query(item)}),
            event(6, kind="exception", error_type="HTTPError", message=where["Authorization header"]),
        ]
    return events


@pytest.mark.parametrize("item", SECRETS, ids=_id)
def test_a_secret_of_each_gitleaks_rule_is_gone_after_the_event_boundary(item):
    seen = redact_poll(Redactor(), PollResult(events=_events(item)))
    kept = [event.model_dump_json() for event in seen.events]
    assert [n for n, text in enumerate(kept) if leaked(item, text)] == []


# --- what the rules' false positives stand for: harmless text that must stay --------------------------------

KEPT = (
    # identifiers under a name holding a credential's word: ids, UUIDs (`..._id`, `...Id`)
    "report_access_id: 9c2f0e4a-7b1d-4e8a-9f3c-2d5b6a7e8f01",
    'clientId = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"',
    "kms_key_id=7d8e9f0a-1b2c-4d3e-9f4a-5b6c7d8e9f0a",
    "discord_guild_id=912345678901234567 joined",
    "datadog_trace_id=4bf92f3577b34da6a3ce929d0e0e4736",
    # values under a service's name that are not its credentials: words, names, ids, numbers
    "datadog_service=billing-api-v2 env=production",
    "dropbox_folder=photosbackup",
    "sentry_environment=production",
    "discord_channel=912345678901234567 muted",
    "okta_user_id=00u1f2g3h4i5j6k7l8m9",
    "heroku_dyno=web.1 crashed",
    "TwitterClient: 401 Unauthorized",
    "JiraClient=enabled",
    "hubspot_portal=AcmeCorporation",
    # versions and build coordinates under an API's name
    "PAYMENTS_API_VERSION=rc0.15.2_20261127_1930-SNAPSHOT",
    "api_version=2026-11-01",
    "[DEBUG] org.slf4j:slf4j-api:jar:2.0.16:compile",
    # revisions and content hashes
    'SRCREV_billing = "3f2a9c1b7d5e4f60a1b2c3d4e5f6071829384756"',
    "deployed commit 3f2a9c1b7d5e4f60a1b2c3d4e5f6071829384756 to eu-west-1",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    # values under a maybe-secret name that are not generated
    "cache_key=user:42",
    "apiUrl=gateway.internal.example",
    "key_length = 32",
    "access=denied for role viewer",
    "sequenceKey = 18",
    # methods and classes named after a vendor
    "getPagesInConfluenceSpace,searchConfluenceUsingCql failed",
    "if err := sysctl.SetSysctl(bridgeCallIPTables); err != nil {",
    "\tat com.acme.jira.JiraClient.getIssue(JiraClient.java:88)",
    "\tat com.acme.slack.SlackNotifier.post(SlackNotifier.kt:41)",
    "    at StripeWebhookHandler.handle (/app/src/stripe/webhook.ts:57:13)",
    '  File "/app/integrations/twilio_client.py", line 120, in send_sms',
    # hashes and addresses in stack frames
    "\t/app/internal/token_store.go:57 +0x1d",
    "goroutine 42 [running]:\nmain.(*Server).auth(0xc000112000, 0xc0001a4000)",
    "\tat com.acme.Main$$Lambda$1234/0x0000000800c0b440.run(Unknown Source)",
    "    at n (https://cdn.example.com/static/js/main.3f2a9c1b.chunk.js:2:14567)",
    # ids of traces, requests and events, timestamps
    "trace 4bf92f3577b34da6a3ce929d0e0e4736 span 00f067aa0ba902b7",
    "request 01HZX3K8Q9V7M2N4P6R8T0W2Y4 failed after 3 retries",
    "event 6ba7b810-9dad-11d1-80b4-00c04fd430c8 dropped at 2026-11-27T19:40:00.123456Z",
    "snowflake 1466207831548456960 queued",
    # gitleaks' placeholders of a token's prefix with too little after it
    "expected a token starting with ghp_ or github_pat_",
    "unsupported key type: sk_test_ keys are refused in production",
    "expected a key starting with gsk_, xai-, r8_ or sk-or-v1-",
    # a test's name after the `test_`/`live_`/`sandbox_` a client key starts with: words, no digits
    "FAILED tests/test_billing.py::test_refundsPartialCaptureWhenDisputed - AssertionError",
    "\tat com.acme.billing.LiveTest.live_refreshesExchangeRatesEveryMinute(LiveTest.java:31)",
    "sandbox_settings_reconciliationrun=enabled",
    # a JWT library's call with a key that is a variable, not a literal
    'claims = jwt.decode(token, verifier, algorithms=["RS256"])',
)


@pytest.mark.parametrize("text", KEPT)
def test_harmless_text_the_rules_false_positives_stand_for_stays(text):
    assert redact(text) == text


def test_the_scanning_engine_redacts_these_texts_as_the_reference_engine_does():
    rules = _rules("all")
    texts = [text for item in SECRETS for text in places(item).values()] + list(KEPT)
    for text in texts:
        mine, theirs = redact_text(text), reference_redact(rules, text)
        assert (mine.text, mine.counts) == (theirs.text, theirs.counts), text

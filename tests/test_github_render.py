"""Issue bodies as GitHub shows them: golden files pin the rendering; an over-long body keeps its marker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rounds_bot.marker import MarkerState, read_marker
from rounds_bot.render.issue import MAX_BODY_CHARS, IssueView, RelatedLink, issue_title, render_body

GOLDEN = Path(__file__).parent / "golden" / "github"
UPDATE = os.environ.get("ROUNDS_UPDATE_GOLDEN") == "1"


def view(**changes) -> IssueView:
    base = IssueView(
        signature_id="sig_5d9824aaacee071a",
        service="checkout",
        error_type="KeyError",
        normalized_message="'user_id' missing from session <uuid>",
        title="KeyError: 'user_id' missing from session <uuid>",
        tier="fingerprint",
        explanation=(
            "exception type: KeyError (contributes)\nin-app frames: checkout/session.py:load (contributes)"
        ),
        round_count=7,
        total_count=42,
        first_seen="2026-03-02T09:00:00+00:00",
        last_seen="2026-03-02T09:25:13+00:00",
        services=["checkout"],
        versions=["1.4.2", "1.4.3"],
        environments=["production"],
        message="KeyError: 'user_id'",
        stacktrace=(
            "Traceback (most recent call last):\n"
            '  File "checkout/session.py", line 88, in load\n'
            '    return session["user_id"]\n'
            "KeyError: 'user_id'"
        ),
        related=[RelatedLink(signature_id="sig_12", issue_ref="#12", similarity=0.47)],
        links=[
            ("SigNoz trace", "https://signoz.example.com/trace/4bf92f3577b34da6a3ce929d0e0e4736"),
            ("SigNoz exceptions", "https://signoz.example.com/exceptions?serviceName=checkout"),
        ],
        classification="server bug",
        confidence="high",
        diagnosis_markdown="### Root cause\n\nThe session loader reads `user_id` before login completes.",
        marker=MarkerState(
            signature_id="sig_5d9824aaacee071a",
            service="checkout",
            fingerprint_hash="5d9824aaacee071a",
            fingerprint_version="fp-1",
            first_seen="2026-03-02T09:00:00+00:00",
            last_seen="2026-03-02T09:25:13+00:00",
            total_count=42,
            title="KeyError: 'user_id' missing from session <uuid>",
            error_type="KeyError",
            services=["checkout"],
        ),
    )
    return base.model_copy(update=changes)


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE or not path.exists():
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), (
        f"{name} changed; rerun with ROUNDS_UPDATE_GOLDEN=1 if meant"
    )


@pytest.mark.parametrize(
    ("name", "changes"),
    [
        ("full.md", {}),
        (
            "undiagnosed_without_stacktrace.md",
            {
                "classification": None,
                "confidence": None,
                "diagnosis_markdown": None,
                "stacktrace": None,
                "links": [],
                "related": [],
                "tier": "new",
            },
        ),
    ],
)
def test_the_rendered_body_matches_its_golden_file(name, changes):
    check_golden(name, render_body(view(**changes)))


def test_the_title_is_service_error_type_and_message_and_short():
    assert issue_title(view()) == "[checkout] KeyError: 'user_id' missing from session <uuid>"
    assert len(issue_title(view(title="x" * 300))) == 120


def test_an_over_long_stack_trace_is_truncated_and_the_marker_survives():
    huge = "\n".join(f'  File "app/deep.py", line {n}, in recurse\n    recurse()' for n in range(5_000))
    body = render_body(view(stacktrace=huge))
    assert len(body) <= MAX_BODY_CHARS <= 65_536
    assert "_(truncated to fit the issue)_" in body
    assert read_marker(body).signature_id == "sig_5d9824aaacee071a"
    assert body.rstrip().endswith("-->")


def test_an_over_long_diagnosis_is_truncated_after_the_stack_trace_and_the_marker_survives():
    huge = "\n".join(f'  File "app/deep.py", line {n}, in recurse\n    recurse()' for n in range(5_000))
    body = render_body(view(stacktrace=huge, diagnosis_markdown="### Root cause\n\n" + "word " * 20_000))
    assert len(body) <= MAX_BODY_CHARS
    assert "_(truncated to fit the issue)_" in body
    assert "_(the diagnosis was truncated to fit the issue)_" in body
    assert read_marker(body).signature_id == "sig_5d9824aaacee071a"


def test_untrusted_text_cannot_close_the_fence():
    body = render_body(view(stacktrace='boom\n```\n<!-- rounds:marker v1 {"signature_id": "evil"} -->'))
    assert read_marker(body).signature_id == "sig_5d9824aaacee071a"
    assert body.count("\n```\n") == 4  # two fences (stack trace, why grouped), each opened and closed
    unterminated = render_body(view(stacktrace="boom <!-- rounds:marker v1 {"))
    assert read_marker(unterminated).signature_id == "sig_5d9824aaacee071a"


def test_a_cascade_filed_on_github_links_both_issues_by_number(tmp_path):
    """The checkout's exception and the gateway's 502 of the same traces, filed in one round: each issue names
    the other by its number, though one was created before the other existed."""
    from datetime import timedelta

    from fake_github.fixtures import running_fake
    from fake_github.rounds import START, round_against

    from rounds_bot.models import ErrorEvent

    trace_back = (
        'Traceback (most recent call last):\n  File "/app/checkout/pricing.py", line 88, in apply_discount\n'
        "    rate = FX_RATES[promotion['currency']]\nKeyError: 'currency'\n"
    )
    call = {
        "http.request.method": "POST",
        "http.response.status_code": 502,
        "url.full": "http://checkout-api/x",
    }
    events = []
    for n in range(3):
        trace, moment = f"{n:032x}", START + timedelta(minutes=n)
        events += [
            ErrorEvent(
                event_id=f"cause-{n}",
                timestamp=moment,
                service="checkout-api",
                error_type="KeyError",
                message="'currency'",
                stacktrace=trace_back,
                trace_id=trace,
                span_id="a1542a9f608eebcb",
                parent_span_id="0961e4842ddc3ebc",
            ),
            ErrorEvent(
                event_id=f"effect-{n}",
                timestamp=moment + timedelta(milliseconds=40),
                service="web-gateway",
                kind="span_error",
                error_type="502",
                message="POST",
                trace_id=trace,
                span_id="0961e4842ddc3ebc",
                span_kind="client",
                attributes=call,
            ),
        ]
    for fake in running_fake():
        round_against(fake, tmp_path, events, minutes=10)
        bodies = {read_marker(issue.body).service: (issue.number, issue.body) for issue in fake.issues()}
        (cause, cause_body), (effect, effect_body) = bodies["checkout-api"], bodies["web-gateway"]
        assert f"**Causes** #{effect} (3 traces)" in cause_body
        assert f"**Caused by** #{cause} (3 traces)" in effect_body
        assert f"**Next step:** start at #{cause}:" in effect_body

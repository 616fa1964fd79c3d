"""Zulip notifications: off unless configured, what a round posts, and every failure said plainly."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from click.testing import CliRunner
from fake_zulip import FakeZulip
from signature_samples import a_signature

from rounds_bot.cli.app import main
from rounds_bot.errors import ConfigError, NotifyError
from rounds_bot.notify.notices import mark_notified, round_notices
from rounds_bot.notify.zulip import (
    MAX_CONTENT_BYTES,
    ZulipNotifier,
    ZulipTarget,
    code,
    fit,
    zulip_from_settings,
)
from rounds_bot.settings import load_settings
from rounds_bot.store import RunRecord, Store

TARGET = ZulipTarget(site="https://chat.example.com", email="bot@example.com", stream="ops", topic="rounds")


def notifier(handler, sleeps: list[float] | None = None) -> ZulipNotifier:
    return ZulipNotifier(
        TARGET,
        "k3y",
        transport=httpx.MockTransport(handler),
        sleep=sleeps.append if sleeps is not None else (lambda _seconds: None),
    )


def test_a_message_is_posted_to_the_stream_and_topic_with_basic_auth():
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"result": "success", "msg": "", "id": 42})

    assert notifier(handler).send("hello") == 42
    request = seen[0]
    assert (request.method, str(request.url)) == ("POST", "https://chat.example.com/api/v1/messages")
    assert request.headers["authorization"] == httpx.BasicAuth("bot@example.com", "k3y")._auth_header
    form = dict(httpx.QueryParams(request.content.decode()))
    assert form == {"type": "stream", "to": "ops", "topic": "rounds", "content": "hello"}


@pytest.mark.parametrize(
    ("status", "payload", "expected"),
    [
        (
            401,
            {"result": "error", "msg": "Invalid API key", "code": "INVALID_API_KEY"},
            "refused the credentials",
        ),
        (
            400,
            {"result": "error", "msg": "Stream 'ops' does not exist", "code": "STREAM_DOES_NOT_EXIST"},
            "bot is subscribed",
        ),
        (500, {"result": "error", "msg": "oops"}, "500 oops"),
    ],
)
def test_refusals_are_notify_errors_that_say_what_to_fix(status, payload, expected):
    with pytest.raises(NotifyError, match=expected):
        notifier(lambda _request: httpx.Response(status, json=payload)).send("x")


def test_a_rate_limited_send_waits_once_as_told_then_retries():
    answers = iter(
        [
            httpx.Response(
                429, headers={"Retry-After": "3"}, json={"result": "error", "code": "RATE_LIMIT_HIT"}
            ),
            httpx.Response(200, json={"result": "success", "id": 7}),
        ]
    )
    sleeps: list[float] = []
    assert notifier(lambda _r: next(answers), sleeps).send("x") == 7
    assert sleeps == [3.0]


def test_an_unreachable_zulip_is_a_notify_error():
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(NotifyError, match="did not answer"):
        notifier(handler).send("x")


def test_long_messages_are_cut_at_a_line_to_fit():
    text = "\n".join(f"line {i} " + "é" * 40 for i in range(1000))
    cut = fit(text)
    assert len(cut.encode()) <= MAX_CONTENT_BYTES and cut.endswith("(cut to fit Zulip's message size)")
    assert fit("short") == "short"


def test_telemetry_text_cannot_mention_link_or_format():
    shown = code("@**all** look at `this` [link](https://evil.example)\n**bold**")
    assert shown.startswith("`") and shown.endswith("`") and shown.count("`") == 2


def test_notifications_are_off_unless_configured_and_half_a_configuration_is_an_error(clean_env):
    assert zulip_from_settings(load_settings()) is None
    clean_env.setenv("ZULIP_SITE", "https://chat.example.com")
    clean_env.setenv("ZULIP_API_KEY", "k")
    with pytest.raises(ConfigError, match="ZULIP_EMAIL, ROUNDS_ZULIP_STREAM are not set"):
        zulip_from_settings(load_settings())


def a_round(store: Store, plans: dict[str, str], run_id: str = "20260302T090000Z-abc") -> None:
    with store.transaction():
        for sid in plans:
            store.save(
                a_signature(
                    sid,
                    service="checkout",
                    title=f"KeyError @**all** in {sid}",
                    issue_ref=f"#{sid[-1]}",
                    total_count=3,
                    first_seen="2026-03-02T08:00:00+00:00",
                )
            )
        store.record_run(RunRecord(id=run_id, started_at="2026-03-02T09:00:00+00:00", plans=plans))


def test_a_round_that_filed_issues_gets_one_notice_each_and_a_summary_once(fresh_db):
    a_round(fresh_db, {"sig1": "new", "sig2": "regressed", "sig3": "updated"})
    links = {"sig1": "https://github.com/octo/app/issues/1", "sig2": "https://github.com/octo/app/issues/2"}
    notices = round_notices(fresh_db, links, run_url="https://github.com/octo/app/actions/runs/9")
    first, summary = notices.messages
    assert first.startswith("**New problem** [#1](https://github.com/octo/app/issues/1) in `checkout`")
    assert "`KeyError @**all** in sig1`" in first
    assert summary.startswith(
        "[round 20260302T090000Z-abc](https://github.com/octo/app/actions/runs/9): 1 new"
    )
    assert "- regressed: [#2](https://github.com/octo/app/issues/2)" in summary
    mark_notified(fresh_db, notices.run_id or "", datetime.now(UTC))
    assert round_notices(fresh_db, links).messages == []


def test_a_quiet_round_posts_nothing(fresh_db):
    a_round(fresh_db, {"sig3": "updated"})
    notices = round_notices(fresh_db, {})
    assert notices.messages == [] and "filed and reopened nothing" in notices.why_none


def test_rounds_notify_posts_to_a_zulip_server(clean_env, tmp_path):
    store = Store.open(tmp_path / "rounds.db")
    try:
        a_round(store, {"sig1": "new"})
    finally:
        store.close()
    with FakeZulip(streams=("ops",)) as zulip:
        env = {
            "SIGNATURES_DB_PATH": str(tmp_path / "rounds.db"),
            "ZULIP_SITE": zulip.url,
            "ZULIP_EMAIL": zulip.email,
            "ZULIP_API_KEY": zulip.api_key,
            "ROUNDS_ZULIP_STREAM": "ops",
        }
        runner = CliRunner()
        sent = runner.invoke(main, ["notify"], env=env)
        again = runner.invoke(main, ["notify"], env=env)
        test = runner.invoke(main, ["notify", "--test"], env=env)
        wrong = runner.invoke(main, ["notify", "--test"], env={**env, "ROUNDS_ZULIP_STREAM": "nope"})
    assert sent.exit_code == 0 and "sent 2 messages to ops > rounds" in sent.output
    assert "notified already" in again.output
    assert test.exit_code == 0 and len(zulip.messages) == 3
    assert wrong.exit_code == 2 and "Stream 'nope' does not exist" in wrong.output
    assert [m["topic"] for m in zulip.messages] == ["rounds"] * 3

"""The doctor's Zulip check: the credentials work (no message is posted)."""

from __future__ import annotations

from rounds_bot.doctor.result import Check
from rounds_bot.errors import RoundsError
from rounds_bot.notify.zulip import zulip_from_settings
from rounds_bot.settings import Settings


def zulip_checks(settings: Settings) -> list[Check]:
    try:
        notifier = zulip_from_settings(settings)
    except RoundsError as exc:
        return [Check(area="Zulip", status="fix", detail=str(exc))]
    if notifier is None:
        return [Check(area="Zulip", status="off", detail="notifications are off (no ZULIP_* settings)")]
    with notifier:
        try:
            who = notifier.whoami()
        except RoundsError as exc:
            return [Check(area="Zulip", status="fix", detail=str(exc))]
    return [
        Check(
            area="Zulip",
            status="ok",
            detail=f"posting as {who} to {notifier.target.stream} > {notifier.target.topic}",
        )
    ]

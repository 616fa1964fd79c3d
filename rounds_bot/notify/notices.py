"""What a round tells a chat: a notice per new issue, and a summary when the round filed or reopened anything.

Built from the signature database after the round (the `runs` table says what each signature's plan was, the
tracker's journal has each issue's link), so notifying is a separate step that cannot break a round, and a run
notifies each round once (`RoundNotified` in the event log).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from rounds_bot.clock import iso
from rounds_bot.events import Fact
from rounds_bot.models import Frozen
from rounds_bot.notify.zulip import code
from rounds_bot.store import Store

NOTIFIED = Fact.ROUND_NOTIFIED
# More new issues than this in one round are listed in the summary instead of one notice each.
MAX_NEW_NOTICES = 10
_NEW = ("new", "filed-late")


class Notices(Frozen):
    run_id: str | None = None
    messages: list[str] = Field(default_factory=list)
    why_none: str = ""


def round_notices(store: Store, issue_links: dict[str, str], run_url: str | None = None) -> Notices:
    """Messages about the newest round not notified yet; `issue_links` maps signature ids to issue URLs."""
    runs = store.runs()
    if not runs:
        return Notices(why_none="no round has run yet")
    run = runs[-1]
    if store.fact(f"notified:{run.id}") is not None:
        return Notices(run_id=run.id, why_none=f"round {run.id} was notified already")
    plans = run.plans
    new = [sid for sid, kind in plans.items() if kind in _NEW]
    regressed = [sid for sid, kind in plans.items() if kind == "regressed"]
    updated = [sid for sid, kind in plans.items() if kind == "updated"]
    if not new and not regressed:
        return Notices(run_id=run.id, why_none=f"round {run.id} filed and reopened nothing")
    messages = [_new_issue(store, sid, issue_links.get(sid)) for sid in new[:MAX_NEW_NOTICES]]
    messages.append(_summary(store, run.id, new, regressed, updated, issue_links, run_url))
    return Notices(run_id=run.id, messages=messages)


def mark_notified(store: Store, run_id: str, at: datetime) -> None:
    with store.transaction():
        store.append_event(NOTIFIED, f"notified:{run_id}", signature_id=None, run_id=run_id, at=at)


def _new_issue(store: Store, signature_id: str, link: str | None) -> str:
    signature = store.signature(signature_id)
    if signature is None:
        return f"**New problem** {_issue(None, link)} in {code('unknown')}: {code('')}\n0 occurrences since ?"
    return (
        f"**New problem** {_issue(signature.issue_ref, link)} in {code(signature.service or 'unknown')}: "
        f"{code(signature.title)}\n"
        f"{signature.total_count} occurrences since {iso(signature.first_seen)}"
    )


def _summary(
    store: Store,
    run_id: str,
    new: list[str],
    regressed: list[str],
    updated: list[str],
    links: dict[str, str],
    run_url: str | None,
) -> str:
    where = f"[round {run_id}]({run_url})" if run_url else f"round {code(run_id)}"
    lines = [f"{where}: {len(new)} new, {len(regressed)} regressed, {len(updated)} updated"]
    for label, ids in (("regressed", regressed), ("new, not announced one by one", new[MAX_NEW_NOTICES:])):
        for sid in ids[:20]:
            signature = store.signature(sid)
            ref, title = (signature.issue_ref, signature.title) if signature else (None, "")
            lines.append(f"- {label}: {_issue(ref, links.get(sid))} {code(title)}")
    return "\n".join(lines)


def _issue(ref: str | None, link: str | None) -> str:
    if ref and link:
        return f"[{ref}]({link})"
    return code(ref or "not filed")

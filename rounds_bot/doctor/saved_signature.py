"""The doctor's check of the saved database's signature (ROUNDS_STATE_KEY): whether the next restore would
put the newest saved database in place, found as the restore finds it (`github.artifacts.first_restorable`:
the same artifacts tried, downloaded, their signatures verified and databases checked), in a temporary
folder that is removed at once: nothing is restored and nothing else is written.

Without the key, the doctor says once that saved databases are restored unsigned, so the gap the key closes
(docs/github-actions.md, "Signing the saved database") is still open where it runs."""

from __future__ import annotations

import tempfile
from pathlib import Path

from rounds_bot.doctor.result import Check, Status
from rounds_bot.errors import RoundsError
from rounds_bot.fixing.enabled import requests_off
from rounds_bot.github.actions import ActionsApi, Artifact
from rounds_bot.github.artifacts import Refused, first_restorable
from rounds_bot.settings import Settings

DOC = 'docs/github-actions.md, "Signing the saved database"'


def signature_check(settings: Settings, api: ActionsApi, usable: list[Artifact]) -> Check | None:
    """What the next restore makes of the saved databases' signatures; None with the key set and nothing
    saved yet (the check of the saved state says so already)."""
    key = settings.state_key.get_secret_value() if settings.state_key is not None else ""
    if not key:
        return _no_key(settings)
    if not usable or settings.github_token is None:
        return None
    member = Path(settings.signatures_db_path).name
    try:
        with tempfile.TemporaryDirectory(prefix="rounds-doctor-") as folder:
            scratch = Path(folder) / (member + ".restoring")
            chosen, refused = first_restorable(
                api, usable, scratch, member, settings.github_token.get_secret_value(), state_key=key
            )
    except (RoundsError, OSError) as exc:  # checks never raise: say what stopped this one
        detail = f"could not check the saved database's signature: {exc}"
        return Check(area="saved state", status="warn", detail=detail)
    return _verdict(usable[0], chosen, refused)


def _no_key(settings: Settings) -> Check:
    """The gap stays open; it matters where a job runs code the model wrote: with fix pull requests on."""
    status: Status = "off" if requests_off(settings) is not None else "warn"
    return Check(
        area="saved state",
        status=status,
        detail="ROUNDS_STATE_KEY is not set here: unless the steps that save and restore the database have "
        f"it, a restore takes an unsigned database, such as one the fix-test job saved ({DOC})",
    )


def _verdict(newest: Artifact, chosen: Artifact | None, refused: list[Refused]) -> Check:
    if chosen is not None and chosen.id == newest.id:
        return Check(
            area="saved state",
            status="ok",
            detail=f"artifact {chosen.id} (run {chosen.run_id}) is signed with ROUNDS_STATE_KEY and its "
            "signature is valid: the next round restores it",
        )
    why = "; ".join(_why(one) for one in refused)
    if chosen is not None:
        return Check(
            area="saved state",
            status="warn",
            detail=f"the newest saved database is refused ({why}): the next round restores the older "
            f"artifact {chosen.id} (run {chosen.run_id})",
            fix="give ROUNDS_STATE_KEY to every job that saves the database, as `state-key` or a secret "
            f"({DOC}); an unsigned one may also be the fix-test job's",
        )
    if all(one.unsigned for one in refused):
        return Check(
            area="saved state",
            status="warn",
            detail=f"no saved database is signed ({why}): the next round rebuilds the database from the "
            "issues, as the first round after setting ROUNDS_STATE_KEY does, and saves a signed one",
            fix="nothing if the key was just set; otherwise give it to every job that saves the database "
            f"({DOC})",
        )
    return Check(
        area="saved state",
        status="fix",
        detail=f"no saved database would be restored ({why}): every round rebuilds the database from the "
        "issues, and occurrence history restarts each time",
        fix=f"use the same ROUNDS_STATE_KEY in every job that saves or restores the database ({DOC})",
    )


def _why(refused: Refused) -> str:
    """One refusal, short: the signature's problem when that was it, else the restore's note."""
    if refused.signature is None:
        return refused.note
    return f"artifact {refused.artifact.id} (run {refused.artifact.run_id}) {refused.signature}"

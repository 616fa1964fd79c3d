"""Names in the environment or a `.env` file that look like settings but are none: a misspelt
`ROUNDS_DIAGNOSE_TRESHOLD` is an error that names the setting meant, never silently ignored.

rounds owns the `ROUNDS_` prefix: every unknown `ROUNDS_*` name is reported, but for the few that rounds'
own workflow, actions and test suite set and that are not settings (`NOT_SETTINGS`). `SIGNOZ_*` is shared
with SigNoz's own tools, so in the environment only a name close to a setting is reported; in a `.env` file,
which holds rounds' settings only, every unknown `ROUNDS_*` or `SIGNOZ_*` name is, and so is any other name
close to a setting (`POLL_INTERVAL_SECOND`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

#: set by rounds' workflow and actions (install and checkout steps) or its test suite; not settings
NOT_SETTINGS = frozenset(
    {
        "ROUNDS_HOME",
        "ROUNDS_PYTHON",
        "ROUNDS_PACKAGE",
        "ROUNDS_SETTINGS",
        "ROUNDS_SHARED_DATA",
        "ROUNDS_FUZZ_EXAMPLES",
        "ROUNDS_UPDATE_GOLDEN",
        "ROUNDS_RECORD_GITHUB_CASSETTES",
        "ROUNDS_TEST_SIGNOZ_URL",
        "ROUNDS_TEST_SIGNOZ_API_KEY",
    }
)
#: the GitHub App of rounds' earlier fix workflow (ROUNDS_APP_ID, ROUNDS_APP_PRIVATE_KEY): not settings, but
#: tokens `rounds fix test` refuses to run beside (`fixing/tokens.py`), so that check must still see them
NOT_SETTINGS_PREFIXES = ("ROUNDS_APP_",)
_OWNED = "ROUNDS_"
_SHARED = "SIGNOZ_"
#: how alike (difflib's ratio) a name must be to a setting to be taken for a misspelling of it
CLOSE = 0.8


def unknown_names(
    known: Iterable[str], environment: Mapping[str, str], env_file: Mapping[str, str | None], file_name: str
) -> list[str]:
    """One description per unknown name: where it is, and the setting it is closest to."""
    names = sorted(set(known))
    found = []
    for name in sorted(environment):
        meant = _nearest(name, names)
        if name in names or name in NOT_SETTINGS or name.startswith(NOT_SETTINGS_PREFIXES):
            continue
        if name.startswith(_OWNED) or (name.startswith(_SHARED) and meant):
            found.append(_describe(name, "the environment", meant))
    for name in sorted(env_file):
        meant = _nearest(name, names)
        if name in names or name in NOT_SETTINGS:
            continue
        if name.startswith((_OWNED, _SHARED)) or meant:
            found.append(_describe(name, file_name, meant))
    return found


def _nearest(name: str, names: list[str]) -> str | None:
    close = difflib.get_close_matches(name, names, n=1, cutoff=CLOSE)
    return close[0] if close else None


def _describe(name: str, where: str, meant: str | None) -> str:
    guess = f"did you mean {meant}?" if meant else "no setting has a name like it"
    return f"{name} in {where} ({guess})"

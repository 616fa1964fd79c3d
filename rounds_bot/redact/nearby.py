"""Vendor tokens in a plain format, redacted when the service's name stands shortly before them:
`Discord bot token MTk...`, `calling Okta api with key 00...`, `NuGet: oy2...`.

Their formats have no prefix of their own (a Discord bot token is three dotted runs, an Azure DevOps PAT 52
lowercase letters and digits), so gitleaks and trufflehog both find them only after the service's name:
gitleaks when the name is assigned the value (its "semi-generic" rules, which `pairs.py` reads), trufflehog
when the name stands at most 40 characters before it, whatever is between (`detectors.PrefixRegex`), as a
sentence or a message gives it. This reads them as trufflehog does, within the line, with each detector's
format and the check its detectors share (`KeyIsRandom`): a generated key holds a digit, so a word or a
name of the same length stays. Each format is the one gitleaks' or trufflehog's rule for the service
writes. Applied after `pairs.py`: an assigned value is counted under its name, as before.
"""

from __future__ import annotations

import re

from rounds_bot.redact.rule import Rule, rule

#: the service's name, then at most 40 characters of the line (trufflehog's `PrefixRegex`, read lazily)
_NEAR = r"[^\n]{0,40}?"
#: the value starts and ends a word, as `\b` around trufflehog's and gitleaks' formats
_START = r"(?<![A-Za-z0-9_-])"
_END = r"(?![A-Za-z0-9_-])"

#: each service's name (as its detectors' keywords read it, in any case) and its tokens' formats
_FORMATS: tuple[tuple[str, str], ...] = (
    # Discord's bot token (trufflehog's three dotted runs; a longer third run is taken whole, as the tail of
    # any token is)
    ("discord", r"[A-Za-z0-9_-]{24}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,100}"),
    ("okta", r"00[A-Za-z0-9_=-]{40}"),  # gitleaks' `okta-access-token`
    ("nuget", r"[a-z0-9]{46}"),  # trufflehog's `nugetapikey`
    ("azure", r"[0-9a-z]{52}"),  # trufflehog's `azuredevopspersonalaccesstoken`
    # trufflehog's v2, gitleaks' `netlify-access-token`
    ("netlify", r"nfp_[A-Za-z0-9_]{36}|[A-Za-z0-9_-]{43,46}"),
    # trufflehog's token and key, gitleaks' `trello-access-token`
    ("trello", r"[A-Za-z0-9-]{64}|[A-Za-z0-9-]{32}"),
    ("salesforce", r"00[A-Za-z0-9]{13}![A-Za-z0-9_.]{96}"),  # trufflehog's session id (access token)
    ("asana", r"[0-9]{1,20}/[0-9]{16,40}(?:/[0-9]{16,40})?:[A-Za-z0-9]{32,64}"),  # trufflehog's PAT
    # gitleaks' `twitter-bearer-token` and `twitter-access-token`
    ("twitter", r"A{22}[A-Za-z0-9%]{80,100}|[0-9]{15,25}-[A-Za-z0-9]{20,40}"),
    ("ngrok", r"2[A-Za-z0-9]{26}_\d[A-Za-z0-9]{20}"),  # trufflehog's `ngrok`
    ("clickup", r"pk_[0-9]{7,9}_[0-9A-Z]{32}"),  # trufflehog's `clickuppersonaltoken`
)


def _random(match: re.Match[str]) -> bool:
    """trufflehog's `KeyIsRandom`: a generated key holds a digit."""
    return any(ch.isdigit() for ch in match.group(1))


NEARBY: tuple[Rule, ...] = tuple(
    rule(
        "api_token",
        rf"(?i:{name}){_NEAR}{_START}({pattern}){_END}",
        name,
        group=1,
        accept=_random,
    )
    for name, pattern in _FORMATS
)

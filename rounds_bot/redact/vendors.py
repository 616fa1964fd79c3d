"""Vendor tokens no gitleaks rule knows, recognised by the format the vendor publishes, as trufflehog's
detectors (github.com/trufflesecurity/trufflehog, `pkg/detectors/*`) read them: each has a prefix of its own,
so it is redacted wherever it stands, with no name before it (a log line, an exception, a URL).

Also here, the formats of gitleaks' families whose detector in trufflehog needs no name before them,
its keyword being the token's own prefix: LaunchDarkly's keys (`api-`, `sdk-`), Dropbox's short-lived
tokens (`sl.`), Salesforce's refresh tokens and consumer keys (`5AEP861`, `3MVG9`).

And Firebase Cloud Messaging's legacy server key, as SonarSource's secrets rule reads it (its `:APA91b`), and
a device's registration token, which has its shape (or, GCM's legacy form, its `APA91b` tail alone).
And a format whose secret gitleaks' proposed rule stops short of: Braintree's access token is
`access_token$<environment>$<merchant id>$<32 hex digits>`, and the secret is the part after the merchant.
Kept apart from `tokens.py` (gitleaks' families); applied right after them, before what names a secret.
"""

from __future__ import annotations

from rounds_bot.redact.rule import Rule, token

#: the token starts a word (trufflehog's `\b`), the literal first so it is searched at C speed
_B = r"(?<![A-Za-z0-9_-])"
#: a UUID, as HubSpot's private-app tokens and Tines' webhooks carry one
_UUID = r"[A-Za-z0-9]{8}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{12}"


def _random_id(length: int) -> str:
    """A random URL-safe base64 word of `length` before a colon, not a label: it mixes upper and lower case
    and holds a digit, `-` or `_` (a camelCase label is letters alone, a snake_case one lower case), and does
    not end in `token(s)` (`fcmToken_v2`). Lookaheads of bounded reach: linear."""
    word = r"[A-Za-z0-9_-]"
    before = f"{word}{{0,{length - 1}}}"
    return (
        f"(?={before}[a-z])(?={before}[A-Z])(?={before}[0-9_-])"
        f"(?!{word}{{{length - 6}}}[Tt]oken:|{word}{{{length - 7}}}[Tt]okens:){word}{{{length}}}:"
    )


VENDORS: tuple[Rule, ...] = (
    # Docker Hub: a personal access token, an organisation access token
    token("api_token", r"dckr_(?:pat_[A-Za-z0-9_-]{27}|oat_[A-Za-z0-9_-]{32})", "dckr_"),
    token("api_token", r"bkua_[a-z0-9]{40}", "bkua_"),  # Buildkite
    token("api_token", r"CCIPAT_[A-Za-z0-9]{22}_[A-Fa-f0-9]{40}", "ccipat_"),  # CircleCI personal token
    token("api_token", r"CFPAT-[A-Za-z0-9_-]{43}", "cfpat-"),  # Contentful personal access token
    token("api_token", r"phx_[A-Za-z0-9_]{43,48}", "phx_"),  # PostHog personal API key
    token("api_token", r"pat-(?:na|eu)1-" + _UUID, "pat-na1-", "pat-eu1-"),  # HubSpot private app
    token("api_token", r"nvapi-[A-Za-z0-9_-]{64}", "nvapi-"),  # NVIDIA
    token("api_token", r"FLWSECK-[0-9a-z]{32}-X", "flwseck-"),  # Flutterwave live secret key
    # Atlassian's newer kinds beside gitleaks' `ATATT3`: a cloud admin key; Bitbucket's app passwords
    token("api_token", r"ATCTT3xFfG[A-Za-z0-9+/=_-]{20,400}=[A-Za-z0-9]{8}", "atctt3xffg"),
    token("api_token", _B + r"ATBB[A-Za-z0-9]{28,40}(?![A-Za-z0-9_-])", "atbb"),
    # SonarQube's user, project-analysis and global-analysis tokens (the prefixes gitleaks' `sonar-api-token`
    # allows after a Sonar name; with them the token needs none)
    token("api_token", _B + r"sq[upa]_[a-f0-9]{40}(?![A-Za-z0-9_-])", "squ_", "sqp_", "sqa_"),
    token(
        "api_token", r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}(?:\$[a-f0-9]{32})?", "access_token$"
    ),
    # LaunchDarkly's API and SDK keys: `api-` or `sdk-` and a version-4 UUID (the prefix is the keyword)
    token(
        "api_token",
        _B + r"(?:api|sdk)-[a-z0-9]{8}-[a-z0-9]{4}-4[a-z0-9]{3}-[a-z0-9]{4}-[a-z0-9]{12}(?![A-Za-z0-9_-])",
        "api-",
        "sdk-",
    ),
    # Dropbox's short-lived access token, `sl.` (a user's, `sl.u.`) and 130 or more characters
    token("api_token", _B + r"sl\.(?:u\.)?[A-Za-z0-9_-]{130,1000}", "sl."),
    # Salesforce: an OAuth refresh token (`5AEP861`), a connected app's consumer key (`3MVG9`)
    token("api_token", _B + r"(?i:5AEP861)[A-Za-z0-9._=]{80,1000}", "5aep861"),
    token("api_token", _B + r"3MVG9[A-Za-z0-9._+/=]{80,251}", "3mvg9"),
    # Firebase Cloud Messaging's legacy server key (`AAAA` and seven characters, `:APA91b`, 134 more:
    # SonarSource's `legacy-fcm-api-key` rule) and a device's registration token, an instance's id before
    # `:APA91b` and as long a tail: it addresses one device, personal data. An instance id is 22 characters
    # (128 bits in URL-safe base64; a server key's `AAAA...` 11), and GCM's legacy registration id is the
    # `APA91b` tail alone: a longer word before the colon is a label (`registrationToken:`) and stays, and so
    # does a label of an id's length (`deviceToken:`, `push_tokens:`), which random base64 is not
    token(
        "api_token",
        _B
        + r"(?:"
        + _random_id(22)
        + "|AAAA[A-Za-z0-9_-]{7}:|"
        + _random_id(11)
        + r")?APA91b[A-Za-z0-9_-]{100,300}",
        "apa91b",
    ),
    # a Tines webhook's URL is its secret (its path holds the two keys)
    token("webhook_url", r"[\w-]{1,60}\.tines\.com/webhook/[a-z0-9]{32}/[a-z0-9]{32}", "tines.com/webhook/"),
)

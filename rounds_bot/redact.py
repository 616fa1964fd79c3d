"""Make untrusted text safe to show a model or to publish in an issue.

Two steps, always in this order:

1. `sanitize` removes what a reader cannot see but a model would read: HTML comments, invisible
   and bidirectional-control characters, and hidden markdown (image alt text, link titles, `alt`
   and `title` attributes of inline HTML).
2. `redact` replaces secrets and personal data with `[REDACTED:<category>]`.

Secret detection uses the regex detectors of `detect-secrets` (Yelp; pinned in pyproject.toml):
AWS, GitHub, GitLab, Slack, Stripe, JWT, basic-auth URLs and the other vendor formats it knows.
Its entropy detectors are left out on purpose: telemetry is full of trace ids and hashes. What it
does not cover is added here as ordered rules (fine-grained GitHub tokens, bearer tokens, whole
private-key blocks, `password=`-style pairs, e-mail addresses, card numbers that pass the Luhn
check, and optionally IP addresses). `tests/test_redact_corpus.py` measures both against a
labelled corpus.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector

# --------------------------------------------------------------------------- sanitising

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_INVISIBLE = re.compile(
    "["
    "\u00ad"  # soft hyphen
    "\u034f"  # combining grapheme joiner
    "\u061c"  # arabic letter mark (bidi)
    "\u115f\u1160\u17b4\u17b5\u180e"
    "\u200b-\u200f"  # zero-width spaces and joiners, LRM, RLM
    "\u202a-\u202e"  # bidi embeddings and overrides
    "\u2060-\u206f"  # word joiner, invisible operators, bidi isolates
    "\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\U000e0000-\U000e007f"  # tag characters
    "\U000e0100-\U000e01ef"  # variation selectors supplement
    "]"
)
_MARKDOWN_IMAGE = re.compile(r"!\[[^\]]*\]\(")
_LINK_TITLE = re.compile(r"(\]\(\s*<?[^\s)>]*>?)\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\))\s*\)")
_REFERENCE_TITLE = re.compile(
    r"^(\s{0,3}\[[^\]]+\]:\s*\S+)\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\))\s*$", re.MULTILINE
)
_HTML_HIDDEN_ATTRIBUTE = re.compile(
    r"""(<[a-zA-Z][^>]*?)\s+(?:alt|title|aria-label|data-[\w-]+)\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+)"""
)


def sanitize(text: str) -> str:
    """Remove content a human reader would not see but a model would read."""
    text = _HTML_COMMENT.sub("", text)
    text = _INVISIBLE.sub("", text)
    text = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) != "Cc")
    text = _MARKDOWN_IMAGE.sub("![](", text)
    text = _LINK_TITLE.sub(r"\1)", text)
    text = _REFERENCE_TITLE.sub(r"\1", text)
    # Attributes are removed one per pass; repeat until no hidden attribute is left.
    previous = None
    while previous != text:
        previous, text = text, _HTML_HIDDEN_ATTRIBUTE.sub(r"\1", text)
    return text


# --------------------------------------------------------------------------- redacting

REDACTED = "[REDACTED:{category}]"

#: detect-secrets detectors, by class name, and the category each one's matches count under
_DETECT_SECRETS_CATEGORIES = {
    "GitHubTokenDetector": "github_token",
    "GitLabTokenDetector": "gitlab_token",
    "AWSKeyDetector": "aws_key",
    "SlackDetector": "slack_token",
    "JwtTokenDetector": "jwt",
    "BasicAuthDetector": "url_password",
    "StripeDetector": "api_token",
    "OpenAIDetector": "api_token",
    "PypiTokenDetector": "api_token",
    "NpmDetector": "api_token",
    "SendGridDetector": "api_token",
    "TwilioKeyDetector": "api_token",
    "DiscordBotTokenDetector": "api_token",
    "MailchimpDetector": "api_token",
    "ArtifactoryDetector": "api_token",
    "AzureStorageKeyDetector": "api_token",
    "TelegramBotTokenDetector": "api_token",
    "SquareOAuthDetector": "api_token",
    "CloudantDetector": "api_token",
    "IbmCloudIamDetector": "api_token",
    "IbmCosHmacDetector": "api_token",
    "SoftlayerDetector": "api_token",
}

# A detector may match only part of a token (detect-secrets' JWT pattern stops before the
# signature): a replacement grows over the token characters around its match.
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-.+/=]")

_SECRET_KEYS = (
    r"pass(?:word|wd|phrase)?|pwd|secret|client_secret|api[_-]?key|apikey|access[_-]?key"
    r"|secret[_-]?key|private[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token"
    r"|session[_-]?token|token|credentials?"
)


@dataclass(frozen=True)
class Rule:
    """One hand-written redaction rule: what it finds, the group to replace, and a check."""

    category: str
    pattern: re.Pattern[str]
    group: int = 0
    accept: Callable[[str], bool] | None = None


def _luhn_valid(candidate: str) -> bool:
    digits = [int(ch) for ch in candidate if ch.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for position, digit in enumerate(reversed(digits)):
        if position % 2 == 1:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def _is_ipv4(candidate: str) -> bool:
    return all(0 <= int(part) <= 255 for part in candidate.split("."))


_RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    Rule("github_token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,255}")),
    Rule("github_token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,255}")),
    Rule("slack_token", re.compile(r"\bxox[abposrce]-[A-Za-z0-9-]{10,}")),
    Rule(
        "aws_key",
        re.compile(
            r"(?i)\baws_?(?:secret_?access_?key|secret_?key)\b[\"']?\s*[:=]\s*[\"']?"
            r"([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        group=1,
    ),
    Rule("bearer_token", re.compile(r"(?i)\b(?:bearer|token)\s+([A-Za-z0-9_\-.~+/]{12,}=*)"), 1),
    Rule(
        "url_password",
        re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@"),
        group=1,
    ),
    Rule(
        "key_value_secret",
        re.compile(
            rf"(?i)(?<![A-Za-z0-9])(?:{_SECRET_KEYS})[\"']?\s*(?:=|:|=>)\s*"
            r"(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s,;&\"'})\]]{1,200})"
        ),
        group=1,
        accept=lambda value: (
            value.strip("\"'").lower()
            not in {"", "null", "none", "true", "false", "***", "[redacted]", "redacted"}
            and not value.strip("\"'").startswith("[REDACTED")
        ),
    ),
    Rule("email", re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")),
    Rule("card_number", re.compile(r"(?<![\d.-])(?:\d[ -]?){12,18}\d(?![\d.-])"), accept=_luhn_valid),
)

_IP_RULES: tuple[Rule, ...] = (
    Rule(
        "ip_address",
        re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])"),
        accept=_is_ipv4,
    ),
    Rule(
        "ip_address",
        re.compile(r"(?<![\w:])(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}(?![\w:])"),
    ),
)


@dataclass(frozen=True)
class Redaction:
    """Redacted text and how many replacements of each category were made."""

    text: str
    counts: Counter[str]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@cache
def _detect_secrets_detectors() -> tuple[tuple[str, RegexBasedDetector], ...]:
    import detect_secrets.plugins as plugins_package

    detectors: list[tuple[str, RegexBasedDetector]] = []
    for module_name in sorted(_detector_modules(plugins_package.__path__)):
        module = __import__(f"detect_secrets.plugins.{module_name}", fromlist=["*"])
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, RegexBasedDetector)
                and value.__name__ in _DETECT_SECRETS_CATEGORIES
                and value is not PrivateKeyDetector
            ):
                detectors.append((_DETECT_SECRETS_CATEGORIES[value.__name__], value()))
    unique = {type(detector).__name__: (category, detector) for category, detector in detectors}
    return tuple(unique[name] for name in sorted(unique))


def _detector_modules(paths: Iterable[str]) -> set[str]:
    import pkgutil

    return {info.name for info in pkgutil.iter_modules(list(paths)) if info.name != "base"}


def redact(text: str, *, redact_ips: bool = False) -> str:
    """`text` with secrets and personal data replaced by `[REDACTED:<category>]`."""
    return redact_with_report(text, redact_ips=redact_ips).text


def redact_with_report(text: str, *, redact_ips: bool = False) -> Redaction:
    counts: Counter[str] = Counter()
    for rule in _RULES[:1]:  # whole key blocks first: detectors would only see their header
        text = _apply_rule(rule, text, counts)
    text = _apply_detect_secrets(text, counts)
    for rule in _RULES[1:] + (_IP_RULES if redact_ips else ()):
        text = _apply_rule(rule, text, counts)
    return Redaction(text=text, counts=counts)


def clean(text: str, *, redact_ips: bool = False) -> str:
    """Sanitise, then redact: the one call for any untrusted text headed for a prompt or issue."""
    return redact(sanitize(text), redact_ips=redact_ips)


def redact_json(value: Any) -> Any:
    """A JSON value with every string in it (keys too) sanitised and redacted."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [redact_json(item) for item in value]
    if isinstance(value, dict):
        return {clean(str(key)): redact_json(item) for key, item in value.items()}
    return value


def _apply_detect_secrets(text: str, counts: Counter[str]) -> str:
    for category, detector in _detect_secrets_detectors():
        found = {value for value in detector.analyze_string(text) if value}
        for value in sorted(found, key=len, reverse=True):
            text = _replace_token(text, value, category, counts)
    return text


def _replace_token(text: str, value: str, category: str, counts: Counter[str]) -> str:
    pieces: list[str] = []
    cursor = 0
    replacement = REDACTED.format(category=category)
    while (start := text.find(value, cursor)) != -1:
        end = start + len(value)
        if value.startswith(("eyJ",)) or category in {"github_token", "slack_token", "gitlab_token"}:
            while end < len(text) and _TOKEN_CHARS.match(text[end]):
                end += 1
        pieces.append(text[cursor:start])
        pieces.append(replacement)
        counts[category] += 1
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _apply_rule(rule: Rule, text: str, counts: Counter[str]) -> str:
    replacement = REDACTED.format(category=rule.category)

    def substitute(match: re.Match[str]) -> str:
        value = match.group(rule.group)
        if value is None or value.startswith("[REDACTED") or "[REDACTED:" in value:
            return match.group(0)
        if rule.accept is not None and not rule.accept(value):
            return match.group(0)
        counts[rule.category] += 1
        kept = replacement
        if len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]:
            kept = value[0] + replacement + value[0]  # keep the quotes: the text stays valid JSON
        whole = match.group(0)
        start = match.start(rule.group) - match.start(0)
        end = match.end(rule.group) - match.start(0)
        return whole[:start] + kept + whole[end:]

    return rule.pattern.sub(substitute, text)

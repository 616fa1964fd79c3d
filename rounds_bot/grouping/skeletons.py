"""The skeleton of a log message: its words, with the values made parameters (`<*>`).

A normalised message is cut into whitespace tokens. A token that still holds a digit or a
placeholder is a parameter, the way Drain treats numeric tokens, and so is the value of a
`key=value` pair, whole token or inside one (`LOGIN(uid=0)`: the key and the rest of the token
stay, they are the statement's text), and an empty pair of brackets or quotes (`()`, `''`: a
value that happened to be empty). `key=` with nothing after it stays as it is: the field is
absent, which is often the very cause of an error (precision first: one more signature at worst,
never two problems in one). A run of parameters collapses into one, so variable-length lists of
numbers or addresses keep one shape. A message of
parameters only keeps its punctuation and is matched exactly (`exactly: lr:<*> cr:<*>`).

A word a service's templates use as a key (`user=<*>`) names a field: `mask_after_keys` makes the
word after it a parameter where it stands in prose (`session opened for user cyrus`).

A redaction placeholder (`[REDACTED:email]`, as `redact` writes it) is a value by construction. A
clause appended at the end of a message that carries nothing but such values, each after at most a
label word or key, is context the service added to the line, not its log statement: the skeleton
leaves it out (`split_context`), so `charge failed (user [REDACTED:email])` is the statement
`charge failed`. (Templates are matched among skeletons of one token count, as Drain's parse tree
first splits lines by their length: a clause appended now and then would always start a template,
and so an issue, of its own.) What counts as such a clause, one or more of them at the very end,
after a space:
- a parenthesised group of placeholders, each after at most a label or key: `(user [REDACTED:email])`,
  `([REDACTED:email])`, `(user=[REDACTED:email], token: [REDACTED:github_token])`;
- a `key=[REDACTED:kind]` pair (the `=` marks a field, as in `_KEY_VALUE`);
- a `key: [REDACTED:kind]` pair after a comma or semicolon (`..., user: [REDACTED:email]`): directly
  after prose a colon ends the statement's own words (`login failed: [REDACTED:jwt]`), so it stays.
Everything else stays (precision first): a placeholder inside the statement, a label of more than one
word, a clause that also holds text or another value (`(requested <int>)`, `(user bob)`), a clause
followed by more text, and a message that would keep no word without the clause. Skeletons read
before the rule (`skeleton_with_context`) still find the templates they made (see `engine`).

A statement that prints a count agrees its noun with it (`1 validation error for Order`, `2 validation
errors for Order`, as pydantic writes them; Python's `(1 sub-exception)`, `(2 sub-exceptions)`): the two
words after a count are read in the singular (`singular_after_counts`), so the count's value does not
split the statement. Skeletons read before that (`skeleton_with_plurals`) still find their templates.
"""

from __future__ import annotations

import re

from rounds_bot.grouping.mask_rules import RULES

WILDCARD = "<*>"
EXACT_MARK = "="  # first token of an exact skeleton (all-parameter messages)
_PLACEHOLDER_NAMES = sorted({rule.placeholder for rule in RULES if rule.placeholder})
_PLACEHOLDER = re.compile("<(?:" + "|".join(_PLACEHOLDER_NAMES) + ")>")
HAS_LETTER = re.compile(r"[^\W\d_]")
# Inside an all-parameter message the punctuation between values is what is left of the
# statement: `lr:<*> cr:<*>` and `r24=<*> r25=<*>` are different registers dumps.
_CHUNK_WITH_VALUE = re.compile(r"[^.:=,;()\[\]{}<>\"'/|\s]*[\d\x00][^.:=,;()\[\]{}<>\"'/|\s]*")
_MAX_TOKENS = 200
# Dot leaders in aligned dumps (`icache prefetch depth.......0`) separate a label from its value.
_DOT_LEADER = re.compile(r"\.{3,}")


# A whole whitespace-separated token that holds a digit or a placeholder.
_PARAMETER_TOKEN = re.compile(r"(?<!\S)\S*?(?:\d|" + _PLACEHOLDER.pattern + r")\S*")
# `key=value`: the key names a field of the statement, the value is data (`user=root`); `key=`
# alone (an absent value) is left as it is.
_KEY_VALUE = re.compile(r"(?<!\S)([A-Za-z_][\w.\-]{0,63}=)[^\s=]+(?!\S)")
# A `key=value` pair inside a token, after an opening bracket or a separator: `LOGIN(uid=0)`,
# `[pid=12,`: the value is data, the rest of the token is the statement's own text.
_INNER_KEY_VALUE = re.compile(r"(?<=[(\[{,;])([A-Za-z_][\w.\-]{0,63}=)[^\s=,;()\[\]{}]+")
# An empty pair of brackets or quotes where a value was printed: `connection from 1.2.3.4 ()`.
_EMPTY_VALUE = re.compile(r"(?<!\S)(?:\(\)|\[\]|\{\}|<>|''|\"\")(?=[,;:.]?(?!\S))")
_KEY_TOKEN = re.compile(r"^([A-Za-z_][\w.\-]{0,63})=" + re.escape(WILDCARD) + "$")

#: a redaction placeholder as `redact.rule.REDACTED` writes it
REDACTED_MARK = "[REDACTED:"
_REDACTED_VALUE = r"\[REDACTED:[A-Za-z0-9_.\-]+\]"
_LABEL = r"[A-Za-z_][\w.\-]{0,63}"
# Inside brackets: a placeholder after at most one label (`user `, `user=`, `user: `), items apart
# by a comma, a semicolon or a space. Each item and clause is an atomic group: they are
# self-delimiting, so nothing is lost by never backtracking into one, and a long run of them that
# does not end the message is given up in linear time.
_ITEM = rf"(?>(?:{_LABEL}(?:\s*[=:]\s*|\s+))?{_REDACTED_VALUE})"
_BRACKETED = rf"\(\s*{_ITEM}(?>(?:\s*[,;]\s*|\s+){_ITEM})*\s*\)"
_CLAUSE = (
    rf"(?>[,;]?\s+(?:{_BRACKETED}|{_LABEL}={_REDACTED_VALUE})"  # `(user [..])`, `token=[..]`
    rf"|[,;]\s*{_LABEL}:\s*{_REDACTED_VALUE})"  # `, user: [..]`
)
# One or more such clauses at the very end of the message. A clause never starts inside a run of
# white space, only at its first character: a search would otherwise try every character of a long
# run that does not end the message, each time running to the run's end (quadratic in the run); a
# match starting inside a run also starts at the run's first character, which the search tries first.
_TRAILING_CONTEXT = re.compile(rf"(?!(?<=\s)\s)(?:{_CLAUSE})+$")


# A count (a token that ends with one: `<int>`, `(<int>`, `<int>,<int>` for `1,024`) and the one or two
# words after it.
_COUNTED = re.compile(r"(?<!\S)(\S{0,64}?<int>) ([A-Za-z][A-Za-z-]{2,63})(?: ([A-Za-z][A-Za-z-]{2,63}))?\b")
# Plural endings English forms with `s` (`errors`, `entries`); not `ss`, `us`, `is` (`class`, `status`,
# `analysis`), which are singular words, nor the verbs and pronouns that end so.
_PLURAL = re.compile(r"(?<=[A-Za-z]{2})(?:(?<=[^sui])s|ies)$")
_NOT_PLURAL = frozenset({"has", "was", "does", "goes", "this", "its", "his", "yes"})


def skeleton(normalized: str) -> tuple[str, ...]:
    """The template shape of a normalised message (see the module docstring): its statement's,
    without a trailing clause that only carries redacted values (`split_context`), its nouns after a
    count in the singular (`singular_after_counts`)."""
    if "<int> " in normalized:
        normalized = singular_after_counts(normalized)
    return skeleton_with_plurals(normalized)


def singular_after_counts(normalized: str) -> str:
    """The normalised message with the two words after each count in the singular: a statement agrees
    its noun with the count it prints, so `<int> errors` and `<int> error` are one statement."""
    return _COUNTED.sub(_singular_words, normalized)


def _singular_words(match: re.Match[str]) -> str:
    """The count's noun in the singular: its first word (`<int> errors`), or, when that is no plural,
    the second (`<int> validation errors`); a word after the noun (`<int> items has`) is left alone."""
    count, first, second = match.groups()
    singular = _singular(first)
    if singular != first or second is None:
        return f"{count} {singular}" + (f" {second}" if second is not None else "")
    return f"{count} {first} {_singular(second)}"


def _singular(word: str) -> str:
    found = _PLURAL.search(word)
    if found is None or word.lower() in _NOT_PLURAL:
        return word
    return word[: found.start()] + ("y" if found[0] == "ies" else "")


def skeleton_with_plurals(normalized: str) -> tuple[str, ...]:
    """The template shape of a normalised message with its nouns after a count as printed: how
    `rounds-fp:4` and earlier versions read it (their templates are found with it)."""
    if REDACTED_MARK in normalized:
        statement, context = split_context(normalized)
        if context:
            return skeleton_with_context(statement)
    return skeleton_with_context(normalized)


def split_context(normalized: str) -> tuple[str, str]:
    """The message's statement and the trailing clauses of redacted values it leaves out (see the
    module docstring), or the whole message and "" when there is no such clause or the statement
    would keep no word of its own without it."""
    if REDACTED_MARK not in normalized:
        return normalized, ""
    found = _TRAILING_CONTEXT.search(normalized.rstrip())
    if found is None:
        return normalized, ""
    statement = normalized[: found.start()]
    tokens = skeleton_with_context(statement)
    if not tokens or is_exact_skeleton(tokens) or not has_constant_word(tokens):
        return normalized, ""
    return statement, found[0].lstrip(",; ")


def skeleton_with_context(normalized: str) -> tuple[str, ...]:
    """The template shape of a normalised message with every clause kept: how `rounds-fp:3` and
    earlier versions read it (their templates are found with it)."""
    if "..." in normalized:
        normalized = _DOT_LEADER.sub(" ... ", normalized)
    marked = normalized
    if "=" in normalized:
        marked = _INNER_KEY_VALUE.sub(r"\1" + WILDCARD, _KEY_VALUE.sub(r"\1" + WILDCARD, marked))
    if (
        "()" in marked
        or "[]" in marked
        or "''" in marked
        or '""' in marked
        or "{}" in marked
        or "<>" in marked
    ):
        marked = _EMPTY_VALUE.sub(WILDCARD, marked)
    out = _collapsed(_PARAMETER_TOKEN.sub(WILDCARD, marked).split()[:_MAX_TOKENS])
    if not any(token != WILDCARD and HAS_LETTER.search(token) for token in out):
        return (EXACT_MARK, *(_value_shape(token) for token in normalized.split()[:_MAX_TOKENS]))
    return out


def _collapsed(tokens: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The tokens with every run of parameters made one parameter."""
    out: list[str] = []
    previous = None
    for token in tokens:
        if token != WILDCARD or previous != WILDCARD:
            out.append(token)
        previous = token
    return tuple(out)


def keys_of(tokens: tuple[str, ...]) -> set[str]:
    """The field names a template uses as keys (`user=<*>` -> `user`), lower-cased."""
    found = set()
    for token in tokens:
        if token.endswith("=" + WILDCARD):
            match = _KEY_TOKEN.match(token)
            if match:
                found.add(match[1].lower())
    return found


def mask_after_keys(tokens: tuple[str, ...], keys: set[str] | frozenset[str]) -> tuple[str, ...]:
    """The skeleton with the word after each known key made a parameter (`user cyrus`)."""
    out = list(tokens)
    changed = False
    for index in range(len(out) - 1):
        if out[index].lower() in keys and out[index + 1] != WILDCARD and HAS_LETTER.search(out[index + 1]):
            out[index + 1] = WILDCARD
            changed = True
    return _collapsed(out) if changed else tokens


def _value_shape(token: str) -> str:
    return _CHUNK_WITH_VALUE.sub(WILDCARD, _PLACEHOLDER.sub("\x00", token))


def is_exact_skeleton(tokens: tuple[str, ...]) -> bool:
    return bool(tokens) and tokens[0] == EXACT_MARK


def render(tokens: tuple[str, ...] | list[str]) -> str:
    """A template as text; an exact skeleton (matched only as it is) says so."""
    items = list(tokens)
    if items and items[0] == EXACT_MARK:
        return "exactly: " + " ".join(items[1:])
    return " ".join(items)


def has_constant_word(tokens: tuple[str, ...]) -> bool:
    """True when a skeleton keeps a word of the statement (a token with a letter, not `<*>`)."""
    return any(t != WILDCARD and HAS_LETTER.search(t) for t in tokens)

"""Secrets in the terms runtimes print: Go's `fmt` prints a `map[string][]string` (an `http.Header`, a
`url.Values`, gRPC's `metadata.MD`) as `map[X-Api-Key:[...] Accept:[*/*]]` (fmt's doc: a map as
`map[key:value ...]`, sorted by key, a slice as `[elem ...]`); Erlang prints a proplist's tuple as
`{password,"..."}` or `{api_key,<<"...">>}` (`io:format("~p")`: no space after the comma), a map or list
decoded from JSON with binary keys as `#{<<"password">> => <<"...">>}` or `[{<<"x-api-key">>,<<"...">>}]`;
Elixir's `inspect` a tuple as `{:password, "..."}`; a header map whose values are lists, as JSON
(`{"X-Api-Key": ["..."]}`) or Go's `%#v` (`http.Header{"X-Api-Key":[]string{"..."}}`) give it. Their other
maps (`#{password => <<"...">>}`, `%{password: "..."}`) are pairs (`pairs.py`)."""

from __future__ import annotations

import re

from rounds_bot.redact.keys import secret_category
from rounds_bot.redact.pair_values import _accept_named, _placeholder
from rounds_bot.redact.rule import Rule, rule

#: a Go map's entry of a slice: its key right after `map[` or after the entry before it (`] `)
_SLICE_ENTRY = r"""(?:(?<=map\[)|(?<=\] ))(?P<key>[A-Za-z_][\w.-]{0,60}+):\[(?P<value>[^\[\]\n]{1,500})\]"""
#: the map that holds it, on its line before it
_MAP_BEFORE = re.compile(r"map\[")


def _accept_slice(match: re.Match[str]) -> bool:
    """An entry of a printed Go map under a secret's name (not a log line's `token:[missing]` after a
    `] `: the line holds a `map[` before it), whose value stands for one (not `-`, `***`, `<nil>`)."""
    line_start = match.string.rfind("\n", 0, match.start()) + 1
    if not _MAP_BEFORE.search(match.string, line_start, match.start()):
        return False
    value = match["value"].strip()
    named = secret_category(match["key"]) is not None
    return named and value not in {"-", "<nil>"} and not _placeholder(value)


#: the atom is the name; a string or a binary (`<<"...">>`: the string inside is the value) ends the tuple,
#: each as `~p` prints it, with no space (a C table's `{ password, "Password:" }` is code)
_TUPLE = r"""\{(?P<key>[a-z][\w@]{0,60}+),(?:<<)?(?P<value>"(?:[^"\\\s]|\\.){1,500}")(?:>>)?\}"""

#: a binary key and its binary value: a map's (`=>`) or a proplist's (`,`)
_BINARY_PAIR = (
    r"""<<"(?P<key>[A-Za-z_][\w.-]{0,60}+)">>[ \t]{0,3}(?:=>|,)[ \t]{0,3}"""
    r"""<<(?P<value>"(?:[^"\\\n]|\\.){1,500}")>>"""
)
#: Elixir's tuple of an atom and a string
_ELIXIR_TUPLE = r"""\{:(?P<key>[a-z_]\w{0,60}+),[ \t]?(?P<value>"(?:[^"\\\n]|\\.){1,500}")\}"""
#: a quoted name whose value is a list of one string or more: JSON's `["..."]`, Go's `[]string{"..."}`
_LISTED_VALUE = (
    r"""(?<![\w-])"(?P<key>[A-Za-z_][\w.-]{0,60}+)"[ \t]{0,3}:[ \t]{0,3}(?:\[\]string\{|\[)[ \t]{0,3}"""
    r"""(?P<value>"[^"\s\\]{1,500}")"""
)


def _accept_listed_value(match: re.Match[str]) -> bool:
    """A list's string under a secret's name that looks generated, not a validation error's word
    (`{"token":["Invalid."]}`: a serializer's errors are lists of sentences under the field's name)."""
    value = match["value"].strip('"')
    generated = any(ch.isdigit() for ch in value) and any(ch.isalpha() for ch in value)
    return generated and secret_category(match["key"]) is not None and not _placeholder(value)


PRINTED_TERMS: tuple[Rule, ...] = (
    rule("key_value_secret", _BINARY_PAIR, "<<", group=2, accept=_accept_named),
    rule("key_value_secret", _ELIXIR_TUPLE, "{:", group=2, accept=_accept_named),
    rule("key_value_secret", _LISTED_VALUE, "[", group=2, accept=_accept_listed_value),
    rule("key_value_secret", _SLICE_ENTRY, ":[", group=2, accept=_accept_slice),
    rule("key_value_secret", _TUPLE, ",", group=2, accept=_accept_named),
)

"""The keys a known signature is looked up by (see `known`), built the same way wherever used."""

from __future__ import annotations

from rounds_bot.grouping.skeletons import WILDCARD

SEPARATOR = "\x1f"


def skeleton_key(bucket: str, tokens: tuple[str, ...]) -> str:
    return f"k:{bucket}{SEPARATOR}{SEPARATOR.join(tokens)}"


def shelf_key(bucket: str, length: int, first: str) -> str:
    return f"f:{bucket}{SEPARATOR}{length}{SEPARATOR}{first}"


def length_key(bucket: str, length: int) -> str:
    return f"n:{bucket}{SEPARATOR}{length}"


def service_key(service: str) -> str:
    return f"s:{service}"


def template_keys(bucket: str, tokens: tuple[str, ...]) -> list[str]:
    """The keys of every template that could match, widen towards or overlap a skeleton."""
    keys = [skeleton_key(bucket, tokens)]
    if tokens and tokens[0] == WILDCARD:
        keys.append(length_key(bucket, len(tokens)))
    elif tokens:
        keys += [shelf_key(bucket, len(tokens), tokens[0]), shelf_key(bucket, len(tokens), WILDCARD)]
    return keys

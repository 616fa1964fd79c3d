"""Wallet seed phrases: 12 to 24 words of BIP-39's English word list whose last word carries the checksum.

    seed_phrases(text, counts) -> text    every such phrase replaced by `[REDACTED:seed_phrase]`

The word list and the checksum are BIP-39's, as the `mnemonic` package (the BIP's reference implementation)
ships them. A run of lowercase words is looked at only when it is at least 12 words long, and a phrase only
counts when all its words are on the list and its checksum holds (1 in 16 for 12 random list words), so
prose is not taken for a phrase.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from functools import cache

from rounds_bot.redact.rule import REDACTED

_LENGTHS = (24, 21, 18, 15, 12)
#: a run of at least 12 lowercase words of BIP-39's lengths (3 to 8 letters), one space or tab apart
_RUN = re.compile(r"(?<![\w-])[a-z]{3,8}+(?:[ \t]{1,3}[a-z]{3,8}+){11,}(?![\w-])")
_WORD = re.compile(r"[a-z]+")


@cache
def _bip39() -> dict[str, int]:
    """BIP-39's English words, each with its index (its 11 bits in a phrase)."""
    from mnemonic import Mnemonic  # at the first run of list-shaped words, which most rounds never see

    return {word: index for index, word in enumerate(Mnemonic("english").wordlist)}


def checksum_holds(indexes: list[int]) -> bool:
    """BIP-39's checksum of a phrase's word indexes: its 11-bit indexes end with the first bits (one per 32
    of entropy) of the SHA-256 of the entropy before them. `Mnemonic.check` finds each word's index with a
    scan of the list: a text of nothing but list words (`grant grant ...`) took seconds a line."""
    bits = 0
    for index in indexes:
        bits = (bits << 11) | index
    checksum_bits = len(indexes) * 11 // 33
    entropy = bits >> checksum_bits
    digest = hashlib.sha256(entropy.to_bytes(len(indexes) * 11 // 33 * 4, "big")).digest()
    return int.from_bytes(digest, "big") >> (256 - checksum_bits) == bits & ((1 << checksum_bits) - 1)


#: cheap first looks for 11 words after a space: with single spaces (the BIP's own), or with tabs and runs
_SPACED = re.compile(r" [a-z]{3,8}+(?: [a-z]{3,8}+){10}")
_LOOSE = re.compile(r"[ \t][a-z]{3,8}+(?:[ \t]{1,3}[a-z]{3,8}+){10}")


#: What a scan of the text looks for before `seed_phrases` is worth a look (a Hyperscan pattern and its
#: least length, `scan.Prefilter`): `_LOOSE` read greedily, which finds whatever `_LOOSE` or `_SPACED` finds
SCAN_GATES = {"eleven lowercase words": ("[ \t][a-z]{3,8}(?:[ \t]{1,3}[a-z]{3,8}){10}", 0)}


def seed_phrases(text: str, counts: Counter[str]) -> str:
    if text.count(" ") < 11:
        return text
    first_look = _LOOSE if "\t" in text or "  " in text else _SPACED
    if not first_look.search(text) or not _RUN.search(text):
        return text
    return _RUN.sub(lambda run: _hidden(run.group(0), counts), text)


def _hidden(run: str, counts: Counter[str]) -> str:
    words = _bip39()
    spans = [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(run)]
    pieces: list[str] = []
    cursor, index = 0, 0
    while index <= len(spans) - 12:
        for length in _LENGTHS:
            window = spans[index : index + length]
            listed = len(window) == length and all(w in words for _, _, w in window)
            if listed and checksum_holds([words[w] for _, _, w in window]):
                pieces += [run[cursor : window[0][0]], REDACTED.format(category="seed_phrase")]
                counts["seed_phrase"] += 1
                cursor = window[-1][1]
                index += length
                break
        else:
            index += 1
    if not pieces:
        return run
    pieces.append(run[cursor:])
    return "".join(pieces)

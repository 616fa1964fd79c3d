"""A seed phrase's BIP-39 checksum is worked out from each word's index, looked up once: the same verdict as
the reference implementation's `Mnemonic.check` (which scans the word list for every word, so a text of
nothing but list words, `grant grant ...`, took seconds a line), on phrases of every length."""

from __future__ import annotations

import random

import pytest
from mnemonic import Mnemonic

from rounds_bot.redact import redact
from rounds_bot.redact.phrases import _bip39, checksum_holds

ENGLISH = Mnemonic("english")


@pytest.mark.parametrize("length", [12, 15, 18, 21, 24])
def test_the_checksum_agrees_with_the_reference_implementation(length: int) -> None:
    chooser, indexes = random.Random(length), _bip39()
    for _ in range(300):
        words = [chooser.choice(ENGLISH.wordlist) for _ in range(length)]
        assert checksum_holds([indexes[word] for word in words]) == ENGLISH.check(" ".join(words))
    phrase = ENGLISH.generate(strength=length * 11 * 32 // 33).split()
    assert checksum_holds([indexes[word] for word in phrase])


def test_a_phrase_among_many_list_words_is_still_found() -> None:
    phrase = ENGLISH.generate(strength=128)
    text = "grant " * 2000 + "; seed: " + phrase + " ;" + " grant" * 2000
    assert phrase not in redact(text) and "[REDACTED:seed_phrase]" in redact(text)

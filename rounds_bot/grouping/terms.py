"""What tier 3 compares: an error as a bag of terms, hashed into scikit-learn's feature columns.

Terms are hashed into the columns scikit-learn's `HashingVectorizer(n_features=2**20,
alternate_sign=False)` puts them in: MurmurHash3 (x86, 32-bit, seed 0, signed) of the UTF-8 term,
its absolute value modulo the number of columns, one term at a time (a test checks the two agree
on every term). So there is no vocabulary to refit, and the hash comes from `mmh3`, which loads
in a millisecond where scikit-learn takes seconds.
"""

from __future__ import annotations

import itertools
import re

import mmh3

from rounds_bot.grouping.frames import frame_key
from rounds_bot.grouping.memo import shared_dict
from rounds_bot.grouping.stacktrace import ParsedTrace

N_FEATURES = 2**20
#: frames per exception that enter a document (crash site first)
DOCUMENT_FRAMES = 3
_MAX_MEMO_TERMS = 200_000
_WORD = re.compile(r"[A-Za-z_][A-Za-z_]+")
_PLACEHOLDER = re.compile(r"<[a-z_0-9]+>")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


#: the column of each term hashed so far (cleared whole when full, and with the engines' shared memos)
_FEATURES: dict[str, int] = shared_dict({})


def feature_of(term: str) -> int:
    """The column scikit-learn's hashing vectorizer puts a term in (see the module docstring)."""
    feature = _FEATURES.get(term)
    if feature is None:
        h = mmh3.hash(term.encode("utf-8", "surrogatepass"), 0, signed=True)
        feature = (2147483647 - (N_FEATURES - 1)) % N_FEATURES if h == -2147483648 else abs(h) % N_FEATURES
        if len(_FEATURES) >= _MAX_MEMO_TERMS:
            _FEATURES.clear()
        _FEATURES[term] = feature
    return feature


def document_terms(
    error_type: str | None,
    normalized_message: str,
    trace: ParsedTrace | None,
    in_app: list[list[bool]] | None = None,
) -> list[str]:
    """The terms of an error: its type, the words of its message (with word pairs) and, for a
    stack trace, the first frames of each exception, whole and split into words."""
    terms: list[str] = []
    if error_type:
        terms.append("type:" + error_type.lower())
    words = [w.lower() for w in _WORD.findall(_PLACEHOLDER.sub(" ", normalized_message))][:64]
    terms.extend("w:" + w for w in words)
    terms.extend(f"p:{a}_{b}" for a, b in itertools.pairwise(words))
    if trace is not None:
        for index, exception in enumerate(trace.exceptions):
            if trace.runtime == "go" and exception.relation == "context":
                continue
            terms.append("type:" + exception.type.rsplit(".", 1)[-1].lower())
            frames = list(exception.frames)
            flags = in_app[index] if in_app and index < len(in_app) else [True] * len(frames)
            chosen = [f for f, app in zip(frames, flags, strict=False) if app] or frames
            for frame in chosen[:DOCUMENT_FRAMES]:
                key = frame_key(frame)
                terms.append(f"f:{key.module}.{key.function}")
                terms.append("m:" + key.module)
                unit = re.split(r"[./\\:]", key.module)[-1]
                terms.extend("s:" + part.lower() for part in _CAMEL.findall(unit + " " + key.function))
    return terms


def counts(terms: list[str]) -> dict[int, float]:
    """Term counts by hashed feature: what `HASHING_VECTORIZER` would produce."""
    found: dict[int, float] = {}
    for term in terms:
        feature = feature_of(term)
        found[feature] = found.get(feature, 0.0) + 1.0
    return found

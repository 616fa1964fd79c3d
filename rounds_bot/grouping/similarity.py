"""Tier 3: TF-IDF similarity of a new error to the known signatures of its service.

Terms are hashed into the columns scikit-learn's `HashingVectorizer` uses (its murmurhash3, one
term at a time; a test checks the two agree), so there is no vocabulary to refit. Weights are
scikit-learn's TF-IDF (sublinear tf, smooth idf, L2 norm; a test checks against
`TfidfTransformer`). Each service keeps its own document frequencies, updated as signatures are added, and
its signatures' vectors in sparse blocks: a new signature lands in a small pending list, pending
lists become a block, and blocks of similar size are merged (like a binary counter), so adding
one signature costs little and a lookup is a handful of sparse products.

A signature's vector is weighted with the document frequencies known when it was added and then
kept as it is (it is part of the signature's saved state): a re-loaded index answers exactly as
the one that saved it. A query is weighted with the current frequencies. A score is summed in a
fixed order whatever the layout of the blocks, so re-loading never changes a decision.
"""

from __future__ import annotations

import itertools
import math
import re
from array import array
from dataclasses import dataclass, field

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.utils import murmurhash3_32

from rounds_bot.grouping.frames import frame_key
from rounds_bot.grouping.stacktrace import ParsedTrace
from rounds_bot.models import Frozen

N_FEATURES = 2**20
PENDING_LIMIT = 512
#: frames per exception that enter a document (crash site first)
DOCUMENT_FRAMES = 3
#: neighbours returned at most (the best; ties broken by age)
_MAX_NEIGHBOURS = 16
_MAX_MEMO_TERMS = 200_000
_WORD = re.compile(r"[A-Za-z_][A-Za-z_]+")
_PLACEHOLDER = re.compile(r"<[a-z_0-9]+>")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


def _identity(terms: list[str]) -> list[str]:
    return terms


#: the vectorizer whose hashing `feature_of` reproduces term by term (tests check they agree)
HASHING_VECTORIZER = HashingVectorizer(
    n_features=N_FEATURES, analyzer=_identity, alternate_sign=False, norm=None, dtype=np.float64
)
_FEATURES: dict[str, int] = {}


def feature_of(term: str) -> int:
    """The column `HASHING_VECTORIZER` puts a term in (murmurhash3, as scikit-learn hashes),
    without the cost of a vectorizer call per document."""
    feature = _FEATURES.get(term)
    if feature is None:
        h = murmurhash3_32(term.encode("utf-8", "surrogatepass"), seed=0, positive=False)
        feature = (2147483647 - (N_FEATURES - 1)) % N_FEATURES if h == -2147483648 else abs(h) % N_FEATURES
        if len(_FEATURES) >= _MAX_MEMO_TERMS:
            _FEATURES.clear()
        _FEATURES[term] = feature
    return feature


class SimilarityVector(Frozen):
    """A signature's frozen TF-IDF vector: hashed feature ids and L2-normalised weights."""

    features: list[int]
    weights: list[float]
    with_frames: bool = False


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


@dataclass
class _Block:
    """Signatures' vectors, feature-major (compressed rows): row i holds feature `features[i]`;
    its entries are columns `columns[indptr[i]:indptr[i+1]]` with weights `data[...]`."""

    features: np.ndarray
    indptr: np.ndarray
    columns: np.ndarray
    data: np.ndarray
    doc_indices: np.ndarray  # column -> document index in the service

    @property
    def size(self) -> int:
        return len(self.doc_indices)

    def scores(self, features: np.ndarray, weights: np.ndarray) -> np.ndarray | None:
        positions = np.searchsorted(self.features, features)
        positions[positions >= len(self.features)] = 0
        present = np.flatnonzero(self.features[positions] == features)
        if len(present) == 0:
            return None
        rows = positions[present]
        starts, lengths = self.indptr[rows], self.indptr[rows + 1] - self.indptr[rows]
        # Every entry of the selected rows, in row order, gathered without a Python loop.
        entries = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        values = self.data[entries] * np.repeat(weights[present], lengths)
        return np.bincount(self.columns[entries], values, minlength=self.size)


def _block_from(doc_indices: list[int], vectors: list[tuple[array[int], array[float]]]) -> _Block:
    features = [np.frombuffer(vectors[i][0], dtype=np.int64) for i in doc_indices]
    weights = [np.frombuffer(vectors[i][1], dtype=np.float64) for i in doc_indices]
    lengths = np.fromiter((len(f) for f in features), dtype=np.int64, count=len(features))
    return _sorted_block(
        np.concatenate(features),
        np.repeat(np.arange(len(doc_indices), dtype=np.int64), lengths),
        np.concatenate(weights),
        np.asarray(doc_indices, dtype=np.int64),
    )


def _merged(before: _Block, last: _Block) -> _Block:
    return _sorted_block(
        np.concatenate([np.repeat(b.features, np.diff(b.indptr)) for b in (before, last)]),
        np.concatenate([before.columns, last.columns + before.size]),
        np.concatenate([before.data, last.data]),
        np.concatenate([before.doc_indices, last.doc_indices]),
    )


def _sorted_block(
    features: np.ndarray, columns: np.ndarray, data: np.ndarray, doc_indices: np.ndarray
) -> _Block:
    order = np.lexsort((columns, features))
    features, columns, data = features[order], columns[order], data[order]
    unique, starts = np.unique(features, return_index=True)
    indptr = np.append(starts, len(features)).astype(np.int64)
    return _Block(unique, indptr, columns, data, doc_indices)


@dataclass
class _ServiceIndex:
    signature_ids: list[str] = field(default_factory=list)
    document_of: dict[str, int] = field(default_factory=dict)
    seqs: list[int] = field(default_factory=list)
    #: each document's sorted features and weights, as compact arrays (no object per entry)
    vectors: list[tuple[array[int], array[float]]] = field(default_factory=list)
    with_frames: list[bool] = field(default_factory=list)
    document_frequency: dict[int, int] = field(default_factory=dict)
    blocks: list[_Block] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)
    #: feature -> (document indices, weights) for the documents not yet in a block; arrays in
    #: a tuple hold no Python objects, so the garbage collector can leave them alone
    pending_postings: dict[int, tuple[array[int], array[float]]] = field(default_factory=dict)

    def add(
        self, signature_id: str, seq: int, features: list[int], weights: list[float], with_frames: bool
    ) -> None:
        index = len(self.signature_ids)
        self.signature_ids.append(signature_id)
        self.document_of[signature_id] = index
        self.seqs.append(seq)
        self.vectors.append((array("q", features), array("d", weights)))
        self.with_frames.append(with_frames)
        self.pending.append(index)
        frequency = self.document_frequency
        postings = self.pending_postings
        for feature, weight in zip(features, weights, strict=True):
            frequency[feature] = frequency.get(feature, 0) + 1
            entry = postings.get(feature)
            if entry is None:
                postings[feature] = (array("q", (index,)), array("d", (weight,)))
            else:
                entry[0].append(index)
                entry[1].append(weight)
        if len(self.pending) >= PENDING_LIMIT:
            self._compact()

    def _compact(self) -> None:
        self.blocks.append(_block_from(self.pending, self.vectors))
        self.pending = []
        self.pending_postings = {}
        while len(self.blocks) >= 2 and self.blocks[-1].size * 2 > self.blocks[-2].size:
            last, before = self.blocks.pop(), self.blocks.pop()
            self.blocks.append(_merged(before, last))

    def weigh(self, counts: dict[int, float], *, adding: bool) -> tuple[list[int], list[float]]:
        """Sublinear tf times smooth idf (as scikit-learn's TfidfTransformer), L2-normalised;
        features in ascending order."""
        extra = 1 if adding else 0
        documents = 1.0 + len(self.signature_ids) + extra
        frequency = self.document_frequency
        features = sorted(counts)
        weights = [
            (1.0 + math.log(counts[f])) * (math.log(documents / (1.0 + frequency.get(f, 0) + extra)) + 1.0)
            for f in features
        ]
        norm = math.sqrt(math.fsum(w * w for w in weights))
        if norm > 0:
            weights = [w / norm for w in weights]
        return features, weights

    def neighbours(
        self, features: list[int], weights: list[float], minimum: float
    ) -> list[tuple[int, float]]:
        """(document, score) for every document whose dot product with the query reaches
        `minimum`.

        Each document's score is summed in one place (its block, or the pending postings) in
        ascending feature order, so it comes out bit for bit the same whatever the layout of
        the blocks: a re-loaded index scores exactly as the original.
        """
        found: list[tuple[int, float]] = []
        if self.blocks:
            query_features = np.array(features, dtype=np.int64)
            query_weights = np.array(weights, dtype=np.float64)
            for block in self.blocks:
                partial = block.scores(query_features, query_weights)
                if partial is None:
                    continue
                for column in np.flatnonzero(partial >= minimum).tolist():
                    found.append((int(block.doc_indices[column]), float(partial[column])))
        if self.pending_postings:
            sums: dict[int, float] = {}
            postings = self.pending_postings
            for feature, weight in zip(features, weights, strict=True):
                entry = postings.get(feature)
                if entry is None:
                    continue
                for index, doc_weight in zip(entry[0], entry[1], strict=True):
                    sums[index] = sums.get(index, 0.0) + weight * doc_weight
            found.extend((index, score) for index, score in sums.items() if score >= minimum)
        return found


@dataclass(frozen=True)
class Neighbour:
    signature_id: str
    score: float
    with_frames: bool


class SimilarityIndex:
    """TF-IDF vectors of known signatures, one index per service."""

    def __init__(self) -> None:
        self._services: dict[str, _ServiceIndex] = {}

    def __len__(self) -> int:
        return sum(len(s.signature_ids) for s in self._services.values())

    @staticmethod
    def counts(terms: list[str]) -> dict[int, float]:
        """Term counts by hashed feature: what `HASHING_VECTORIZER` would produce."""
        counts: dict[int, float] = {}
        for term in terms:
            feature = feature_of(term)
            counts[feature] = counts.get(feature, 0.0) + 1.0
        return counts

    def nearest(self, service: str, counts: dict[int, float], minimum: float) -> list[Neighbour]:
        """Known signatures whose cosine to the document reaches `minimum`, best first (ties:
        oldest first). The document is weighted with the service's current frequencies."""
        index = self._services.get(service)
        if index is None or not counts:
            return []
        features, weights = index.weigh(counts, adding=False)
        ranked = sorted(
            (-score, index.seqs[doc], doc) for doc, score in index.neighbours(features, weights, minimum)
        )
        return [
            Neighbour(index.signature_ids[doc], round(-negative, 6), index.with_frames[doc])
            for negative, _, doc in ranked[:_MAX_NEIGHBOURS]
        ]

    def add_new(
        self, service: str, signature_id: str, seq: int, counts: dict[int, float], *, with_frames: bool
    ) -> None:
        """Add a new signature's document, weighted with the frequencies known now (itself
        included); `saved_vector` gives it back to be saved with the signature."""
        index = self._services.setdefault(service, _ServiceIndex())
        features, weights = index.weigh(counts, adding=True)
        index.add(signature_id, seq, features, weights, with_frames)

    def saved_vector(self, service: str, signature_id: str) -> SimilarityVector | None:
        index = self._services.get(service)
        document = index.document_of.get(signature_id) if index is not None else None
        if index is None or document is None:
            return None
        features, weights = index.vectors[document]
        return SimilarityVector(
            features=features.tolist(), weights=weights.tolist(), with_frames=index.with_frames[document]
        )

    def add_saved(self, service: str, signature_id: str, seq: int, vector: SimilarityVector) -> None:
        index = self._services.setdefault(service, _ServiceIndex())
        index.add(signature_id, seq, list(vector.features), list(vector.weights), vector.with_frames)

"""Tier 3: TF-IDF similarity of a new error to the known signatures of its service.

Terms are hashed with scikit-learn's `HashingVectorizer`, so the vocabulary never has to be
refitted. Each service keeps its own document frequencies, updated as signatures are added, and
its signatures' vectors in sparse blocks: a new signature lands in a small pending list, pending
lists become a block, and blocks of similar size are merged (like a binary counter), so adding
one signature costs little and a lookup is a handful of sparse products.

A signature's vector is weighted with the document frequencies known when it was added and then
kept as it is (it is part of the signature's saved state): a re-loaded index answers exactly as
the one that saved it. A query is weighted with the current frequencies. Scores of the best
candidates are recomputed with `math.fsum` from the stored vectors, so they do not depend on how
the blocks happen to be laid out.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.utils import murmurhash3_32

from rounds_bot.grouping.frames import frame_key
from rounds_bot.grouping.stacktrace import ParsedTrace
from rounds_bot.models import Frozen

N_FEATURES = 2**20
PENDING_LIMIT = 32
#: frames per exception that enter a document (crash site first)
DOCUMENT_FRAMES = 3
#: candidates whose score is recomputed exactly from their stored vectors
_EXACT_CANDIDATES = 8
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
    terms.extend(f"p:{a}_{b}" for a, b in zip(words, words[1:], strict=False))
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
        columns, values = [], []
        for at in present.tolist():
            row = positions[at]
            start, end = self.indptr[row], self.indptr[row + 1]
            columns.append(self.columns[start:end])
            values.append(self.data[start:end] * weights[at])
        return np.bincount(np.concatenate(columns), np.concatenate(values), minlength=self.size)


def _build_block(docs: list[tuple[int, np.ndarray, np.ndarray]]) -> _Block:
    features = np.concatenate([f for _, f, _ in docs])
    columns = np.concatenate([np.full(len(f), column, dtype=np.int64) for column, (_, f, _) in enumerate(docs)])
    data = np.concatenate([w for _, _, w in docs])
    order = np.lexsort((columns, features))
    features, columns, data = features[order], columns[order], data[order]
    unique, starts = np.unique(features, return_index=True)
    indptr = np.append(starts, len(features)).astype(np.int64)
    doc_indices = np.array([index for index, _, _ in docs], dtype=np.int64)
    return _Block(unique, indptr, columns, data, doc_indices)


@dataclass
class _ServiceIndex:
    signature_ids: list[str] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)
    vectors: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    with_frames: list[bool] = field(default_factory=list)
    document_frequency: dict[int, int] = field(default_factory=dict)
    blocks: list[_Block] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)
    #: feature -> [(document index, weight)] for the documents not yet in a block
    pending_postings: dict[int, list[tuple[int, float]]] = field(default_factory=dict)

    def add(self, signature_id: str, seq: int, vector: SimilarityVector) -> None:
        features = np.asarray(vector.features, dtype=np.int64)
        weights = np.asarray(vector.weights, dtype=np.float64)
        self.signature_ids.append(signature_id)
        self.seqs.append(seq)
        self.vectors.append((features, weights))
        self.with_frames.append(vector.with_frames)
        for feature in vector.features:
            self.document_frequency[feature] = self.document_frequency.get(feature, 0) + 1
        index = len(self.signature_ids) - 1
        self.pending.append(index)
        for feature, weight in zip(vector.features, vector.weights, strict=True):
            self.pending_postings.setdefault(feature, []).append((index, weight))
        if len(self.pending) >= PENDING_LIMIT:
            self._compact()

    def _compact(self) -> None:
        docs = [(i, *self.vectors[i]) for i in self.pending]
        self.blocks.append(_build_block(docs))
        self.pending = []
        self.pending_postings = {}
        while len(self.blocks) >= 2 and self.blocks[-1].size * 2 > self.blocks[-2].size:
            last, before = self.blocks.pop(), self.blocks.pop()
            merged = [
                (int(i), *self.vectors[int(i)])
                for i in np.concatenate([before.doc_indices, last.doc_indices])
            ]
            self.blocks.append(_build_block(merged))

    def weigh(self, counts: dict[int, float], *, adding: bool) -> tuple[np.ndarray, np.ndarray]:
        """Sublinear tf times smooth idf, L2-normalised; features sorted."""
        documents = len(self.signature_ids) + (1 if adding else 0)
        features = np.array(sorted(counts), dtype=np.int64)
        weights = np.empty(len(features), dtype=np.float64)
        for position, feature in enumerate(features.tolist()):
            frequency = self.document_frequency.get(feature, 0) + (1 if adding else 0)
            idf = math.log((1 + documents) / (1 + frequency)) + 1.0
            weights[position] = (1.0 + math.log(counts[feature])) * idf
        norm = math.sqrt(math.fsum(float(w) * float(w) for w in weights))
        if norm > 0:
            weights /= norm
        return features, weights

    def candidates(self, features: np.ndarray, weights: np.ndarray, minimum: float) -> list[int]:
        """Indices of the documents whose (approximate) score reaches `minimum`, best first."""
        if not self.signature_ids:
            return []
        scores = np.zeros(len(self.signature_ids), dtype=np.float64)
        for block in self.blocks:
            partial = block.scores(features, weights)
            if partial is not None:
                scores[block.doc_indices] += partial
        if self.pending_postings:
            for feature, weight in zip(features.tolist(), weights.tolist(), strict=True):
                for index, doc_weight in self.pending_postings.get(feature, ()):
                    scores[index] += weight * doc_weight
        # A small margin below `minimum`: the exact score, computed next, has the last word.
        touched = np.flatnonzero(scores >= minimum - 1e-6)
        if len(touched) > _EXACT_CANDIDATES:
            touched = touched[np.argsort(-scores[touched], kind="stable")[:_EXACT_CANDIDATES]]
        return [int(i) for i in touched]


def _exact(q_features: np.ndarray, q_weights: np.ndarray, d_features: np.ndarray, d_weights: np.ndarray) -> float:
    _, q_at, d_at = np.intersect1d(q_features, d_features, assume_unique=True, return_indices=True)
    return math.fsum((q_weights[q_at] * d_weights[d_at]).tolist())


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

    def vectorize(self, service: str, terms: list[str], *, with_frames: bool, adding: bool) -> SimilarityVector:
        counts: dict[int, float] = {}
        for term in terms:
            feature = feature_of(term)
            counts[feature] = counts.get(feature, 0.0) + 1.0
        index = self._services.get(service) or _ServiceIndex()
        features, weights = index.weigh(counts, adding=adding)
        return SimilarityVector(features=features.tolist(), weights=weights.tolist(), with_frames=with_frames)

    def add(self, service: str, signature_id: str, seq: int, vector: SimilarityVector) -> None:
        self._services.setdefault(service, _ServiceIndex()).add(signature_id, seq, vector)

    def nearest(self, service: str, query: SimilarityVector, minimum: float) -> list[Neighbour]:
        """Known signatures scoring at least `minimum`, best first (ties: oldest first)."""
        index = self._services.get(service)
        if index is None or not query.features:
            return []
        features = np.asarray(query.features, dtype=np.int64)
        weights = np.asarray(query.weights, dtype=np.float64)
        found = []
        for doc in index.candidates(features, weights, minimum):
            score = _exact(features, weights, *index.vectors[doc])
            if score >= minimum:
                found.append((-score, index.seqs[doc], doc, score))
        found.sort()
        return [
            Neighbour(index.signature_ids[doc], round(score, 6), index.with_frames[doc])
            for _, _, doc, score in found
        ]

"""Tier 3: TF-IDF similarity of a new error to the known signatures of its service.

Documents are bags of hashed terms (`terms`). Weights are scikit-learn's TF-IDF (sublinear tf,
smooth idf, L2 norm; a test checks against `TfidfTransformer`). Each service keeps its own
document frequencies, updated as signatures are added, and its signatures' vectors in sparse
blocks: a new signature lands in a small pending list, pending lists become a block, and blocks
of similar size are merged (like a binary counter), so adding one signature costs little and a
lookup is a handful of sparse products. Saved vectors re-loaded in bulk become one block at the
first lookup, built with numpy in one go rather than one posting at a time.

A signature's vector is weighted with the document frequencies known when it was added and then
kept as it is (it is part of the signature's saved state, `vectors.SimilarityVector`): a
re-loaded index answers exactly as the one that saved it. A query is weighted with the current
frequencies. A score is summed in a fixed order whatever the layout of the blocks, so re-loading
never changes a decision.
"""

from __future__ import annotations

import base64
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rounds_bot.grouping.terms import N_FEATURES
from rounds_bot.grouping.terms import counts as term_counts
from rounds_bot.grouping.vectors import SimilarityVector, raw_of, raw_of_packed, rounded
from rounds_bot.models import sharing_fields_set

if TYPE_CHECKING:
    import numpy as np

PENDING_LIMIT = 512
#: neighbours returned at most (the best; ties broken by age)
_MAX_NEIGHBOURS = 16


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
        import numpy as np

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


def _block_from(doc_indices: list[int], vectors: list[bytes]) -> _Block:
    """A block of the documents' packed vectors, unpacked all at once: every vector is n 32-bit
    feature ids then n 32-bit weights, so the joined bytes are one array of 32-bit words, split
    into features and weights by a mask (n true, n false per vector) without index arrays."""
    import numpy as np

    packed = [vectors[i] for i in doc_indices]
    words = np.frombuffer(b"".join(packed), dtype="<u4")
    lengths = np.fromiter((len(raw) // 8 for raw in packed), dtype=np.int64, count=len(packed))
    is_feature = np.repeat(np.tile(np.array([True, False]), len(packed)), np.repeat(lengths, 2))
    return _sorted_block(
        words[is_feature].astype(np.int32),
        np.repeat(np.arange(len(packed), dtype=np.int32), lengths),
        words[~is_feature].view("<f4"),
        np.asarray(doc_indices, dtype=np.int64),
    )


def _merged(before: _Block, last: _Block) -> _Block:
    import numpy as np

    return _sorted_block(
        np.concatenate([np.repeat(b.features, np.diff(b.indptr)) for b in (before, last)]),
        np.concatenate([before.columns, last.columns + np.int32(before.size)]),
        np.concatenate([before.data, last.data]),
        np.concatenate([before.doc_indices, last.doc_indices]),
    )


def _sorted_block(
    features: np.ndarray, columns: np.ndarray, data: np.ndarray, doc_indices: np.ndarray
) -> _Block:
    """Entries grouped by feature. Within one feature they already come in ascending column order
    (documents in order, or a block before the one merged after it), so a stable sort by feature
    is a sort by (feature, column). Weights stay 32-bit floats (exactly what was saved; a score
    widens them to 64 bits) and columns 32-bit integers: half the memory of 64-bit arrays."""
    import numpy as np

    order = _stable_order(features)
    features, columns, data = features[order], columns[order], data[order]
    # features are sorted now: each row starts where the feature changes
    starts = np.flatnonzero(np.concatenate(([True], features[1:] != features[:-1])))
    indptr = np.append(starts, len(features)).astype(np.int64)
    return _Block(features[starts], indptr, columns, data, doc_indices)


def _stable_order(features: np.ndarray) -> np.ndarray:
    """The stable sorting order of feature ids below 2**20 (`terms.N_FEATURES`): two stable sorts
    of 16-bit halves, low bits first (a radix sort); numpy sorts 16-bit keys by counting, in
    linear time, so this is several times faster than a stable sort of the whole ids."""
    import numpy as np

    if len(features) and int(features.max()) >= N_FEATURES:  # not ours: sorted the slow way
        return np.argsort(features, kind="stable")
    low = np.argsort((features & 0x3FF).astype(np.uint16), kind="stable")
    return low[np.argsort((features[low] >> 10).astype(np.uint16), kind="stable")]


@dataclass
class _ServiceIndex:
    signature_ids: list[str] = field(default_factory=list)
    document_of: dict[str, int] = field(default_factory=dict)
    seqs: list[int] = field(default_factory=list)
    #: each document's sorted features and weights, packed (`vectors.raw_of`)
    vectors: list[bytes] = field(default_factory=list)
    with_frames: list[bool] = field(default_factory=list)
    #: documents per feature: those added one by one, and those of each block loaded in bulk
    #: (its features and counts, kept as arrays; see `frequencies`)
    document_frequency: Counter[int] = field(default_factory=Counter)
    loaded_frequencies: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    blocks: list[_Block] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)
    #: feature -> (document indices, weights) for the pending documents
    pending_postings: dict[int, tuple[list[int], list[float]]] = field(default_factory=dict)
    #: documents re-loaded in bulk, not yet in a block (see `settle`)
    loaded: list[int] = field(default_factory=list)

    def append(self, signature_id: str, seq: int, raw: bytes, with_frames: bool) -> int:
        index = len(self.signature_ids)
        self.signature_ids.append(signature_id)
        self.document_of[signature_id] = index
        self.seqs.append(seq)
        self.vectors.append(raw)
        self.with_frames.append(with_frames)
        return index

    def add(
        self, signature_id: str, seq: int, features: list[int], weights: list[float], with_frames: bool
    ) -> None:
        """A new document, kept in the pending postings until there are enough for a block."""
        self.settle()
        index = self.append(signature_id, seq, raw_of(features, weights), with_frames)
        self.pending.append(index)
        self.document_frequency.update(features)
        postings = self.pending_postings
        for feature, weight in zip(features, weights, strict=True):
            entry = postings.get(feature)
            if entry is None:
                postings[feature] = ([index], [weight])
            else:
                entry[0].append(index)
                entry[1].append(weight)
        if len(self.pending) >= PENDING_LIMIT:
            self._compact(self.pending)
            self.pending = []
            self.pending_postings = {}

    def load(self, signature_id: str, seq: int, raw: bytes, with_frames: bool) -> None:
        """A saved document: its postings are built with the others at the next `settle`. A
        document already held (read with its service's vectors, then with its signature) is kept."""
        if signature_id not in self.document_of:
            self.loaded.append(self.append(signature_id, seq, raw, with_frames))

    def release(self) -> None:
        """Drop what scoring reads (blocks, postings, frequencies), keeping the packed vectors
        (`SimilarityIndex.release`)."""
        self.blocks = []
        self.pending, self.pending_postings, self.loaded = [], {}, []
        self.document_frequency = Counter()
        self.loaded_frequencies = []

    def settle(self) -> None:
        """Documents loaded in bulk become a block, and count in the document frequencies."""
        if not self.loaded:
            return
        loaded, self.loaded = self.loaded, []
        block = _block_from(loaded, self.vectors)
        if len(block.features):
            self.loaded_frequencies.append((block.features, block.indptr[1:] - block.indptr[:-1]))
        self._add_block(block)

    def _compact(self, documents: list[int]) -> None:
        self._add_block(_block_from(documents, self.vectors))

    def _add_block(self, block: _Block) -> None:
        self.blocks.append(block)
        while len(self.blocks) >= 2 and self.blocks[-1].size * 2 > self.blocks[-2].size:
            last, before = self.blocks.pop(), self.blocks.pop()
            self.blocks.append(_merged(before, last))

    def weigh(self, counts: dict[int, float], *, adding: bool) -> tuple[list[int], list[float]]:
        """Sublinear tf times smooth idf (as scikit-learn's TfidfTransformer), L2-normalised;
        features in ascending order."""
        extra = 1 if adding else 0
        documents = 1.0 + len(self.signature_ids) + extra
        features = sorted(counts)
        frequencies = self.frequencies(features)
        weights = [
            (1.0 + math.log(counts[f])) * (math.log(documents / (1.0 + df + extra)) + 1.0)
            for f, df in zip(features, frequencies, strict=True)
        ]
        norm = math.sqrt(math.fsum(w * w for w in weights))
        if norm > 0:
            weights = [w / norm for w in weights]
        return features, weights

    def frequencies(self, features: list[int]) -> list[int]:
        """How many documents hold each feature (ascending features)."""
        counted = [self.document_frequency.get(f, 0) for f in features]
        if self.loaded_frequencies:
            import numpy as np

            query = np.asarray(features, dtype=np.int64)
            for known, counts in self.loaded_frequencies:
                positions = np.minimum(np.searchsorted(known, query), len(known) - 1)
                found = np.where(known[positions] == query, counts[positions], 0)
                counted = [a + int(b) for a, b in zip(counted, found.tolist(), strict=True)]
        return counted

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
            import numpy as np

            query_features = np.array(features, dtype=np.int64)
            query_weights = np.array(weights, dtype=np.float64)
            for block in self.blocks:
                partial = block.scores(query_features, query_weights)
                if partial is None:
                    continue
                for column in np.flatnonzero(partial >= minimum).tolist():
                    found.append((int(block.doc_indices[column]), float(partial[column])))
        if self.pending_postings:
            # both ways give the same scores: numpy's only once it is loaded for the blocks (loading it
            # costs more than looping over the few hundred documents a service holds before its first block)
            pending = self._pending_neighbours if self.blocks else self._pending_neighbours_looped
            found.extend(pending(features, weights, minimum))
        return found

    def _pending_neighbours_looped(
        self, features: list[int], weights: list[float], minimum: float
    ) -> list[tuple[int, float]]:
        """`_pending_neighbours`, summed one posting at a time."""
        sums: dict[int, float] = {}
        postings = self.pending_postings
        for feature, weight in zip(features, weights, strict=True):
            entry = postings.get(feature)
            if entry is None:
                continue
            for index, doc_weight in zip(entry[0], entry[1], strict=True):
                sums[index] = sums.get(index, 0.0) + weight * doc_weight
        return [(index, score) for index, score in sums.items() if score >= minimum]

    def _pending_neighbours(
        self, features: list[int], weights: list[float], minimum: float
    ) -> list[tuple[int, float]]:
        """`neighbours` among the pending documents: each one's score is the sum of the products of its
        postings, in ascending feature order, as a block sums it (`_Block.scores`): the products of every
        posting of the query's features are laid out feature by feature and `bincount` adds each document's
        up in that order, from 0.0, as a loop over the postings would."""
        import numpy as np

        postings = self.pending_postings
        documents: list[int] = []
        document_weights: list[float] = []
        query: list[float] = []
        lengths: list[int] = []
        for feature, weight in zip(features, weights, strict=True):
            entry = postings.get(feature)
            if entry is not None:  # (the lists are joined a feature at a time, not an entry at a time)
                documents += entry[0]
                document_weights += entry[1]
                query.append(weight)
                lengths.append(len(entry[0]))
        if not documents:
            return []
        products = np.array(document_weights, dtype=np.float64) * np.repeat(
            np.array(query, dtype=np.float64), lengths
        )
        indices = np.array(documents, dtype=np.int64)
        sums = np.bincount(indices, products)
        # only documents that share a feature with the query have a score (a threshold of 0 finds no other)
        kept = np.flatnonzero((np.bincount(indices) > 0) & (sums >= minimum))
        return list(zip(kept.tolist(), sums[kept].tolist(), strict=True))


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

    counts = staticmethod(term_counts)

    def nearest(self, service: str, counts: dict[int, float], minimum: float) -> list[Neighbour]:
        """Known signatures whose cosine to the document reaches `minimum`, best first (ties:
        oldest first). The document is weighted with the service's current frequencies."""
        index = self._services.get(service)
        if index is None or not counts:
            return []
        index.settle()
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
        index = self._service(service)
        index.settle()
        features, weights = index.weigh(counts, adding=True)
        index.add(signature_id, seq, features, rounded(weights), with_frames)

    def saved_vector(self, service: str, signature_id: str) -> SimilarityVector | None:
        index = self._services.get(service)
        document = index.document_of.get(signature_id) if index is not None else None
        if index is None or document is None:
            return None
        raw = index.vectors[document]
        # every field given: one set of their names for every vector saved (`sharing_fields_set`)
        return sharing_fields_set(
            SimilarityVector(
                packed=base64.b64encode(raw).decode("ascii"), with_frames=index.with_frames[document]
            )
        )

    def release(self) -> None:
        """Drop all but the documents' packed vectors, for an index let go with its engine
        (`Registry.released_states`): it scores nothing more; `released_vector` reads each vector."""
        for index in self._services.values():
            index.release()

    def released_vector(self, service: str, signature_id: str) -> SimilarityVector | None:
        """`saved_vector`, the packed vector dropped once it is read."""
        vector = self.saved_vector(service, signature_id)
        if vector is not None:
            index = self._services[service]
            index.vectors[index.document_of.pop(signature_id)] = b""
        return vector

    def add_stored(self, service: str, stored: Iterable[tuple[str, int, str, bool]]) -> None:
        """Many saved vectors of one service at once, as the store keeps them: (signature id, seq,
        packed text, with frames); those already held are kept as they are."""
        index = self._service(service)
        for signature_id, seq, packed, with_frames in stored:
            if signature_id not in index.document_of:  # checked first: no decoding of what is held
                index.load(signature_id, seq, raw_of_packed(packed), with_frames)

    def _service(self, service: str) -> _ServiceIndex:
        index = self._services.get(service)
        if index is None:
            index = self._services[service] = _ServiceIndex()
        return index

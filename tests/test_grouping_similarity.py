"""Tier 3's TF-IDF index: scikit-learn's hashing and weighting, kept incrementally."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer

from rounds_bot.grouping import similarity
from rounds_bot.grouping.similarity import SimilarityIndex
from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.grouping.terms import N_FEATURES, document_terms, feature_of
from rounds_bot.grouping.vectors import SimilarityVector

HASHING_VECTORIZER = HashingVectorizer(
    n_features=N_FEATURES, analyzer=lambda terms: terms, alternate_sign=False, norm=None, dtype=np.float64
)


def random_documents(seed: int, count: int) -> list[list[str]]:
    rng = random.Random(seed)
    vocabulary = [f"w:word{n}" for n in range(60)] + ["type:valueerror", "type:keyerror"]
    return [[rng.choice(vocabulary) for _ in range(rng.randint(3, 12))] for _ in range(count)]


def test_features_are_the_columns_of_scikit_learns_hashing_vectorizer() -> None:
    rng = random.Random(9)
    terms = ["type:valueerror", "w:cart", "p:cart_empty", "f:com.acme.Cart.total", "s:é", "x" * 300, ""]
    terms += [
        "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(rng.randrange(1, 40))) for _ in range(2000)
    ]
    for term in terms:
        (column,) = HASHING_VECTORIZER.transform([[term]]).indices.tolist()
        assert feature_of(term) == column, term


def test_a_new_document_is_weighted_like_scikit_learns_tfidf_over_the_documents_so_far() -> None:
    documents = random_documents(1, 12)
    index = SimilarityIndex()
    for number, terms in enumerate(documents):
        index.add_new("svc", f"sig{number}", number, index.counts(terms), with_frames=False)
    counts = HASHING_VECTORIZER.transform(documents)
    tfidf = TfidfTransformer(sublinear_tf=True, smooth_idf=True, norm="l2").fit_transform(counts)
    last = tfidf[len(documents) - 1]
    saved = index.saved_vector("svc", f"sig{len(documents) - 1}")
    assert saved is not None
    assert saved.features == sorted(last.indices.tolist())
    expected = dict(zip(last.indices.tolist(), last.data.tolist(), strict=True))
    # kept as 32-bit floats: the same numbers in the index that made it and in any that re-loads it
    assert saved.weights == pytest.approx([expected[f] for f in saved.features], rel=1e-6)


def test_adding_a_signature_never_reweights_the_ones_before_it() -> None:
    index = SimilarityIndex()
    documents = random_documents(2, 40)
    index.add_new("svc", "first", 0, index.counts(documents[0]), with_frames=False)
    before = index.saved_vector("svc", "first")
    for number, terms in enumerate(documents[1:], start=1):
        index.add_new("svc", f"sig{number}", number, index.counts(terms), with_frames=False)
    assert index.saved_vector("svc", "first") == before


def test_scores_do_not_depend_on_how_documents_are_split_into_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    documents = random_documents(3, 300)

    def build(pending_limit: int) -> SimilarityIndex:
        monkeypatch.setattr(similarity, "PENDING_LIMIT", pending_limit)
        index = SimilarityIndex()
        for number, terms in enumerate(documents):
            index.add_new("svc", f"sig{number}", number, index.counts(terms), with_frames=False)
        return index

    many_blocks, all_pending = build(4), build(100_000)
    assert len(many_blocks._services["svc"].blocks) > 1
    assert not all_pending._services["svc"].blocks
    for query in random_documents(4, 50):
        counts = many_blocks.counts(query)
        assert many_blocks.nearest("svc", counts, 0.1) == all_pending.nearest("svc", counts, 0.1)


def _scores_summed_one_posting_at_a_time(
    index: SimilarityIndex, features: list[int], weights: list[float], minimum: float
) -> dict[int, float]:
    """What the pending documents score, summed posting by posting in ascending feature order."""
    sums: dict[int, float] = {}
    postings = index._services["svc"].pending_postings
    for feature, weight in zip(features, weights, strict=True):
        entry = postings.get(feature)
        for document, doc_weight in zip(*entry, strict=True) if entry is not None else ():
            sums[document] = sums.get(document, 0.0) + weight * doc_weight
    return {document: score for document, score in sums.items() if score >= minimum}


@pytest.mark.parametrize("seed", range(4))
def test_pending_documents_score_bit_for_bit_as_summed_one_posting_at_a_time(seed: int) -> None:
    documents = random_documents(20 + seed, 200)
    index = SimilarityIndex()
    for number, terms in enumerate(documents):
        index.add_new("svc", f"sig{number}", number, index.counts(terms), with_frames=False)
    service = index._services["svc"]
    assert not service.blocks and len(service.pending) == len(documents)
    for query in random_documents(40 + seed, 60):
        features, weights = service.weigh(index.counts(query), adding=False)
        for minimum in (0.0, 1e-9, 0.1, 0.5):
            expected = _scores_summed_one_posting_at_a_time(index, features, weights, minimum)
            for found in (
                service._pending_neighbours(features, weights, minimum),
                service._pending_neighbours_looped(features, weights, minimum),
                service.neighbours(features, weights, minimum),
            ):
                assert len({document for document, _ in found}) == len(found)
                assert dict(found) == expected
                assert all(type(document) is int and type(score) is float for document, score in found)


def test_a_reloaded_index_scores_exactly_like_the_original() -> None:
    documents = random_documents(5, 200)
    original = SimilarityIndex()
    for number, terms in enumerate(documents):
        original.add_new("svc", f"sig{number}", number, original.counts(terms), with_frames=number % 2 == 0)
    vectors = [original.saved_vector("svc", f"sig{number}") for number in range(len(documents))]
    reloaded = SimilarityIndex()
    reloaded.add_stored(
        "svc", [(f"sig{n}", n, v.packed, v.with_frames) for n, v in enumerate(vectors) if v is not None]
    )
    for query in random_documents(6, 40):
        assert original.nearest("svc", original.counts(query), 0.2) == reloaded.nearest(
            "svc", reloaded.counts(query), 0.2
        )


def test_nearest_lists_the_best_first_and_the_oldest_first_among_equals() -> None:
    index = SimilarityIndex()
    for number in range(3):
        index.add_new("svc", f"twin{number}", number, index.counts(["w:disk", "w:full"]), with_frames=False)
    index.add_new("svc", "other", 3, index.counts(["w:disk", "w:slow"]), with_frames=False)
    found = index.nearest("svc", index.counts(["w:disk", "w:full"]), 0.1)
    assert [n.signature_id for n in found[:3]] == ["twin0", "twin1", "twin2"]
    assert found[0].score >= found[-1].score


def test_unknown_service_or_empty_document_finds_nothing() -> None:
    index = SimilarityIndex()
    assert index.nearest("nowhere", index.counts(["w:x"]), 0.1) == []
    index.add_new("svc", "a", 0, index.counts(["w:x"]), with_frames=False)
    assert index.nearest("svc", {}, 0.1) == []


def test_trace_documents_hold_type_message_words_and_top_frames() -> None:
    trace = parse_stacktrace(
        "java.lang.IllegalStateException: cart is empty\n"
        "\tat com.acme.shop.CartService.checkoutNow(CartService.java:10)\n"
        "\tat com.acme.shop.Api.post(Api.java:3)"
    )
    terms = document_terms("IllegalStateException", "cart is empty", trace)
    assert "type:illegalstateexception" in terms
    assert {"w:cart", "w:is", "w:empty", "p:cart_is"} <= set(terms)
    assert "f:com.acme.shop.CartService.checkoutNow" in terms
    assert {"s:cart", "s:service", "s:checkout", "s:now"} <= set(terms)


def test_placeholders_are_not_words() -> None:
    terms = document_terms(None, "user <int> not found at <ip>", None)
    assert "w:int" not in terms and "w:ip" not in terms


def test_weights_are_unit_length() -> None:
    index = SimilarityIndex()
    index.add_new("svc", "a", 0, index.counts(["w:a", "w:a", "w:b", "w:c"]), with_frames=False)
    vector = index.saved_vector("svc", "a")
    assert vector is not None
    assert np.isclose(np.linalg.norm(vector.weights), 1.0)


def test_a_vector_saved_as_two_lists_is_still_read() -> None:
    old = {"features": [3, 70, 900], "weights": [0.5, 0.25, 0.8291561975888501], "with_frames": True}
    vector = SimilarityVector.model_validate(old)
    assert vector.features == [3, 70, 900]
    assert vector.weights == pytest.approx([0.5, 0.25, 0.8291561975888501], rel=1e-7)
    assert vector.with_frames


def test_a_saved_vector_is_packed_small_and_exact() -> None:
    index = SimilarityIndex()
    terms = [f"w:word{n}" for n in range(60)]
    index.add_new("svc", "a", 0, index.counts(terms), with_frames=True)
    vector = index.saved_vector("svc", "a")
    assert vector is not None
    lists = json.dumps({"features": vector.features, "weights": vector.weights})
    assert len(vector.model_dump_json()) * 2.5 < len(lists)
    assert SimilarityVector.model_validate_json(vector.model_dump_json()) == vector


def test_a_vector_that_is_not_base64_is_refused_on_use() -> None:
    with pytest.raises(ValueError, match="not base64"):
        SimilarityVector(packed="***").raw()


def test_a_blocks_entries_are_ordered_by_feature_then_column_as_a_stable_sort_orders_them() -> None:
    rng = np.random.default_rng(5)
    ours = rng.integers(0, N_FEATURES, size=20_000)  # the ids tier 3 makes: a 16-bit radix sort
    foreign = np.append(ours, [N_FEATURES, 2**31 - 1])  # ids it never makes: sorted the slow way
    for features in (ours, foreign, ours[:0]):
        order = similarity._stable_order(features)
        assert np.array_equal(order, np.argsort(features, kind="stable"))

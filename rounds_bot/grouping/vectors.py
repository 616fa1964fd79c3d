"""A signature's saved TF-IDF vector, packed: what tier 3 needs to re-load it, in little space.

The vector is kept as its signature saw it when it was added (see `similarity`): feature ids in
ascending order with their L2-normalised weights, rounded to 32-bit floats when the signature
is created (so the index that made it and any index that re-loads it score with the very same
numbers). Saved, they are one base64 text: the ids as little-endian 32-bit integers, then the
weights as little-endian 32-bit floats; about a third of the size of the JSON lists earlier
versions saved, which are still read.
"""

from __future__ import annotations

import base64
import binascii
import sys
from array import array
from typing import Any

from pydantic import model_validator

from rounds_bot.models import Frozen

# 32-bit unsigned feature ids and 32-bit floats, little-endian (the index's blocks read many at once
# with numpy; one vector is packed and unpacked with the standard library's arrays)
_ENTRY = 8
_LITTLE = sys.byteorder == "little"


def raw_of_packed(packed: str) -> bytes:
    """The bytes of a packed vector's text (as saved), checked: whole entries of ids and weights."""
    try:
        data = binascii.a2b_base64(packed, strict_mode=True)
    except binascii.Error as exc:
        raise ValueError(f"a similarity vector is not base64: {exc}") from None
    if len(data) % _ENTRY:
        raise ValueError(f"a similarity vector of {len(data)} bytes is not whole entries of {_ENTRY}")
    return data


class SimilarityVector(Frozen):
    """A signature's frozen TF-IDF vector: hashed feature ids and L2-normalised weights, packed."""

    packed: str
    with_frames: bool = False

    @model_validator(mode="before")
    @classmethod
    def _read_lists(cls, data: Any) -> Any:
        """Vectors saved as two JSON lists (before the packed form) are packed on reading."""
        if isinstance(data, dict) and "features" in data and "packed" not in data:
            packed = pack(list(data["features"]), list(data["weights"]))
            return {"packed": packed, "with_frames": data.get("with_frames", False)}
        return data

    @classmethod
    def of(cls, features: list[int], weights: list[float], *, with_frames: bool) -> SimilarityVector:
        return cls(packed=pack(features, weights), with_frames=with_frames)

    def raw(self) -> bytes:
        return raw_of_packed(self.packed)

    @property
    def features(self) -> list[int]:
        raw = self.raw()
        return _unpacked("I", raw[: len(raw) // 2]).tolist()

    @property
    def weights(self) -> list[float]:
        raw = self.raw()
        return _unpacked("f", raw[len(raw) // 2 :]).tolist()


def cosine(a: SimilarityVector, b: SimilarityVector) -> float:
    """The TF-IDF cosine of two saved vectors (both L2-normalised, so their dot product), as the
    signatures saw each other when they were added."""
    other = dict(zip(b.features, b.weights, strict=True))
    pairs = zip(a.features, a.weights, strict=True)
    return sum(weight * other.get(feature, 0.0) for feature, weight in pairs)


def pack(features: list[int], weights: list[float]) -> str:
    return base64.b64encode(raw_of(features, weights)).decode("ascii")


def raw_of(features: list[int], weights: list[float]) -> bytes:
    return _packed("I", features) + _packed("f", weights)


def rounded(weights: list[float]) -> list[float]:
    """Weights as a packed vector keeps them: rounded to the nearest 32-bit float."""
    return array("f", weights).tolist()


def _packed(code: str, values: list[int] | list[float]) -> bytes:
    packed = array(code, values)
    assert packed.itemsize == 4, "32-bit array items are required"
    if not _LITTLE:
        packed.byteswap()
    return packed.tobytes()


def _unpacked(code: str, raw: bytes) -> array[Any]:
    unpacked = array(code)
    unpacked.frombytes(raw)
    if not _LITTLE:
        unpacked.byteswap()
    return unpacked

"""What a diagnosis may cost, decided before the call. Pure functions; the ledger is the store's.

Three caps in USD: per diagnosis (also handed to the CLI as `--max-budget-usd`), per round, and per
calendar month. Before every call the diagnoser estimates its cost from the context size and the
model's list prices; `decide` allows the call only when the estimate fits under all three. After
the call the round books the cost the backend reported (the CLI's `total_cost_usd`, which counts
cache tokens) and the next decision sees it.
"""

from __future__ import annotations

import hashlib
import math

from pydantic import Field

from rounds_bot.models import Frozen


class ModelPrice(Frozen):
    """List prices in USD per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_write: float = Field(ge=0)
    cache_read: float = Field(ge=0)


def _price(input: float, output: float, cache_read: float | None = None) -> ModelPrice:
    return ModelPrice(
        input=input,
        output=output,
        cache_write=input * 1.25,
        cache_read=input / 10 if cache_read is None else cache_read,
    )


#: Prices of the Claude models, by id prefix (longest prefix wins), as listed in the model
#: catalogue of Claude Code 2.1.328. The CLI computes `total_cost_usd` from the same table; ours
#: only serves estimates, so an outdated entry skews an estimate, never the booked cost.
CLAUDE_PRICES: dict[str, ModelPrice] = {
    "claude-haiku-4-5": _price(1, 5),
    "claude-haiku-5": _price(0.1, 0.5),
    "claude-sonnet-4": _price(3, 15),
    "claude-sonnet-5": _price(2, 10),
    "claude-opus-4-0": _price(15, 75),
    "claude-opus-4-1": _price(15, 75),
    "claude-opus-4": _price(5, 25),
    "claude-opus-5": _price(4, 20, cache_read=0.2),
    # the CLI's aliases resolve to the newest model of each family
    "haiku": _price(0.1, 0.5),
    "sonnet": _price(2, 10),
    "opus": _price(4, 20, cache_read=0.2),
}

#: Used for a model this table does not know: the dearest price listed, so estimates err high.
UNKNOWN_MODEL_PRICE = _price(15, 75)


def price_for(model: str, prices: dict[str, ModelPrice] | None = None) -> ModelPrice:
    """The price of `model` (a full id or an alias), or `UNKNOWN_MODEL_PRICE`."""
    table = CLAUDE_PRICES if prices is None else prices
    model = model.lower()
    for prefix in sorted(table, key=len, reverse=True):
        if model.startswith(prefix):
            return table[prefix]
    return UNKNOWN_MODEL_PRICE


class CallShape(Frozen):
    """What a model run is expected to look like, for estimating its cost before it starts.

    Every turn re-sends the whole conversation: the fixed overhead (the CLI's system prompt and
    tool definitions), the context, and what earlier tool calls added. After the first turn the
    CLI reads that prefix from the prompt cache.
    """

    context_tokens: int = Field(ge=0)
    overhead_tokens: int = Field(default=6000, ge=0, description="system prompt and tool schemas")
    expected_turns: int = Field(default=4, ge=1)
    tokens_added_per_turn: int = Field(default=1500, ge=0, description="tool results, e.g. a Read")
    output_tokens_per_turn: int = Field(default=400, ge=0)


def estimate_cost(shape: CallShape, price: ModelPrice) -> float:
    """Expected USD cost of a run shaped like `shape`: first turn writes the cache, later read it."""
    prefix = shape.overhead_tokens + shape.context_tokens
    cost = prefix * price.cache_write
    for turn in range(1, shape.expected_turns):
        grown = shape.tokens_added_per_turn * turn
        cost += prefix * price.cache_read + grown * price.input
    cost += shape.output_tokens_per_turn * shape.expected_turns * price.output
    return cost / 1_000_000


class BudgetCaps(Frozen):
    """Spending limits in USD. A cap of 0 forbids every call."""

    per_diagnosis: float = Field(default=1.0, ge=0)
    per_round: float = Field(default=5.0, ge=0)
    monthly: float = Field(default=50.0, ge=0)


class BudgetDecision(Frozen):
    allow: bool
    reason: str


def decide(
    estimate_usd: float,
    *,
    spent_this_round: float,
    spent_this_month: float,
    caps: BudgetCaps,
) -> BudgetDecision:
    """Allow a call estimated at `estimate_usd` only if it fits under every cap, with the reason."""
    checks = (
        ("per-diagnosis cap", 0.0, caps.per_diagnosis),
        ("round cap", spent_this_round, caps.per_round),
        ("monthly cap", spent_this_month, caps.monthly),
    )
    for name, spent, cap in checks:
        if spent + estimate_usd > cap or math.isclose(cap, 0.0):
            left = max(cap - spent, 0.0)
            return BudgetDecision(
                allow=False,
                reason=(
                    f"skipped: estimated ${estimate_usd:.4f} exceeds the {name} "
                    f"(${left:.4f} of ${cap:.2f} left)"
                ),
            )
    return BudgetDecision(
        allow=True,
        reason=(
            f"allowed: estimated ${estimate_usd:.4f}; round ${spent_this_round:.4f} of "
            f"${caps.per_round:.2f}, month ${spent_this_month:.4f} of ${caps.monthly:.2f} spent"
        ),
    )


#: Bump when the prompt or the answer's schema changes in a way that makes old diagnoses stale.
DIAGNOSIS_FORMAT_VERSION = "1"


def diagnosis_cache_key(
    signature_id: str, code_revision: str, *, format_version: str = DIAGNOSIS_FORMAT_VERSION
) -> str:
    """The key a diagnosis is cached under: one per signature, code revision and answer format."""
    material = "\x1f".join((format_version, signature_id, code_revision))
    return f"diag-v{format_version}-" + hashlib.sha256(material.encode()).hexdigest()[:24]

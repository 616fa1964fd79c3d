from shop.clients.payments import charge
from shop.errors import ApiError
from shop.storage.db import insert_order

SUPPORTED_CURRENCIES = ("EUR", "USD", "GBP")
MAX_ITEMS = 50


def validate_order(payload: dict) -> None:
    if payload.get("currency") not in SUPPORTED_CURRENCIES:
        raise ApiError(400, "INVALID_CURRENCY", "currency not supported", field="currency")
    items = payload.get("items") or []
    if not items:
        raise ApiError(400, "EMPTY_ORDER", "an order needs at least one item", field="items")
    if len(items) > MAX_ITEMS:
        raise ApiError(400, "INVALID_ORDER", "invalid order")
    for item in items:
        if int(item.get("quantity", 0)) < 1:
            raise ApiError(400, "INVALID_QUANTITY", "quantity must be at least 1", field="quantity")


def create_order(payload: dict, idempotency_key: str | None) -> dict:
    validate_order(payload)
    total = sum(item["price"] * item["quantity"] for item in payload["items"])
    order = insert_order(payload["customer_id"], total, payload["currency"], idempotency_key)
    charge(order["id"], total, payload["currency"])
    return order

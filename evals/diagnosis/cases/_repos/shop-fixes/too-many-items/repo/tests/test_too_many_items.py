import pytest
from shop.api.orders import MAX_ITEMS, validate_order
from shop.errors import ApiError


def test_an_order_with_too_many_items_is_told_the_limit_and_the_field():
    payload = {"currency": "EUR", "items": [{"sku": "lamp", "quantity": 1}] * (MAX_ITEMS + 1)}
    with pytest.raises(ApiError) as raised:
        validate_order(payload)
    assert str(MAX_ITEMS) in str(raised.value) and raised.value.field == "items"

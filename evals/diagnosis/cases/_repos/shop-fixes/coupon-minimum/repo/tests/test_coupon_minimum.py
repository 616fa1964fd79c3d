import pytest
from shop.api.coupons import redeem
from shop.errors import ApiError


def test_a_coupon_below_its_minimum_is_told_the_minimum():
    coupons = {"SPRING": {"amount": 5, "minimum": 40}}
    with pytest.raises(ApiError) as raised:
        redeem("spring", coupons, 30)
    assert "40" in str(raised.value) and "minimum" in str(raised.value)

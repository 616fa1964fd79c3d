import pytest
from shop.api.catalog import MAX_PAGE_SIZE, list_products
from shop.errors import ApiError


def test_a_page_size_over_the_limit_is_told_the_limit_and_the_field():
    with pytest.raises(ApiError) as raised:
        list_products("lamp", 1, MAX_PAGE_SIZE + 1)
    assert str(MAX_PAGE_SIZE) in str(raised.value) and raised.value.field == "page_size"

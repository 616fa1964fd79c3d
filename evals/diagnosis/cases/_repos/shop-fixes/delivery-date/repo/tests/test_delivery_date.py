import pytest
from shop.api.deliveries import parse_delivery_date
from shop.errors import ApiError


@pytest.mark.parametrize("value", ["25/12/2024", "2024-12-25T10:00", "Dec 24 2024"])
def test_a_date_in_another_format_is_told_the_format_and_the_field(value):
    with pytest.raises(ApiError) as raised:
        parse_delivery_date(value)
    assert "YYYY-MM-DD" in str(raised.value) and raised.value.field == "date"

from datetime import date

from shop.errors import ApiError


def parse_delivery_date(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ApiError(400, "INVALID_DATE", "invalid date") from None


def schedule_delivery(order_id: str, value: str) -> dict:
    when = parse_delivery_date(value)
    if when.weekday() == 6:
        raise ApiError(400, "NO_SUNDAY_DELIVERY", "no deliveries on Sundays")
    return {"order_id": order_id, "date": when.isoformat()}

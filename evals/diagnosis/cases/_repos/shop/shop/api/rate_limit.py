from shop.errors import ApiError

REQUESTS_PER_MINUTE = 100


def check_rate(client_id: str, counts: dict[str, int]) -> None:
    counts[client_id] = counts.get(client_id, 0) + 1
    if counts[client_id] > REQUESTS_PER_MINUTE:
        raise ApiError(429, "RATE_LIMITED", "too many requests")

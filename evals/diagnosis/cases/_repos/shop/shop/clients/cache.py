import redis

CACHE = redis.Redis(host="cache", port=6379, socket_timeout=0.5)


def cached_cart(customer_id: str) -> bytes | None:
    return CACHE.get(f"cart:{customer_id}")

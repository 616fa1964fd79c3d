from shop.clients.search import search_products
from shop.errors import ApiError

MAX_PAGE_SIZE = 100


def list_products(query: str, page: int, page_size: int) -> list[dict]:
    if page < 1:
        raise ApiError(400, "INVALID_PAGE", "page starts at 1", field="page")
    if page_size > MAX_PAGE_SIZE:
        raise ApiError(400, "INVALID_ARGUMENT", "bad request")
    return search_products(query, offset=(page - 1) * page_size, limit=page_size)

import httpx

from shop.errors import DependencyError

SEARCH_URL = "http://search:9200/products/_search"


def search_products(query: str, offset: int, limit: int) -> list[dict]:
    try:
        response = httpx.post(
            SEARCH_URL, json={"query": {"match": {"name": query}}, "from": offset, "size": limit}, timeout=2.0
        )
    except httpx.HTTPError as error:
        raise DependencyError(f"search unavailable: {error}") from error
    if response.status_code == 429 or response.status_code >= 500:
        raise DependencyError(f"search answered {response.status_code}")
    return [hit["_source"] for hit in response.json()["hits"]["hits"]]

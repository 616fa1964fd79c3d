import time

from shop.errors import ApiError

TOKEN_LIFETIME_SECONDS = 3600


def authenticate(headers: dict[str, str], tokens: dict[str, dict]) -> dict:
    value = headers.get("Authorization", "")
    if not value.startswith("Bearer "):
        raise ApiError(401, "UNAUTHENTICATED", "missing bearer token")
    token = tokens.get(value.removeprefix("Bearer "))
    if token is None:
        raise ApiError(401, "UNAUTHENTICATED", "unknown token")
    if token["issued_at"] + TOKEN_LIFETIME_SECONDS < time.time():
        raise ApiError(401, "TOKEN_EXPIRED", "token expired")
    return token


def require_scope(token: dict, scope: str) -> None:
    if scope not in token.get("scopes", []):
        raise ApiError(403, "FORBIDDEN", f"missing scope {scope}")

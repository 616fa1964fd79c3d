import hashlib
import hmac

from shop.errors import ApiError


def verify_signature(headers: dict[str, str], body: bytes, secret: bytes) -> None:
    signature = headers.get("X-Shop-Signature")
    if signature is None:
        raise ApiError(400, "MISSING_SIGNATURE", "X-Shop-Signature header is required")
    expected = hmac.new(secret, body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(signature, expected):
        raise ApiError(401, "BAD_SIGNATURE", "signature does not match")

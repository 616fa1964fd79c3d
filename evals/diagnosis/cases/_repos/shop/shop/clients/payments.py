import httpx

from shop.errors import DependencyError

PROVIDER_URL = "https://payments.example.net/v2/charges"
TIMEOUT_SECONDS = 5.0


def charge(order_id: str, amount: float, currency: str) -> dict:
    try:
        response = httpx.post(
            PROVIDER_URL,
            json={"reference": order_id, "amount": amount, "currency": currency},
            timeout=TIMEOUT_SECONDS,
        )
    except httpx.TimeoutException as error:
        raise DependencyError(f"payment provider timed out after {TIMEOUT_SECONDS}s") from error
    if response.status_code >= 500:
        raise DependencyError(f"payment provider answered {response.status_code}")
    return response.json()

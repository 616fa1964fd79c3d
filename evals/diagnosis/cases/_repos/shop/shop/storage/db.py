import psycopg

from shop.errors import ApiError

DSN = "postgresql://shop@db/shop"


def connect() -> psycopg.Connection:
    return psycopg.connect(DSN, connect_timeout=3)


def insert_order(customer_id: str, total: float, currency: str, idempotency_key: str | None) -> dict:
    with connect() as connection:
        try:
            row = connection.execute(
                "INSERT INTO orders (customer_id, total, currency, idempotency_key) VALUES (%s, %s, %s, %s) "
                "RETURNING id",
                (customer_id, total, currency, idempotency_key),
            ).fetchone()
        except psycopg.errors.UniqueViolation:
            raise ApiError(409, "DUPLICATE_ORDER", "an order with this Idempotency-Key exists") from None
    return {"id": row[0], "total": total}

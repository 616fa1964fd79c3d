from shop.errors import ApiError


def redeem(code: str, coupons: dict[str, dict], order_total: float) -> float:
    coupon = coupons.get(code.upper())
    if coupon is None:
        raise ApiError(404, "COUPON_NOT_FOUND", "coupon not found", field="code")
    if order_total < coupon.get("minimum", 0):
        raise ApiError(422, "COUPON_NOT_APPLICABLE", "coupon not applicable")
    if coupon.get("redeemed"):
        raise ApiError(409, "COUPON_USED", "coupon already redeemed", field="code")
    return order_total - coupon["amount"]

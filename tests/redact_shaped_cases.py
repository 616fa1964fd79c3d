"""The texts of the redaction tests of Doppler's tokens, password hashes, client ids, internationalised
addresses and versions beside IP addresses, gathered for the engines' equality tests."""

from __future__ import annotations


def shaped_cases() -> list[str]:
    """Those tests' texts, secrets and kept ones (their modules imported here, when asked: they import the
    equality checks of `test_redact_engine.py`, which asks)."""
    from tests import (
        test_redact_client_ids,
        test_redact_doppler_tokens,
        test_redact_international_email,
        test_redact_password_hashes,
        test_redact_versions,
    )

    doppler = test_redact_doppler_tokens
    texts = [carrier.format(value) for value in doppler.TOKENS for carrier in doppler.CARRIERS]
    texts += list(doppler.KEPT) + test_redact_password_hashes.texts()
    clients = test_redact_client_ids
    texts += [shape.format(name=n, value=v) for n, v in clients.NAMED for shape in clients.SHAPES]
    texts += list(clients.KEPT)
    addresses = test_redact_international_email
    texts += [f"mail to {address} bounced" for address in addresses.ADDRESSES]
    texts += [text for text, _ in addresses.BOUNDED] + list(addresses.KEPT)
    texts += list(test_redact_versions.VERSIONS) + [text for text, _ in test_redact_versions.ADDRESSES]
    return texts

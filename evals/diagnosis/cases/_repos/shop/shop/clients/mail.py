import smtplib

from shop.errors import DependencyError

RELAY = ("mail-relay", 25)


def send_receipt(to: str, body: str) -> None:
    try:
        with smtplib.SMTP(*RELAY, timeout=10) as smtp:
            smtp.sendmail("orders@shop.example", [to], body)
    except (OSError, smtplib.SMTPException) as error:
        raise DependencyError(f"mail relay failed: {error}") from error

class ApiError(Exception):
    """An error answered to the caller with an HTTP status."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.field = field


class DependencyError(Exception):
    """Something the service depends on failed."""

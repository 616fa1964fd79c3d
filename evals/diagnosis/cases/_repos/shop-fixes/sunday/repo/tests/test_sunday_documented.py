from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs" / "api.md"


def test_the_deliveries_api_documents_that_there_are_no_sunday_deliveries():
    section = DOCS.read_text(encoding="utf-8").split("## POST /deliveries", 1)[1].split("\n## ", 1)[0]
    assert "Sunday" in section and "NO_SUNDAY_DELIVERY" in section

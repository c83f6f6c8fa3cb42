"""The admin pages the wording tests read, and an operator's switch to English."""

CASES = "/admin/caselibrary/caselibrary/"
SESSIONS = "/admin/diagnosis/diagnosissession/"


def in_english(client) -> None:  # type: ignore[no-untyped-def]
    assert client.post("/i18n/setlang/", {"language": "en", "next": "/admin/"}).status_code == 302

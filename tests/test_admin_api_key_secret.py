"""A new API key is shown once, on the page after it is made, and travels in no cookie."""

import re
import zlib

import pytest
from django.core import signing

from diagnosis.models import ApiKey

pytestmark = pytest.mark.django_db


def as_anyone_reads_it(value: str) -> str:
    """A cookie's value, and its payload if it is one of Django's signed values: signed is
    not secret, anyone holding the cookie decodes it (base64, zlib when compressed)."""
    payload = value.split(":", 1)[0]
    try:
        data = signing.b64_decode(payload.lstrip(".").encode())
        if payload.startswith("."):
            data = zlib.decompress(data)
        return value + data.decode("utf-8", "replace")
    except (ValueError, zlib.error):  # not a signed value: read as it is
        return value


def test_adding_a_key_shows_it_once_and_puts_it_in_no_cookie(admin_client) -> None:
    added = admin_client.post(
        "/admin/diagnosis/apikey/add/",
        {"name": "new-agent", "scope": "agent", "expiry_date_0": "", "expiry_date_1": ""},
    )
    assert added.status_code == 302, added.content.decode()[:2000]
    shown = admin_client.get(added["Location"])
    shown_again = admin_client.get(added["Location"])

    page = shown.content.decode()
    key = ApiKey.objects.get(name="new-agent")
    secret = re.search(rf"{re.escape(key.prefix)}\.[A-Za-z0-9]+", page).group()
    assert ApiKey.objects.get_from_key(secret) == key
    for response in (added, shown, shown_again):
        for cookie in response.cookies.values():
            assert secret not in as_anyone_reads_it(cookie.value)
    assert secret not in shown_again.content.decode()

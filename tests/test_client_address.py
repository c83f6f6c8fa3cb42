"""The client's address behind trusted proxies (TRUSTED_PROXY_COUNT) is taken from
X-Forwarded-For only when the entry there is an IP address: anything else (a forged
header of 4,000 characters, a name, a zone id) stands for the connection's address. A
forged value so never becomes a cache key (Django warned of each on stderr, and Redis kept
4 KB keys) and never opens a count of its own beside the address's limit."""

import json
import warnings

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.cache.backends.base import CacheKeyWarning
from django.test import Client, RequestFactory
from rest_framework.test import APIClient

from config.client_address import client_address

pytestmark = pytest.mark.django_db

PAGE = "https://chat.example.com"
FORGED = ["x" * 4000, "y" * 4000, "not-an-address", "fe80::1%" + "z" * 4000, "203.0.113.9 x"]


@pytest.fixture(autouse=True)
def _behind_one_proxy(settings) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    settings.CORS_ALLOWED_ORIGINS = [PAGE]
    cache.clear()


def feedback_from(address: str, forwarded: str | None):  # type: ignore[no-untyped-def]
    headers = {"REMOTE_ADDR": address, "HTTP_ORIGIN": PAGE}
    if forwarded is not None:
        headers["HTTP_X_FORWARDED_FOR"] = forwarded
    client = APIClient(**headers)
    client.credentials(HTTP_AUTHORIZATION="Feedback forged:AAAA:BBBB")
    return client.post("/api/feedback", {"sessionId": "s-1", "feedback": "useful"}, format="json")


def address_of(remote: str, forwarded: str | None) -> str:
    headers = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    return client_address(RequestFactory().get("/", REMOTE_ADDR=remote, **headers))


def test_forged_forwarded_addresses_count_against_the_connections_address(settings) -> None:
    settings.FEEDBACK_ADDRESS_RATE_LIMIT = f"{len(FORGED)}/min"
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheKeyWarning)
        codes = [feedback_from("10.9.9.9", forged).status_code for forged in FORGED]
        refused = feedback_from("10.9.9.9", "z" * 4000)

    assert codes == [403] * len(FORGED)  # the token is forged: counted, then refused
    assert refused.status_code == 429
    assert feedback_from("10.9.9.10", None).status_code == 403  # another address's count


def test_a_forged_forwarded_address_leaves_no_cache_key_warning(settings, recwarn) -> None:
    settings.FEEDBACK_ADDRESS_RATE_LIMIT = "100/min"

    feedback_from("10.9.9.9", "x" * 4000)

    assert not [w for w in recwarn if issubclass(w.category, CacheKeyWarning)]


def test_a_valid_forwarded_address_is_counted_whatever_proxy_connection_it_came_by(
    settings,
) -> None:
    settings.FEEDBACK_ADDRESS_RATE_LIMIT = "2/min"

    codes = [feedback_from(f"10.0.0.{n}", " 203.0.113.9 ").status_code for n in (1, 2, 3)]

    assert codes == [403, 403, 429]
    assert feedback_from("10.0.0.1", "203.0.113.10").status_code == 403


def test_the_address_is_the_forwarded_one_only_when_it_is_an_ip_address() -> None:
    assert address_of("10.0.0.1", "203.0.113.9") == "203.0.113.9"
    assert address_of("10.0.0.1", "198.51.100.7, 203.0.113.9") == "203.0.113.9"
    assert address_of("10.0.0.1", "2001:db8::1") == "2001:db8::1"
    assert address_of("10.0.0.1", "2001:DB8:0:0::1") == "2001:db8::1"
    assert address_of("10.0.0.1", None) == "10.0.0.1"
    for forged in [*FORGED, "", " "]:
        assert address_of("10.0.0.1", forged) == "10.0.0.1", forged


def test_without_trusted_proxies_the_forwarded_address_is_ignored(settings) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 0}

    assert address_of("10.0.0.1", "203.0.113.9") == "10.0.0.1"


def failed_login(forwarded: str):  # type: ignore[no-untyped-def]
    return Client().post(
        "/admin/login/",
        {"username": "root", "password": "wrong"},
        REMOTE_ADDR="10.0.0.1",
        HTTP_X_FORWARDED_FOR=forwarded,
    )


def test_forged_forwarded_addresses_lock_the_admin_login_at_the_connections_address(
    settings, json_lines
) -> None:
    get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-correct-123")
    settings.ADMIN_LOGIN_MAX_FAILURES = 3
    settings.LANGUAGE_CODE = "en"
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheKeyWarning)
        codes = [failed_login(forged).status_code for forged in FORGED[:3]]
        refused = failed_login("q" * 4000)

    assert codes == [200, 200, 200]
    assert refused.status_code == 429
    failed = [json.loads(line) for line in json_lines if "admin login failed" in line]
    assert {entry["client_address"] for entry in failed} == {"10.0.0.1"}

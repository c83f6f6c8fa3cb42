"""The admin's login: each failure is logged, too many lock the login for a while, and a
login lands on the console whatever `next` it was given."""

import json
import time

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client

from tests.test_metrics import scrape, value

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"
PASSWORD = "pw-root-correct-123"
REQUESTS = "diagnosis_http_requests_total"


@pytest.fixture(autouse=True)
def _fresh_counts(settings) -> None:
    settings.ADMIN_LOGIN_MAX_FAILURES = 10
    settings.ADMIN_LOGIN_LOCKOUT_SECONDS = 15 * 60
    settings.LANGUAGE_CODE = "en"
    cache.clear()


@pytest.fixture
def root():  # type: ignore[no-untyped-def]
    return get_user_model().objects.create_superuser("root", "root@example.com", PASSWORD)


def log_in(  # type: ignore[no-untyped-def]
    username: str, password: str, *, address: str = "10.0.0.1", query: str = "", **data: str
):
    """A POST of the login form; `data`'s HTTP_* items are headers, the rest form fields."""
    headers = {name: value for name, value in data.items() if name.startswith("HTTP_")}
    fields = {name: value for name, value in data.items() if name not in headers}
    return Client(REMOTE_ADDR=address, **headers).post(
        LOGIN + query, {"username": username, "password": password, **fields}
    )


def test_a_wrong_password_is_logged_with_the_username_and_address_but_never_the_password(
    root, json_lines
) -> None:
    log_in("root", "guess-number-one", address="10.0.0.7")

    lines = [json.loads(line) for line in json_lines]
    failed = [entry for entry in lines if entry["message"] == "admin login failed"]
    assert len(failed) == 1
    assert failed[0]["level"] == "WARNING"
    assert failed[0]["username"] == "root"
    assert failed[0]["client_address"] == "10.0.0.7"
    assert not any("guess-number-one" in line for line in json_lines)


def test_the_address_is_the_one_the_trusted_proxy_saw(root, json_lines, settings) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}

    log_in("root", "wrong", address="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.9")

    failed = [json.loads(line) for line in json_lines if "admin login failed" in line]
    assert failed[0]["client_address"] == "203.0.113.9"


def test_after_ten_failures_the_username_is_locked_even_with_the_right_password(
    root,
) -> None:
    codes = [log_in("root", f"wrong-{n}", address=f"10.0.1.{n}").status_code for n in range(10)]

    refused = log_in("root", PASSWORD, address="10.0.2.1")

    assert codes == [200] * 10
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    page = refused.content.decode()
    assert "Too many failed logins" in page
    assert 'id="login-form"' in page  # the admin's own login page, in its look
    assert "_auth_user_id" not in refused.client.session


def test_after_ten_failures_from_one_address_every_username_is_refused_there(root) -> None:
    for n in range(10):
        log_in(f"someone-{n}", "wrong", address="10.0.3.3")

    assert log_in("root", PASSWORD, address="10.0.3.3").status_code == 429
    assert log_in("root", PASSWORD, address="10.0.3.4").status_code == 302


def test_forty_wrong_passwords_in_a_row_are_mostly_refused_unchecked(root, json_lines) -> None:
    codes = [log_in("root", f"wrong-{n}").status_code for n in range(40)]

    assert codes.count(200) == 10
    assert codes.count(429) == 30
    refusals = [json.loads(line) for line in json_lines if "admin login refused" in line]
    assert len(refusals) == 30 and refusals[0]["username"] == "root"


def test_the_refusal_says_to_come_back_within_the_window(root) -> None:
    for n in range(10):
        log_in("root", f"wrong-{n}")

    assert 1 <= int(log_in("root", PASSWORD)["Retry-After"]) <= 15 * 60


@pytest.mark.slow
def test_the_lock_ends_when_the_window_has_passed(root, settings) -> None:
    settings.ADMIN_LOGIN_LOCKOUT_SECONDS = 1
    for n in range(10):
        log_in("root", f"wrong-{n}")
    assert log_in("root", PASSWORD).status_code == 429

    time.sleep(1.2)

    assert log_in("root", PASSWORD).status_code == 302


def test_a_successful_login_forgets_the_usernames_failures(root) -> None:
    for n in range(9):
        log_in("root", f"wrong-{n}", address=f"10.0.4.{n}")
    assert log_in("root", PASSWORD, address="10.0.5.1").status_code == 302

    codes = [log_in("root", f"wrong-{n}", address=f"10.0.6.{n}").status_code for n in range(9)]

    assert codes == [200] * 9


def test_the_usernames_count_ignores_letter_case(root) -> None:
    for n in range(10):
        log_in("ROOT" if n % 2 else "root", f"wrong-{n}", address=f"10.0.7.{n}")

    assert log_in("Root", PASSWORD, address="10.0.8.1").status_code == 429


@pytest.mark.parametrize("variant", ["root ", " root", "ｒｏｏｔ", "röot", "RÖÖT "])
def test_the_usernames_count_holds_for_every_spelling_that_logs_in_as_it(root, variant) -> None:
    # The form trims and NFKC-normalises a username, and MariaDB's collation matches it
    # without accents: each spelling is the same account, so it shares the lock.
    for n in range(10):
        log_in("root", f"guess-{n}", address=f"10.0.1.{n}")

    assert log_in(variant, PASSWORD, address="10.0.2.1").status_code == 429


def test_the_metrics_tell_failed_logins_and_lockouts_from_viewing_the_form(root) -> None:
    viewed = {"route": "admin:login", "method": "GET", "status": "200"}
    failed = {"route": "admin:login", "method": "POST", "status": "200"}
    signed_in = {"route": "admin:login", "method": "POST", "status": "302"}
    locked = {"route": "admin:login", "method": "POST", "status": "429"}
    before = scrape()

    Client().get(LOGIN)
    for n in range(11):
        log_in("root", f"wrong-{n}")

    after = scrape()
    counted = {
        name: value(after, REQUESTS, **labels) - value(before, REQUESTS, **labels)
        for name, labels in (
            ("viewed", viewed),
            ("failed", failed),
            ("signed_in", signed_in),
            ("locked", locked),
        )
    }
    assert counted == {"viewed": 1, "failed": 10, "signed_in": 0, "locked": 1}


def test_a_login_with_an_unsafe_next_lands_on_the_console(root) -> None:
    response = log_in("root", PASSWORD, query="?next=https://evil.example/")

    assert response.status_code == 302
    assert response["Location"] == "/admin/"


def test_a_login_with_a_safe_next_still_goes_there(root) -> None:
    response = log_in("root", PASSWORD, next="/admin/diagnosis/apikey/")

    assert response["Location"] == "/admin/diagnosis/apikey/"

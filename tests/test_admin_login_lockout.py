"""The admin's login: each failure is logged, too many lock the login for a while, and a
login lands on the console whatever `next` it was given.

Failures are counted per account at one address (the lock a guesser meets), per address
across accounts (spraying), and per account across addresses (distributed guessing, which
spares the browsers that signed in as the account before)."""

import importlib
import json
import sys
import time

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client

from tests.metrics_samples import scrape, value

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"
PASSWORD = "pw-root-correct-123"
REQUESTS = "diagnosis_http_requests_total"


@pytest.fixture(autouse=True)
def _fresh_counts(settings) -> None:
    settings.ADMIN_LOGIN_MAX_FAILURES = 10
    settings.ADMIN_LOGIN_MAX_FAILURES_PER_ADDRESS = 50
    # Three addresses' worth, not the default's ten, to keep the tests short.
    settings.ADMIN_LOGIN_MAX_FAILURES_PER_USERNAME = 30
    settings.ADMIN_LOGIN_LOCKOUT_SECONDS = 15 * 60
    settings.LANGUAGE_CODE = "en"
    cache.clear()


@pytest.fixture
def root():  # type: ignore[no-untyped-def]
    return get_user_model().objects.create_superuser("root", "root@example.com", PASSWORD)


def log_in(  # type: ignore[no-untyped-def]
    username: str,
    password: str,
    *,
    address: str = "10.0.0.1",
    query: str = "",
    browser: Client | None = None,
    **data: str,
):
    """A POST of the login form, from a fresh browser unless one is given; `data`'s
    HTTP_* items are headers, the rest form fields."""
    headers = {name: value for name, value in data.items() if name.startswith("HTTP_")}
    fields = {name: value for name, value in data.items() if name not in headers}
    browser = browser or Client()
    return browser.post(
        LOGIN + query,
        {"username": username, "password": password, **fields},
        REMOTE_ADDR=address,
        **headers,
    )


def fail_from_many_addresses(username: str, failures: int, *, first: int = 0) -> None:
    """`failures` wrong passwords for `username`, ten from each address (192.0.2.`first`
    and on): each is answered, none locks the account at its address."""
    for n in range(failures):
        address = f"192.0.2.{first + n // 10}"
        assert log_in(username, f"wrong-{n}", address=address).status_code == 200


def logged(json_lines, message: str) -> list[dict]:  # type: ignore[no-untyped-def]
    return [entry for entry in map(json.loads, json_lines) if entry["message"] == message]


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


def test_ten_wrong_passwords_from_one_address_lock_that_account_at_that_address(root) -> None:
    codes = [log_in("root", f"wrong-{n}", address="10.0.1.1").status_code for n in range(10)]

    refused = log_in("root", PASSWORD, address="10.0.1.1")

    assert codes == [200] * 10
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    page = refused.content.decode()
    assert "Too many failed logins" in page
    assert 'id="login-form"' in page  # the admin's own login page, in its look
    assert "_auth_user_id" not in refused.client.session


def test_a_strangers_ten_wrong_passwords_do_not_lock_the_operator_out_at_their_own_address(
    root,
) -> None:
    for n in range(10):
        log_in("root", f"wrong-{n}", address="198.51.100.7")

    assert log_in("root", PASSWORD, address="198.51.100.7").status_code == 429
    assert log_in("root", PASSWORD, address="10.0.2.1").status_code == 302


def test_a_guesser_locked_out_of_one_account_may_still_sign_in_to_another_there(root) -> None:
    for n in range(10):
        log_in("someone", f"wrong-{n}", address="10.0.3.3")

    assert log_in("someone", "wrong", address="10.0.3.3").status_code == 429
    assert log_in("root", PASSWORD, address="10.0.3.3").status_code == 302


def test_fifty_wrong_passwords_sprayed_across_accounts_lock_the_address(root) -> None:
    # Five guesses at each of ten accounts: no account is locked at the address, the
    # address is.
    codes = [
        log_in(f"someone-{n % 10}", "wrong", address="10.0.3.3").status_code for n in range(50)
    ]

    assert codes == [200] * 50
    assert log_in("root", PASSWORD, address="10.0.3.3").status_code == 429
    assert log_in("root", PASSWORD, address="10.0.3.4").status_code == 302


def test_a_login_does_not_forget_its_addresss_failures_across_accounts(root) -> None:
    for n in range(49):
        log_in(f"someone-{n % 10}", "wrong", address="10.0.3.3")
    assert log_in("root", PASSWORD, address="10.0.3.3").status_code == 302

    assert log_in("someone-9", "wrong", address="10.0.3.3").status_code == 200
    assert log_in("root", PASSWORD, address="10.0.3.3").status_code == 429


def test_thirty_failures_from_three_addresses_lock_the_account_for_browsers_new_to_it(
    root,
) -> None:
    fail_from_many_addresses("root", 30)

    refused = log_in("root", PASSWORD, address="10.0.9.9")

    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 15 * 60


def test_twenty_nine_failures_from_three_addresses_do_not_lock_the_account(root) -> None:
    fail_from_many_addresses("root", 29)

    assert log_in("root", PASSWORD, address="10.0.9.9").status_code == 302


def test_a_browser_that_signed_in_as_the_account_before_still_gets_in_while_it_is_locked(
    root, settings
) -> None:
    operators = Client()
    assert log_in("root", PASSWORD, address="10.0.9.9", browser=operators).status_code == 302
    del operators.cookies[settings.SESSION_COOKIE_NAME]  # signed out since

    fail_from_many_addresses("ROOT", 30)

    assert log_in("root", PASSWORD, address="10.0.9.9", browser=operators).status_code == 302
    # from anywhere (a laptop moves), and signing in does not lift the lock for the others
    assert log_in("root", PASSWORD, address="10.0.8.8", browser=operators).status_code == 302
    assert log_in("root", PASSWORD, address="10.0.9.9").status_code == 429


def test_only_a_login_leaves_the_trust_cookie_and_only_the_login_page_reads_it(root) -> None:
    assert "admin_login_trusted" not in log_in("root", "wrong").cookies

    cookie = log_in("root", PASSWORD).cookies["admin_login_trusted"]

    assert cookie["path"] == LOGIN
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Strict"
    assert "root" not in cookie.value


def test_a_browser_that_signed_in_as_another_account_is_locked_out_of_this_one(root) -> None:
    get_user_model().objects.create_superuser("alice", "alice@example.com", "pw-alice-123")
    alices = Client()
    assert log_in("alice", "pw-alice-123", address="10.0.9.9", browser=alices).status_code == 302

    fail_from_many_addresses("root", 30)

    assert log_in("root", PASSWORD, address="10.0.9.9", browser=alices).status_code == 429


def test_a_browser_that_signed_in_as_two_accounts_is_spared_for_both(root) -> None:
    get_user_model().objects.create_superuser("alice", "alice@example.com", "pw-alice-123")
    operators = Client()
    assert log_in("root", PASSWORD, address="10.0.9.9", browser=operators).status_code == 302
    assert log_in("alice", "pw-alice-123", browser=operators).status_code == 302

    fail_from_many_addresses("root", 30)

    assert log_in("root", PASSWORD, address="10.0.9.9", browser=operators).status_code == 302


def test_a_browser_that_signed_in_before_is_still_locked_after_ten_failures_of_its_own(
    root,
) -> None:
    operators = Client()
    assert log_in("root", PASSWORD, browser=operators).status_code == 302

    for n in range(10):
        log_in("root", f"wrong-{n}", browser=operators)

    assert log_in("root", PASSWORD, browser=operators).status_code == 429


def test_a_forged_trust_cookie_is_ignored(root) -> None:
    forger = Client()
    forger.cookies["admin_login_trusted"] = "root"
    fail_from_many_addresses("root", 30)

    assert log_in("root", PASSWORD, address="10.0.9.9", browser=forger).status_code == 429


def test_forty_wrong_passwords_in_a_row_are_mostly_refused_unchecked(root, json_lines) -> None:
    codes = [log_in("root", f"wrong-{n}").status_code for n in range(40)]

    assert codes.count(200) == 10
    assert codes.count(429) == 30
    refusals = logged(json_lines, "admin login refused: too many failed logins")
    assert len(refusals) == 30 and refusals[0]["username"] == "root"


def test_the_failure_that_reaches_a_limit_says_which(root, json_lines) -> None:
    for n in range(10):
        log_in("Root", f"wrong-{n}", address="10.0.1.1")

    failed = logged(json_lines, "admin login failed")
    assert [entry.get("limit") for entry in failed] == [None] * 9 + ["username_address"]
    assert failed[-1]["username"] == "Root" and failed[-1]["client_address"] == "10.0.1.1"
    assert not any("wrong-" in line for line in json_lines)


@pytest.mark.parametrize(
    ("fail", "limit"),
    [
        (
            lambda: [log_in("root", f"w{n}", address="10.0.1.1") for n in range(10)],
            "username_address",
        ),
        (lambda: [log_in(f"u{n % 10}", "w", address="10.0.1.1") for n in range(50)], "address"),
        (lambda: fail_from_many_addresses("root", 30), "username"),
    ],
    ids=["username-at-address", "address", "username"],
)
def test_each_refusal_says_which_limit_holds_it(root, json_lines, fail, limit) -> None:
    fail()

    log_in("ROOT", "not-checked", address="10.0.1.1")

    [refusal] = logged(json_lines, "admin login refused: too many failed logins")
    assert refusal["level"] == "WARNING"
    assert refusal["limit"] == limit
    assert refusal["username"] == "ROOT" and refusal["client_address"] == "10.0.1.1"
    assert 1 <= refusal["retry_after"] <= 15 * 60
    assert not any("not-checked" in line for line in json_lines)


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


def test_a_successful_login_forgets_the_failures_at_its_address(root) -> None:
    for n in range(9):
        log_in("root", f"wrong-{n}", address="10.0.4.4")
    assert log_in("root", PASSWORD, address="10.0.4.4").status_code == 302

    codes = [log_in("root", f"wrong-{n}", address="10.0.4.4").status_code for n in range(10)]

    assert codes == [200] * 10
    assert log_in("root", PASSWORD, address="10.0.4.4").status_code == 429


def test_the_usernames_count_ignores_letter_case(root) -> None:
    for n in range(10):
        log_in("ROOT" if n % 2 else "root", f"wrong-{n}", address="10.0.7.7")

    assert log_in("Root", PASSWORD, address="10.0.7.7").status_code == 429


@pytest.mark.parametrize("variant", ["root ", " root", "ｒｏｏｔ", "röot", "RÖÖT "])
def test_the_usernames_count_holds_for_every_spelling_that_logs_in_as_it(root, variant) -> None:
    # The form trims and NFKC-normalises a username, and MariaDB's collation matches it
    # without accents: each spelling is the same account, so it shares the lock.
    for n in range(10):
        log_in("root", f"guess-{n}", address="10.0.1.1")

    assert log_in(variant, PASSWORD, address="10.0.1.1").status_code == 429


@pytest.mark.parametrize("variant", ["ROOT", "ｒｏｏｔ", "röot"])
def test_every_spelling_counts_towards_the_accounts_limit_across_addresses(root, variant) -> None:
    fail_from_many_addresses("root", 20)
    fail_from_many_addresses(variant, 10, first=2)

    assert log_in("root", PASSWORD, address="10.0.9.9").status_code == 429


def test_the_address_and_username_limits_default_to_multiples_of_the_pairs(monkeypatch) -> None:
    for name in ("_PER_ADDRESS", "_PER_USERNAME", ""):
        monkeypatch.delenv(f"ADMIN_LOGIN_MAX_FAILURES{name}", raising=False)
    monkeypatch.delitem(sys.modules, "config.security_settings")

    defaults = importlib.import_module("config.security_settings")

    assert defaults.ADMIN_LOGIN_MAX_FAILURES == 10
    assert defaults.ADMIN_LOGIN_MAX_FAILURES_PER_ADDRESS == 50
    assert defaults.ADMIN_LOGIN_MAX_FAILURES_PER_USERNAME == 100

    monkeypatch.setenv("ADMIN_LOGIN_MAX_FAILURES", "4")
    monkeypatch.delitem(sys.modules, "config.security_settings")
    stricter = importlib.import_module("config.security_settings")

    assert stricter.ADMIN_LOGIN_MAX_FAILURES_PER_ADDRESS == 20
    assert stricter.ADMIN_LOGIN_MAX_FAILURES_PER_USERNAME == 40


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

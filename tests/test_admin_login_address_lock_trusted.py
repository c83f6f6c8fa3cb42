"""The admin login's address lock and the browsers that signed in before.

Failures over many accounts from one address lock that address (spraying). Behind an
office's NAT every operator shares it, so a browser whose trusted cookie names the account
it signs in as is spared that lock; every other browser there, and the same browser for
any other account, is held as before, and the account's own limit at the address still
holds for everyone."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"
OFFICE = "203.0.113.10"  # the one address an office's NAT shows for all of it
ALICE_PASSWORD = "pw-alice-correct-123"
BOB_PASSWORD = "pw-bob-correct-123"


@pytest.fixture(autouse=True)
def _fresh_counts(settings) -> None:
    settings.ADMIN_LOGIN_MAX_FAILURES = 10
    # Twice the pair's, not the default's five times, to keep the tests short.
    settings.ADMIN_LOGIN_MAX_FAILURES_PER_ADDRESS = 20
    settings.ADMIN_LOGIN_MAX_FAILURES_PER_USERNAME = 100
    settings.ADMIN_LOGIN_LOCKOUT_SECONDS = 15 * 60
    settings.LANGUAGE_CODE = "en"
    cache.clear()


@pytest.fixture(autouse=True)
def _operators() -> None:
    users = get_user_model().objects
    users.create_superuser("ops.alice", "alice@example.com", ALICE_PASSWORD)
    users.create_superuser("ops.bob", "bob@example.com", BOB_PASSWORD)


def log_in(  # type: ignore[no-untyped-def]
    username: str, password: str, *, browser: Client | None = None, address: str = OFFICE
):
    """A POST of the login form, from a fresh browser unless one is given."""
    browser = browser or Client()
    return browser.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address)


@pytest.fixture
def alices_browser(settings) -> Client:
    """The browser ops.alice signs in from every day: it has signed in as her at the
    office, and signed out since (its trusted cookie is all that is left)."""
    browser = Client()
    assert log_in("ops.alice", ALICE_PASSWORD, browser=browser).status_code == 302
    del browser.cookies[settings.SESSION_COOKIE_NAME]
    return browser


def spray(failures: int, *, address: str = OFFICE) -> None:
    """`failures` wrong passwords over five accounts that are not the operators', none
    reaching the limit of an account at the address."""
    for n in range(failures):
        assert log_in(f"someone-{n % 5}", f"wrong-{n}", address=address).status_code == 200


def refusals(json_lines) -> list[dict]:  # type: ignore[no-untyped-def]
    message = "admin login refused: too many failed logins"
    return [entry for entry in map(json.loads, json_lines) if entry["message"] == message]


def test_an_operator_whose_browser_signed_in_as_her_before_gets_in_while_the_address_is_locked(
    alices_browser,
) -> None:
    spray(20)

    assert log_in("ops.alice", ALICE_PASSWORD, browser=alices_browser).status_code == 302


def test_the_same_browser_is_still_refused_for_an_account_it_never_signed_in_as(
    alices_browser,
) -> None:
    spray(20)

    refused = log_in("ops.bob", BOB_PASSWORD, browser=alices_browser)

    assert refused.status_code == 429
    assert "Too many failed logins" in refused.content.decode()


def test_a_browser_that_never_signed_in_is_still_refused_for_the_operators_account(
    alices_browser,
) -> None:
    spray(20)

    assert log_in("ops.alice", ALICE_PASSWORD).status_code == 429


def test_a_forged_cookie_naming_the_account_does_not_spare_the_address_lock(
    alices_browser,
) -> None:
    forger = Client()
    forger.cookies["admin_login_trusted"] = (
        alices_browser.cookies["admin_login_trusted"].value + "x"
    )
    spray(20)

    assert log_in("ops.alice", ALICE_PASSWORD, browser=forger).status_code == 429


def test_ten_failures_of_the_account_at_the_address_lock_it_there_even_for_the_trusted_browser(
    alices_browser, json_lines
) -> None:
    for n in range(10):
        assert log_in("ops.alice", f"guess-{n}").status_code == 200

    refused = log_in("ops.alice", ALICE_PASSWORD, browser=alices_browser)

    assert refused.status_code == 429
    assert [entry["limit"] for entry in refusals(json_lines)] == ["username_address"]
    # the address itself is not locked: another operator there still gets in
    assert log_in("ops.bob", BOB_PASSWORD).status_code == 302


def test_a_refusal_of_the_trusted_browser_names_only_the_lock_that_holds_it(
    alices_browser, json_lines
) -> None:
    for n in range(10):
        log_in("ops.alice", f"guess-{n}")
    spray(10)  # twenty failures at the address: it is locked too

    assert log_in("ops.alice", ALICE_PASSWORD, browser=alices_browser).status_code == 429
    assert log_in("ops.alice", ALICE_PASSWORD).status_code == 429

    trusted, stranger = refusals(json_lines)
    assert trusted["limit"] == "username_address"
    assert stranger["limit"] == "username_address,address"


def test_the_trusted_browsers_own_failures_still_count_towards_the_address_lock(
    alices_browser,
) -> None:
    spray(19)
    assert log_in("ops.alice", "a-typo", browser=alices_browser).status_code == 200

    assert log_in("ops.bob", BOB_PASSWORD).status_code == 429
    assert log_in("ops.alice", ALICE_PASSWORD, browser=alices_browser).status_code == 302


def test_the_trusted_browser_signing_in_does_not_lift_the_address_lock_for_the_others(
    alices_browser,
) -> None:
    spray(20)

    assert log_in("ops.alice", ALICE_PASSWORD, browser=alices_browser).status_code == 302
    assert log_in("ops.bob", BOB_PASSWORD).status_code == 429
    assert log_in("someone-0", "wrong", address=OFFICE).status_code == 429

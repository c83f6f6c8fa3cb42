"""A new API key is shown once, on the page that answers its form, and is kept nowhere
but as its hash: in no cookie, in no session row, in no message for the next page."""

import re
import zlib

import pytest
from django.contrib.admin.utils import quote
from django.contrib.sessions.models import Session
from django.core import signing
from django.urls import reverse

from diagnosis.models import ApiKey

pytestmark = pytest.mark.django_db

ADD = "/admin/diagnosis/apikey/add/"
LIST = "/admin/diagnosis/apikey/"
NEW_AGENT = {"name": "new-agent", "scope": "agent", "expiry_date_0": "", "expiry_date_1": ""}


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


def secret_shaped(key: ApiKey) -> re.Pattern[str]:
    """The key's secret: its prefix, a dot, 32 letters and digits (its primary key, which
    links to its page, is the prefix, a dot and the hash: `sha512$$…`)."""
    return re.compile(rf"{re.escape(key.prefix)}\.[A-Za-z0-9]{{32}}")


def secret_on(page: str, key: ApiKey) -> str:
    return secret_shaped(key).search(page).group()


def page_of(key: ApiKey) -> str:
    return reverse("admin:diagnosis_apikey_change", args=[quote(key.pk)])


def text_of(page: str) -> str:
    return re.sub(r"<[^>]+>", "", page)


def test_adding_a_key_shows_it_on_the_page_that_answers_the_form(admin_client) -> None:
    added = admin_client.post(ADD, NEW_AGENT)

    assert added.status_code == 200, added.content.decode()[:2000]
    page = added.content.decode()
    key = ApiKey.objects.get(name="new-agent")
    secret = secret_on(page, key)
    assert ApiKey.objects.get_from_key(secret) == key
    assert page.count(secret) == 1


def test_a_new_keys_secret_is_in_no_session_row(admin_client) -> None:
    admin_client.post(ADD, NEW_AGENT)  # and the redirect, if any, never followed
    key = ApiKey.objects.get(name="new-agent")

    sessions = list(Session.objects.all())
    assert sessions  # the admin's own session, signed in
    for session in sessions:
        stored = as_anyone_reads_it(session.session_data) + repr(session.get_decoded())
        assert not secret_shaped(key).search(stored)


def test_a_new_keys_secret_travels_in_no_cookie_and_on_no_later_page(admin_client) -> None:
    added = admin_client.post(ADD, NEW_AGENT)
    key = ApiKey.objects.get(name="new-agent")
    secret = secret_on(added.content.decode(), key)

    later = [admin_client.get(LIST), admin_client.get(page_of(key))]

    for response in (added, *later):
        for cookie in response.cookies.values():
            assert secret not in as_anyone_reads_it(cookie.value)
    for response in later:
        assert response.status_code == 200
        assert secret not in response.content.decode()
        assert key.prefix in response.content.decode()


def test_the_page_showing_a_new_key_is_never_cached(admin_client) -> None:
    added = admin_client.post(ADD, NEW_AGENT)

    assert "no-store" in added["Cache-Control"]
    assert "private" in added["Cache-Control"]


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", "The API key for new-agent is: {}. Please store it somewhere safe"),
        ("zh-hans", "“new-agent”的 API 密钥是：{}。请妥善保存：此后无法再次查看。"),
    ],
)
def test_the_new_key_is_said_once_in_the_consoles_language(
    admin_client, settings, language, said
) -> None:
    settings.LANGUAGE_CODE = language

    page = admin_client.post(ADD, NEW_AGENT).content.decode()

    key = ApiKey.objects.get(name="new-agent")
    secret = secret_on(page, key)
    assert said.format(secret) in text_of(page)


def test_the_page_says_the_key_was_made_and_links_to_it_and_to_the_list(
    admin_client, admin_in_english
) -> None:
    page = admin_client.post(ADD, NEW_AGENT).content.decode()

    key = ApiKey.objects.get(name="new-agent")
    assert "The API key “new-agent” was added successfully." in text_of(page)
    assert f'href="{page_of(key)}"' in page
    assert f'href="{LIST}"' in page
    assert f'href="{ADD}"' in page
    # Saving the add form again (back, then save) makes a second key: the page says so.
    assert "creates another key" in page
    assert "admin/base_site.html" in [t.name for t in admin_client.post(ADD, NEW_AGENT).templates]


@pytest.mark.parametrize("button", ["_save", "_continue", "_addanother"])
def test_each_save_button_shows_the_new_key_rather_than_leaving_the_page(
    admin_client, button
) -> None:
    added = admin_client.post(ADD, {**NEW_AGENT, button: "1"})

    assert added.status_code == 200
    secret_on(added.content.decode(), ApiKey.objects.get(name="new-agent"))


def test_a_new_key_leaves_no_message_for_the_next_page(admin_client, admin_in_english) -> None:
    admin_client.post(ADD, NEW_AGENT)

    next_page = admin_client.get(LIST).content.decode()

    assert "was added successfully" not in next_page
    assert "Please store it somewhere safe" not in next_page


def test_sending_the_add_form_again_makes_a_second_key_with_its_own_secret(
    admin_client,
) -> None:
    # As a reload of the page (the browser sends the POST again) or back-and-save does:
    # there is no redirect to land on any more, and the page says so.
    first = admin_client.post(ADD, NEW_AGENT).content.decode()
    second = admin_client.post(ADD, NEW_AGENT).content.decode()

    first_key, second_key = ApiKey.objects.filter(name="new-agent").order_by("created")
    assert secret_on(first, first_key) != secret_on(second, second_key)
    assert ApiKey.objects.get_from_key(secret_on(first, first_key)) == first_key


def test_a_new_keys_secret_is_not_in_the_admins_history(admin_client) -> None:
    from django.contrib.admin.models import LogEntry

    admin_client.post(ADD, NEW_AGENT)
    key = ApiKey.objects.get(name="new-agent")

    entry = LogEntry.objects.get(object_id=key.pk)
    assert not secret_shaped(key).search(f"{entry.object_repr} {entry.change_message}")

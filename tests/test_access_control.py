"""Who gets in where: staff only in the admin, CSRF on every admin form."""

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db


def _changelists() -> list[str]:
    return sorted(
        reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        for model in admin.site._registry
    )


@pytest.mark.parametrize("url", ["/admin/", *_changelists()])
def test_anonymous_visitors_are_sent_to_the_login_page(client, url) -> None:
    response = client.get(url)

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


@pytest.mark.parametrize("url", ["/admin/", *_changelists()])
def test_users_who_are_not_staff_cannot_get_in(client, url) -> None:
    user = get_user_model().objects.create_user("viewer", password="pw-viewer-123")
    client.force_login(user)

    response = client.get(url)

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_admin_forms_refuse_a_post_without_the_csrf_token() -> None:
    get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-123")
    browser = Client(enforce_csrf_checks=True)

    response = browser.post("/admin/login/", {"username": "root", "password": "pw-root-123"})

    assert response.status_code == 403
    assert "_auth_user_id" not in browser.session


def test_an_api_key_does_not_open_the_admin(client, make_client) -> None:
    api = make_client("full")

    response = client.get("/admin/", HTTP_AUTHORIZATION=f"Api-Key {api.raw_key}")

    assert response.status_code == 302

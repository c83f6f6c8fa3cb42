"""The console's pages that only use the cache to go faster (the overview, the
attribution) and its sign-in answer while the cache (Redis) cannot be reached: an operator
needs the console most during an outage. The API, which keeps its keys and limits there,
answers 503 meanwhile."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.processes import free_port

pytestmark = pytest.mark.django_db

PASSWORD = "pw-root-correct-123"


@pytest.fixture
def cache_down(settings):  # type: ignore[no-untyped-def]
    settings.CACHES = {
        "default": {
            "BACKEND": "config.cache_backend.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{free_port()}/0",
        }
    }


@pytest.mark.parametrize("page", ["/admin/overview/", "/admin/overview/attribution/"])
def test_the_overview_pages_answer_while_the_cache_is_down(admin_client, cache_down, page) -> None:
    response = admin_client.get(page)

    assert response.status_code == 200


def test_an_operator_signs_in_while_the_cache_is_down_and_it_is_logged(
    cache_down, json_lines
) -> None:
    get_user_model().objects.create_superuser("root", "root@example.com", PASSWORD)

    response = Client().post("/admin/login/", {"username": "root", "password": PASSWORD})

    assert response.status_code == 302
    lines = [json.loads(line) for line in json_lines]
    assert any(
        line["level"] == "WARNING" and "failed logins are not counted" in line["message"]
        for line in lines
    )


def test_a_wrong_password_while_the_cache_is_down_is_refused_as_usual(cache_down) -> None:
    get_user_model().objects.create_superuser("root", "root@example.com", PASSWORD)

    response = Client().post("/admin/login/", {"username": "root", "password": "wrong"})

    assert response.status_code == 200
    assert response.wsgi_request.user.is_anonymous

"""Every /api/ endpoint needs a valid key of the right scope; keys are stored hashed."""

import io

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from diagnosis.models import ApiKey, DiagnosisSession
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    ("post", "/api/sessions", {"query": "q"}),
    ("get", "/api/sessions", None),
    ("get", "/api/sessions/s-1", None),
    ("post", "/api/sessions/s-1/tool-invocations", {"toolName": "t", "status": "SUCCESS"}),
    ("post", "/api/sessions/s-1/complete", {"status": "FAILED"}),
    ("get", "/api/cases", None),
    ("get", "/api/cases/00000000-0000-4000-8000-000000000000", None),
]


def _call(client: APIClient, method: str, url: str, body: object):  # type: ignore[no-untyped-def]
    return (
        getattr(client, method)(url, body, format="json") if body else getattr(client, method)(url)
    )


@pytest.fixture(autouse=True)
def session():  # type: ignore[no-untyped-def]
    return DiagnosisSessionFactory(session_id="s-1")


@pytest.mark.parametrize(("method", "url", "body"), ENDPOINTS)
@pytest.mark.parametrize(
    "header",
    [
        None,
        "Api-Key",
        "Api-Key not-a-key",
        "Api-Key AbCdEfGh.0123456789abcdef0123456789abcdef",
        "Bearer something",
        "Token abc",
    ],
)
def test_missing_or_wrong_keys_are_401_and_write_nothing(method, url, body, header) -> None:
    client = APIClient()
    if header:
        client.credentials(HTTP_AUTHORIZATION=header)

    response = _call(client, method, url, body)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Api-Key"
    assert set(response.json()) == {"success", "message", "code"}
    assert response.json()["success"] is False
    assert DiagnosisSession.objects.count() == 1
    assert DiagnosisSession.objects.get().status == "RUNNING"


@pytest.mark.parametrize(("method", "url", "body"), ENDPOINTS)
def test_a_revoked_key_is_401(make_client, method, url, body) -> None:
    client = make_client("full")
    client.api_key.revoked = True
    client.api_key.save()

    assert _call(client, method, url, body).status_code == 401


@pytest.mark.parametrize(("method", "url", "body"), ENDPOINTS)
def test_a_frontend_key_cannot_ingest_or_read(make_client, method, url, body) -> None:
    response = _call(make_client("frontend"), method, url, body)

    assert response.status_code == 403
    assert response.json() == {
        "success": False,
        "message": "该 API Key 的权限范围不允许此操作",
        "code": "permission_denied",
    }


def test_an_agent_key_can_ingest_and_read(make_client) -> None:
    client = make_client("agent")
    CaseLibraryFactory()

    assert client.post("/api/sessions", {"query": "q"}, format="json").status_code == 201
    assert client.get("/api/sessions/s-1").status_code == 200
    assert client.get("/api/cases").status_code == 200


def test_keys_are_stored_hashed_and_printed_once_by_the_command() -> None:
    out, err = io.StringIO(), io.StringIO()

    call_command("create_api_key", "agent-prod", "--scope", "agent", stdout=out, stderr=err)

    key = out.getvalue().strip()
    stored = ApiKey.objects.get(name="agent-prod")
    assert stored.scope == "agent"
    assert key.startswith(stored.prefix + ".")
    assert key not in stored.hashed_key and key.split(".")[1] not in stored.hashed_key
    assert stored.hashed_key.startswith("sha512$$")
    assert key not in err.getvalue()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
    assert client.get("/api/sessions/s-1").status_code == 200


def test_the_schema_and_docs_need_no_key() -> None:
    client = APIClient()

    assert client.get("/api/schema").status_code == 200
    assert client.get("/api/docs").status_code == 200

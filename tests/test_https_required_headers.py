"""The 403 `https_required` refusals (/api/..., /v1/traces) are answered before
SecurityMiddleware, yet carry the headers it gives every other answer, from the same
settings: X-Content-Type-Options, Referrer-Policy, Cross-Origin-Opener-Policy. No
Strict-Transport-Security: that header is for answers over HTTPS only."""

import pytest
from django.test import Client

from tests.otlp import JSON, export, new_span_id, new_trace_id, otlp_json, post, span

pytestmark = pytest.mark.django_db

SECURITY_HEADERS = ("X-Content-Type-Options", "Referrer-Policy", "Cross-Origin-Opener-Policy")


@pytest.fixture(autouse=True)
def production_redirect(settings) -> None:  # type: ignore[no-untyped-def]
    settings.SECURE_SSL_REDIRECT = True


def one_span():  # type: ignore[no-untyped-def]
    return export(span("agent", trace_id=new_trace_id(), span_id=new_span_id()))


def refused_api_request(api):  # type: ignore[no-untyped-def]
    return api.post("/api/sessions", {"query": "disk full"}, format="json")


def refused_feedback(api):  # type: ignore[no-untyped-def]
    return api.post("/api/feedback", {"sessionId": "s", "feedback": "useful"}, format="json")


def refused_otlp_export(api):  # type: ignore[no-untyped-def]
    return post(Client(), one_span(), key=api.raw_key)


def refused_otlp_json_export(api):  # type: ignore[no-untyped-def]
    return Client().post(
        "/v1/traces",
        otlp_json(one_span()),
        content_type=JSON,
        HTTP_AUTHORIZATION=f"Api-Key {api.raw_key}",
    )


def security_headers(response) -> dict[str, str | None]:  # type: ignore[no-untyped-def]
    return {name: response.headers.get(name) for name in SECURITY_HEADERS}


REFUSALS = [refused_api_request, refused_feedback, refused_otlp_export, refused_otlp_json_export]


@pytest.mark.parametrize("refused", REFUSALS)
def test_a_refusal_carries_the_security_headers_an_answer_over_https_gets(api, refused) -> None:
    answered_over_https = Client().get("/api/sessions/s", secure=True)

    response = refused(api)

    assert response.status_code == 403
    expected = security_headers(answered_over_https)
    assert all(expected.values()), expected
    assert security_headers(response) == expected


@pytest.mark.parametrize("refused", REFUSALS)
def test_the_refusal_s_headers_follow_the_security_settings(api, settings, refused) -> None:
    settings.SECURE_CONTENT_TYPE_NOSNIFF = False
    settings.SECURE_REFERRER_POLICY = ["no-referrer", "strict-origin-when-cross-origin"]
    settings.SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin-allow-popups"

    response = refused(api)

    assert response.status_code == 403
    assert security_headers(response) == {
        "X-Content-Type-Options": None,
        "Referrer-Policy": "no-referrer,strict-origin-when-cross-origin",
        "Cross-Origin-Opener-Policy": "same-origin-allow-popups",
    }


@pytest.mark.parametrize("refused", REFUSALS)
def test_a_refusal_over_plain_http_sends_no_strict_transport_security(
    api, settings, refused
) -> None:
    settings.SECURE_HSTS_SECONDS = 31536000

    response = refused(api)

    assert response.status_code == 403
    assert "Strict-Transport-Security" not in response.headers

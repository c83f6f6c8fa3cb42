"""/v1/traces when the database or the cache cannot be reached: 503 with Retry-After, in
OTLP form (a google.rpc.Status in the request's encoding), never the plain-text 503 of
other paths."""

import json
import logging
import urllib.error
import urllib.request

import pytest
from django.test import Client
from google.protobuf import json_format
from google.rpc.status_pb2 import Status

from diagnosis.models import DiagnosisSession, Span
from tests.otlp import JSON, PROTOBUF, export, new_trace_id, otlp_json, post, span
from tests.processes import child_env, free_port, start_gunicorn, stop_group


# A MySQL/MariaDB URL whose server is not there: the driver cannot connect.
@pytest.mark.mysql
@pytest.mark.integration
def test_spans_sent_while_the_database_is_unreachable_get_503_and_retry_after(tmp_path):
    env = child_env(DATABASE_URL=f"mysql://root@127.0.0.1:{free_port()}/nowhere")
    log = (tmp_path / "gunicorn.log").open("w")
    web, base = start_gunicorn(env, workers=1, log=log)
    try:
        body = export(span("agent", trace_id=new_trace_id())).SerializeToString()
        request = urllib.request.Request(
            f"{base}/v1/traces",
            data=body,
            method="POST",
            headers={
                "Content-Type": PROTOBUF,
                "Authorization": "Api-Key AAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB",
            },
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
    finally:
        stop_group(web)
        log.close()

    assert refused.value.code == 503
    assert refused.value.headers["Retry-After"] == "5"
    assert refused.value.headers["Content-Type"] == PROTOBUF
    assert Status.FromString(refused.value.read()).message


# --- The cache (REDIS_URL) out of reach: in process, on any database ----------------------

UNREACHABLE_CACHE = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",
    }
}


def _status_of(response) -> Status:  # type: ignore[no-untyped-def]
    if response["Content-Type"].startswith(JSON):
        return json_format.Parse(response.content, Status())
    return Status.FromString(response.content)


@pytest.mark.django_db
@pytest.mark.parametrize("content_type", [PROTOBUF, JSON], ids=["protobuf", "json"])
def test_spans_sent_while_the_cache_is_unreachable_get_an_otlp_503_and_retry_after(
    make_client, settings, content_type
) -> None:
    key = make_client("agent").raw_key
    settings.CACHES = UNREACHABLE_CACHE
    run = export(span("agent", trace_id=new_trace_id(), attributes={"session.id": "c-1"}))
    body = json.dumps(otlp_json(run)).encode() if content_type == JSON else run

    response = post(Client(), body, key=key, content_type=content_type)

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response["Content-Type"] == content_type
    status = _status_of(response)
    assert (status.code, status.message) == (14, "服务暂不可用，请稍后重试")  # UNAVAILABLE
    assert not (DiagnosisSession.objects.exists() or Span.objects.exists())


@pytest.mark.django_db
def test_spans_refused_for_an_outage_log_one_error_a_minute_not_two_per_batch(
    make_client, settings, caplog, monkeypatch
) -> None:
    from config import middleware

    monkeypatch.setattr(middleware, "_outage_log", middleware._OutageLog())
    key = make_client("agent").raw_key
    settings.CACHES = UNREACHABLE_CACHE
    run = export(span("agent", trace_id=new_trace_id(), attributes={"session.id": "c-2"}))

    with caplog.at_level(logging.INFO):
        statuses = [post(Client(), run, key=key).status_code for _ in range(5)]

    assert statuses == [503] * 5
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [(r.name, r.getMessage().split(":")[0]) for r in errors] == [
        ("config.middleware", "cache unavailable")
    ]

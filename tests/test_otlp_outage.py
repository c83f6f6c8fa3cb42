"""/v1/traces when the database cannot be reached: 503 with Retry-After, in OTLP form."""

import urllib.error
import urllib.request

import pytest
from google.rpc.status_pb2 import Status

from tests.otlp import PROTOBUF, export, new_trace_id, span
from tests.processes import child_env, free_port, start_gunicorn, stop_group

# A MySQL/MariaDB URL whose server is not there: the driver cannot connect.
pytestmark = [pytest.mark.mysql, pytest.mark.integration]


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

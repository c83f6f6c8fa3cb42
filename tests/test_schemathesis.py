"""Property-based fuzzing of every endpoint from its own OpenAPI schema: no 5xx, and every
response (success or error) matches what the schema documents."""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

from config.wsgi import application
from diagnosis.models import ApiKey
from tests.factories import DiagnosisSessionFactory, ToolInvocationFactory

schema = schemathesis.from_wsgi(
    "/api/schema",
    application,
    data_generation_methods=[
        schemathesis.DataGenerationMethod.positive,
        schemathesis.DataGenerationMethod.negative,
    ],
)

pytestmark = pytest.mark.slow

_KEY: dict[str, str] = {}


@schema.hook
def filter_query(context, query) -> bool:  # type: ignore[no-untyped-def]
    """Drops generated query parts that are not what the case claims to test: a parameter
    with an empty name or an empty list serializes to nothing, and a name the operation
    does not define is ignored like by any HTTP API; either way a "negative" case built
    from one is a valid request, and a 200 for it is right."""
    if not query:
        return True
    known = {parameter.name for parameter in context.operation.query}
    return all(name in known and value != [] for name, value in query.items())


@schema.auth()
class ApiKeyHeader:
    """Sends a valid key; schemathesis also tries without it (and expects 401)."""

    def get(self, case, context) -> str:  # type: ignore[no-untyped-def]
        return _KEY["value"]

    def set(self, case, data: str, context) -> None:  # type: ignore[no-untyped-def]
        case.headers = {**(case.headers or {}), "Authorization": f"Api-Key {data}"}


@pytest.fixture
def key(db, settings):  # type: ignore[no-untyped-def]
    settings.FEEDBACK_RATE_LIMIT = None
    # Requests go straight to the WSGI application, which would close the test's
    # connection (and its transaction) after each one; Django's test client avoids
    # that the same way.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    # Something to find: a finished session with facts, a running one.
    done = DiagnosisSessionFactory(session_id="a", succeeded=True)
    ToolInvocationFactory.create_batch(3, session=done)
    DiagnosisSessionFactory(session_id="b")
    _KEY["value"] = ApiKey.objects.create_key(name="fuzz", scope="full")[1]
    yield _KEY["value"]
    _KEY.clear()
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_input_makes_the_api_fail_or_break_its_schema(case, key) -> None:  # type: ignore[no-untyped-def]
    response = case.call_wsgi()

    case.validate_response(response)

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from django.conf import settings

CHROMIUM = "/usr/bin/chromium"


def pytest_configure(config: pytest.Config) -> None:
    # Nothing the suite runs may write into the checkout (its live case index, the
    # worker's log, metrics files): this process and every server, worker or command a
    # test starts (they inherit the environment) keep their files in one temporary
    # directory, removed at the end.
    var = Path(tempfile.mkdtemp(prefix="diagnosis-tests-"))
    os.environ["VAR_DIR"] = str(var)
    os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
    settings.VAR_DIR = var
    config.add_cleanup(lambda: shutil.rmtree(var, ignore_errors=True))


def on_mysql() -> bool:
    return settings.DATABASES["default"]["ENGINE"] == "django.db.backends.mysql"


def _why_not_runnable(item: pytest.Item) -> str | None:
    if item.get_closest_marker("mysql") and not on_mysql():
        return "needs MySQL/MariaDB (set DATABASE_URL=mysql://...)"
    if item.get_closest_marker("sqlite") and on_mysql():
        return "about SQLite's behaviour (runs without DATABASE_URL)"
    if item.get_closest_marker("browser") and not shutil.which(CHROMIUM):
        return f"needs Chromium at {CHROMIUM} (apt-get install chromium)"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Tests that need a server this run does not have are left out, and said so at the
    # end of the run: they are not skipped in place, they belong to another run
    # (.ci/run runs the suite on SQLite and on MariaDB, with Chromium installed).
    kept, left_out = [], {}
    for item in items:
        reason = _why_not_runnable(item)
        if reason:
            left_out.setdefault(reason, []).append(item)
        else:
            kept.append(item)
    if left_out:
        config.hook.pytest_deselected(items=[i for group in left_out.values() for i in group])
        items[:] = kept
    config.stash[_LEFT_OUT] = {reason: len(group) for reason, group in left_out.items()}


_LEFT_OUT = pytest.StashKey[dict]()


def pytest_report_header(config: pytest.Config) -> str:
    db = settings.DATABASES["default"]
    return f"database: {db['ENGINE'].rsplit('.', 1)[-1]} {db.get('HOST') or ''} {db['NAME']}"


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:  # type: ignore[no-untyped-def]
    for reason, count in config.stash.get(_LEFT_OUT, {}).items():
        terminalreporter.write_line(f"left out {count} test(s): {reason}", yellow=True)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(tmp_path_factory, django_db_modify_db_settings_parallel_suffix):  # type: ignore[no-untyped-def]
    """On SQLite the test database is a file, not memory: a child `qcluster` or web
    server started by a test (tests/processes.py) then works on the same database."""
    db = settings.DATABASES["default"]
    if db["ENGINE"] == "django.db.backends.sqlite3":
        db.setdefault("TEST", {})["NAME"] = str(tmp_path_factory.mktemp("db") / "test.sqlite3")


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def degraded_searches_unlogged(monkeypatch):  # type: ignore[no-untyped-def]
    """Each test's process has logged no degraded search yet (one line a minute)."""
    from caselibrary.services import search
    from config.failure_log import RepeatedFailures

    monkeypatch.setattr(search, "_degraded", RepeatedFailures())


@pytest.fixture(autouse=True)
def case_vectors_forgotten():  # type: ignore[no-untyped-def]
    """Each test's serving process starts with no case vectors in memory: it loads them
    from its own (rolled back) database at its first search."""
    from caselibrary.search_backends.base import get_backend

    backends = {get_backend(), get_backend("database")}
    forgets = [getattr(backend, "forget", lambda: None) for backend in backends]
    for forget in forgets:
        forget()
    yield
    for forget in forgets:
        forget()


@pytest.fixture
def make_client(db):  # type: ignore[no-untyped-def]
    """An API client holding a fresh key of the given scope."""
    from rest_framework.test import APIClient

    from diagnosis.models import ApiKey

    def make(scope: str = "full") -> APIClient:
        api_key, key = ApiKey.objects.create_key(name=f"test-{scope}", scope=scope)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
        client.api_key = api_key
        client.raw_key = key
        return client

    return make


@pytest.fixture
def api(make_client):  # type: ignore[no-untyped-def]
    """A client with a full-scope key."""
    return make_client("full")


class StatementCounter:
    """Captured SQL minus SAVEPOINT/RELEASE, which only exist because each test runs
    inside a transaction (in production the same atomic block is a BEGIN/COMMIT)."""

    def __init__(self) -> None:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        self._context = CaptureQueriesContext(connection)

    def __enter__(self) -> "StatementCounter":
        self._context.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._context.__exit__(*exc)

    @property
    def statements(self) -> list[str]:
        return [
            q["sql"]
            for q in self._context.captured_queries
            if not q["sql"].upper().startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))
        ]


@pytest.fixture
def count_statements():  # type: ignore[no-untyped-def]
    return StatementCounter


# --- Admin ----------------------------------------------------------------------------


def _logged_in(username: str, **flags: bool):  # type: ignore[no-untyped-def]
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.create_user(username, **flags))
    return client


@pytest.fixture
def staff_client(db):  # type: ignore[no-untyped-def]
    """Logged in as staff without any model permission."""
    return _logged_in("ops.staff", is_staff=True)


@pytest.fixture
def user_client(db):  # type: ignore[no-untyped-def]
    """Logged in, but not staff."""
    return _logged_in("ops.user")


@pytest.fixture
def admin_in_english(settings) -> None:  # type: ignore[no-untyped-def]
    """The admin defaults to Chinese; tests that read its messages read them in English."""
    settings.LANGUAGE_CODE = "en"


# --- Real processes on a database of their own ------------------------------------------


@pytest.fixture
def database_url(tmp_path):  # type: ignore[no-untyped-def]
    """A database of the suite's kind, empty, for the processes of this test alone."""
    import uuid

    from django.db import connection

    if connection.vendor != "mysql":
        yield f"sqlite:///{tmp_path / 'loop.sqlite3'}"
        return
    name = f"{connection.settings_dict['NAME']}_loop_{uuid.uuid4().hex[:6]}"
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    db = connection.settings_dict
    host = f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 3306}"
    try:
        yield f"mysql://{db['USER']}:{db['PASSWORD']}@{host}/{name}"
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")


@pytest.fixture
def service(tmp_path, database_url):  # type: ignore[no-untyped-def]
    """gunicorn and a qcluster sharing one database and one index directory; yields the
    server's base URL and a `full` key."""
    import subprocess
    import sys

    from tests.processes import ROOT, child_env, start_gunicorn, stop_group

    env = child_env(
        DATABASE_URL=database_url,
        Q_POLL="0.1",
        READYZ_WORKER_MAX_AGE="0",
        # Plain HTTP on loopback: the admin's cookies must travel without TLS.
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
    )
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput"], cwd=ROOT, env=env, check=True, timeout=300)
    key = subprocess.run(
        [*manage, "create_api_key", "loop-agent", "--scope", "full"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    log = (tmp_path / "processes.log").open("w")
    worker = subprocess.Popen(
        [*manage, "qcluster"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    web, base = start_gunicorn(env, workers=2, log=log)
    try:
        yield base, key
    finally:
        stop_group(web)
        stop_group(worker)
        log.close()


# --- The Milvus search backend: Milvus Lite as a server, once per test session ---------


@pytest.fixture(scope="session")
def milvus_uri(tmp_path_factory):  # type: ignore[no-untyped-def]
    """The URI of a Milvus Lite server started for this test session (tests/milvus_server.py)."""
    from tests.milvus_server import milvus_lite_server

    with milvus_lite_server(tmp_path_factory.mktemp("milvus") / "data") as uri:
        yield uri


@pytest.fixture
def milvus_search(settings, milvus_uri, monkeypatch):  # type: ignore[no-untyped-def]
    """CASE_SEARCH_BACKEND=milvus for one test, on a collection of its own; yields the
    backend the service will use."""
    import uuid

    from caselibrary.search_backends import base

    settings.CASE_SEARCH_BACKEND = "milvus"
    settings.MILVUS_URI = milvus_uri
    settings.MILVUS_COLLECTION = f"test_{uuid.uuid4().hex[:12]}"
    monkeypatch.setattr(base, "_instances", {})
    backend = base.get_backend()
    yield backend
    backend.drop()


@pytest.fixture(scope="session")
def embedding_model_loaded() -> None:
    """The embedding model loaded before a browser test presses "useful": the first case of
    a process is indexed inline (Q_SYNC) and would load it then, which takes longer than a
    page's wait for the reply."""
    from caselibrary.embedding import embed_texts

    embed_texts(["warm"])


# --- Logs -------------------------------------------------------------------------------


@pytest.fixture
def json_lines():  # type: ignore[no-untyped-def]
    """Everything logged while the test runs, through the filters of the handler that
    prints the lines (config/logging_settings.py), formatted as production formats it."""
    import logging

    from config.logging import JsonFormatter

    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = Collect(level=logging.DEBUG)
    handler.setFormatter(JsonFormatter())
    [console] = [h for h in logging.getLogger().handlers if h.name == "console"]
    for line_filter in console.filters:
        handler.addFilter(line_filter)
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield lines
    root.removeHandler(handler)
    root.setLevel(previous)

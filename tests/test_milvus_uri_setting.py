"""MILVUS_URI is the Milvus server's address, http[s]://[user:password@]host[:port]. With
CASE_SEARCH_BACKEND=milvus a value the Milvus client cannot use stops start-up with one
line naming the variable and what it expects, never the password; the client also reads
the variable itself when it is imported, and must never be the first to refuse it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from config.settings_rules import milvus_uri_problem
from tests.test_configuration_errors_at_start_up import run_until_it_exits
from tests.test_settings import ROOT, load_settings, refusal

PASSWORD = "MilvusPwLeak9"
MALFORMED = [
    f"root:{PASSWORD}@milvus.internal:19530",  # no http://
    "milvus.internal:19530",
    "notaurl",
    f"tcp://root:{PASSWORD}@milvus.internal:19530",
    f"http://root:{PASSWORD}@milvus.internal:19530x",
    "http://milvus.internal:65535",
    "http://milvus.internal:0",
    "http://[::1]:19530",
    "http://[::1",
    f"http://root:{PASSWORD}@:19530",
    "unix:/run/milvus.sock",
    "/var/lib/milvus/cases.db",
]
WELL_FORMED = [
    "http://127.0.0.1:19530",
    "http://milvus.internal",
    f"https://root:{PASSWORD}@milvus.internal:443",
    "HTTPS://milvus.example.com:19530/production",
    "http://milvus-0.milvus.svc.cluster.local:19530/",
]


@pytest.mark.parametrize("uri", MALFORMED)
def test_a_milvus_uri_the_client_cannot_use_is_refused_without_its_password(uri: str) -> None:
    wrong = milvus_uri_problem("MILVUS_URI", uri)

    assert wrong is not None
    assert wrong.startswith("MILVUS_URI must be the Milvus server's address, ")
    assert "http[s]://[user:password@]host[:port]" in wrong
    assert PASSWORD not in wrong


@pytest.mark.parametrize("uri", WELL_FORMED)
def test_a_milvus_server_address_is_taken(uri: str) -> None:
    assert milvus_uri_problem("MILVUS_URI", uri) is None


def test_the_message_says_what_is_wrong_with_the_uri() -> None:
    def got(uri: str) -> str:
        return (milvus_uri_problem("MILVUS_URI", uri) or "").partition(", got ")[2]

    assert got(f"root:{PASSWORD}@milvus.internal:19530") == "no scheme"
    assert got("tcp://milvus.internal:19530") == "the scheme 'tcp'"
    assert got("http://:19530") == "no host"
    assert got("http://[::1]:19530").startswith("an IPv6 address")
    assert got("http://milvus.internal:65535").startswith("a port that is not a number from")
    assert got("/var/lib/milvus/cases.db").startswith("a file (Milvus Lite")


def test_start_up_refuses_a_malformed_milvus_uri_with_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = refusal(
        monkeypatch,
        CASE_SEARCH_BACKEND="milvus",
        MILVUS_URI=f"root:{PASSWORD}@milvus.internal:19530",
    )

    assert lines == [
        "MILVUS_URI must be the Milvus server's address, http[s]://[user:password@]host[:port], "
        "got no scheme"
    ]


def test_the_milvus_uri_is_judged_only_when_milvus_is_the_search_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loaded = load_settings(
        monkeypatch, DEBUG="1", CASE_SEARCH_BACKEND="database", MILVUS_URI="notaurl"
    )

    assert loaded["CASE_SEARCH_BACKEND"] == "database"


def test_every_milvus_uri_start_up_takes_is_one_the_client_can_be_imported_with() -> None:
    # pymilvus reads MILVUS_URI from the environment when it is imported, and raises with
    # the whole URI in its message when it cannot read it: no URI start-up takes may do so.
    candidates = [*WELL_FORMED, *MALFORMED, "http://milvus.internal:65534", "http://h:1/a/b"]
    taken = [uri for uri in candidates if milvus_uri_problem("MILVUS_URI", uri) is None]
    imports = {
        uri: subprocess.Popen(
            [sys.executable, "-c", "import pymilvus"],
            cwd=ROOT,
            env={"PATH": "/usr/bin:/bin", "MILVUS_URI": uri},
            stderr=subprocess.PIPE,
            text=True,
        )
        for uri in taken
    }

    failed = {uri: p.communicate()[1][-300:] for uri, p in imports.items() if p.wait() != 0}

    assert len(taken) >= len(WELL_FORMED)
    assert failed == {}


@pytest.mark.integration
@pytest.mark.parametrize("uri", [f"root:{PASSWORD}@milvus.internal:19530", "notaurl"])
def test_manage_py_check_refuses_a_malformed_milvus_uri_naming_it_once(uri: str) -> None:
    result = run_until_it_exits(
        [sys.executable, "manage.py", "check"],
        {"CASE_SEARCH_BACKEND": "milvus", "MILVUS_URI": uri},
    )

    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        "Configuration error: MILVUS_URI must be the Milvus server's address, "
        "http[s]://[user:password@]host[:port], got no scheme"
    ]
    assert PASSWORD not in result.stdout + result.stderr

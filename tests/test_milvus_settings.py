"""The Milvus settings a typo would leave a node degraded by for as long as it runs: with
CASE_SEARCH_BACKEND=milvus they are judged at start-up, one line each."""

from pathlib import Path

import pytest

from tests.test_settings import load_settings, refusal

MILVUS = {"CASE_SEARCH_BACKEND": "milvus", "MILVUS_URI": "http://milvus.internal:19530"}


@pytest.mark.parametrize("name", ["case-passages", "9cases", "cases passages", "案例"])
def test_a_collection_name_milvus_would_refuse_stops_start_up(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    lines = refusal(monkeypatch, **MILVUS, MILVUS_COLLECTION=name)

    assert lines == [
        f"MILVUS_COLLECTION must be letters, digits and underscores, "
        f"starting with a letter or an underscore, at most 246 characters, got {name!r}"
    ]


def test_a_ca_certificate_that_is_not_a_readable_file_stops_start_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "missing.pem"

    [line] = refusal(monkeypatch, **MILVUS, MILVUS_CA_CERT=str(missing))

    assert line.startswith("MILVUS_CA_CERT must be a readable file, got '/")
    assert line.endswith("(no such file)")


def test_good_milvus_settings_are_taken(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pem = tmp_path / "ca.pem"
    pem.write_text("-----BEGIN CERTIFICATE-----\n")

    loaded = load_settings(
        monkeypatch, DEBUG="1", **MILVUS, MILVUS_COLLECTION="_cases_2", MILVUS_CA_CERT=str(pem)
    )

    assert (loaded["MILVUS_COLLECTION"], loaded["MILVUS_CA_CERT"]) == ("_cases_2", str(pem))


def test_the_database_backend_does_not_judge_the_milvus_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loaded = load_settings(monkeypatch, DEBUG="1", MILVUS_COLLECTION="case-passages")

    assert loaded["CASE_SEARCH_BACKEND"] == "database"

"""Error codes found in alerts and questions, normalised so equal codes compare equal."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from caselibrary.error_codes import error_code_key, find_error_codes, normalise_error_code


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("ERROR 1205 (HY000): Lock wait timeout exceeded", ["ERROR 1205"]),
        ("mysql error 1213 deadlock found", ["ERROR 1213"]),
        ("[MY-013183] [InnoDB] Assertion failure", ["MY-013183"]),
        ("ora-1555 snapshot too old", ["ORA-01555"]),
        ("ORA-01555: snapshot too old: rollback segment number", ["ORA-01555"]),
        ("TNS-12514: listener does not currently know of service", ["TNS-12514"]),
        ("order-service 大量 504，怎么排查？", ["HTTP 504"]),
        ("HTTP/1.1 503 Service Unavailable", ["HTTP 503"]),
        ("upstream answered 502 Bad Gateway", ["HTTP 502"]),
        ("partner API status=429", ["HTTP 429"]),
        ("nginx access log full of 499 status", ["HTTP 499"]),
        ("a burst of 502 responses from the upstream", ["HTTP 502"]),
        ("接口返回 500 错误", ["HTTP 500"]),
        ("pod crashloopbackoff, then OOMKilled", ["CrashLoopBackOff", "OOMKilled"]),
        ("Back-off pulling image: ImagePullBackOff", ["ImagePullBackOff"]),
        ("java.lang.OutOfMemoryError: Java heap space", ["java.lang.OutOfMemoryError"]),
        ("Caused by: OutOfMemoryError: Metaspace", ["java.lang.OutOfMemoryError"]),
        (
            "IOException wrapped in an SQLException",
            ["java.io.IOException", "java.sql.SQLException"],
        ),
        ("com.acme.pricing.PriceCalcException at line 42", ["com.acme.pricing.PriceCalcException"]),
        ("write /data/app.log: no space left on device", ["ENOSPC"]),
        ("accept4: Too many open files", ["EMFILE"]),
        ("EMFILE: too many open files", ["EMFILE"]),
        ("dial tcp 10.0.0.5:3306: connect: connection refused", ["ECONNREFUSED"]),
    ],
)
def test_codes_are_found_in_alert_text_and_normalised(text: str, codes: list[str]) -> None:
    assert find_error_codes(text) == codes


@pytest.mark.parametrize(
    "text",
    [
        "p99 went from 120ms to 503ms at 2,000 qps",
        "we saw 400 errors in the last hour",
        "CPU usage above 90% on 4 of 12 pods",
        "Error: something went wrong",
        "the job is Pending since 10:05",
        "",
    ],
)
def test_numbers_and_ordinary_words_are_not_codes(text: str) -> None:
    assert find_error_codes(text) == []


def test_a_code_repeated_in_the_text_is_reported_once_in_first_seen_order() -> None:
    text = "OOMKilled; CrashLoopBackOff after OOMKilled; oomkilled again"
    assert find_error_codes(text) == ["OOMKilled", "CrashLoopBackOff"]


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("ora-1555", "ORA-01555"),
        ("ORA 01555", "ORA-01555"),
        ("error 1205", "ERROR 1205"),
        ("my-013183", "MY-013183"),
        ("http 503", "HTTP 503"),
        ("HTTP/1.1 503", "HTTP 503"),
        ("crashloopbackoff", "CrashLoopBackOff"),
        ("enospc", "ENOSPC"),
        ("Too many open files", "EMFILE"),
        ("OutOfMemoryError", "java.lang.OutOfMemoryError"),
        ("  java.lang.OutOfMemoryError ", "java.lang.OutOfMemoryError"),
        ("PAY-4001", "PAY-4001"),
    ],
)
def test_one_code_normalises_to_its_canonical_spelling(written: str, canonical: str) -> None:
    assert normalise_error_code(written) == canonical


def test_a_class_with_and_without_its_package_share_a_key() -> None:
    assert error_code_key("java.lang.OutOfMemoryError") == error_code_key("OutOfMemoryError")
    assert error_code_key("com.acme.PriceCalcException") == error_code_key("PriceCalcException")
    assert error_code_key("ORA-01555") == error_code_key("ora-1555")
    assert error_code_key("ERROR 1205") != error_code_key("ERROR 1213")


@given(st.text(max_size=80))
def test_normalising_is_idempotent(code: str) -> None:
    once = normalise_error_code(code)
    assert normalise_error_code(once) == once


@given(st.text(max_size=300))
def test_every_found_code_is_already_normal(text: str) -> None:
    for code in find_error_codes(text):
        assert normalise_error_code(code) == code


@pytest.mark.parametrize(
    "text",
    [
        "AddressResolver failed to resolve order-db",
        "the alert fired at 09:05 and again at 14:05:30",
        "error rate doubled between 12:30 and 13:45",
        "Mirror4001 lagging",
        "a terror 2013 movie",
        "ora 3 replicas are ready",
        "flora-1 is a host name",
        "the pod was evicted, then pending",
        "the broken pipeline stage was retried",
        "status 504:05 at the probe",
        "latency 12:503 ratio",
        "ENOSPCX is not an errno",
    ],
)
def test_words_and_times_that_only_contain_a_code_shape_are_not_codes(text: str) -> None:
    assert find_error_codes(text) == []


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("ERROR 1205 (HY000) at 09:05", ["ERROR 1205"]),
        ("since 14:05 the gateway returns HTTP 503", ["HTTP 503"]),
        ("返回 503，从 14:05 开始", ["HTTP 503"]),
        ("ORA 01555 after 03:00 batch", ["ORA-01555"]),
        ("ORA_00600 internal error", ["ORA-00600"]),
        ("pod Evicted: node memory pressure", ["Evicted"]),
        ("write(): Broken pipe", ["EPIPE"]),
        ("AddressResolverError in the netty pool", ["AddressResolverError"]),
        ("errno: 1205 at 10:12", ["ERROR 1205"]),
    ],
)
def test_real_codes_are_still_found_beside_times_and_words(text: str, codes: list[str]) -> None:
    assert find_error_codes(text) == codes

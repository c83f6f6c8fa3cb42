"""Prometheus alert names are codes: found whole-word in alerts and prose, prose never."""

import pytest

from caselibrary.alert_names import (
    ALERT_NAMES,
    find_alert_names,
    is_alert_name,
    normalise_alert_name,
)
from caselibrary.error_codes import error_code_key, find_error_codes, normalise_error_code


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("[FIRING:1] KubePodCrashLooping (payment/api-7d9c)", ["KubePodCrashLooping"]),
        ("告警KubePodCrashLooping触发了，pod 一直重启", ["KubePodCrashLooping"]),
        ("收到 KubeJobFailed 和 KubePodNotReady 两条告警", ["KubeJobFailed", "KubePodNotReady"]),
        ('alertname="TargetDown", job="node"', ["TargetDown"]),
        ("NodeFilesystemAlmostOutOfSpace on /var/lib/kubelet", ["NodeFilesystemAlmostOutOfSpace"]),
        ("etcdNoLeader fired at 03:12", ["etcdNoLeader"]),
        ("kubepodcrashlooping again", ["KubePodCrashLooping"]),
        ("HighCPUUsage on order-svc, 95%", ["HighCPUUsage"]),
        ("payment 服务 HighMemoryUsage 告警", ["HighMemoryUsage"]),
        ("MySQLReplicationLag 超过 300s", ["MySQLReplicationLag"]),
        ("RedisDown: redis-cache-0 unreachable", ["RedisDown"]),
        ("HostOutOfDiskSpace（/data 剩余 3%）", ["HostOutOfDiskSpace"]),
        ("KafkaBrokerNotReady after the rolling restart", ["KafkaBrokerNotReady"]),
        ("订单服务 OrderApiErrorRate 超阈值", ["OrderApiErrorRate"]),
        ("IngressCertExpiring in 7 days", ["IngressCertExpiring"]),
    ],
)
def test_alert_names_are_found_whole_word_and_normalised(text, names):
    assert find_alert_names(text) == names


@pytest.mark.parametrize(
    "text",
    [
        "the node shows high cpu usage and memory usage",
        "CPU 使用率很高，内存也高",
        "Download the JavaScript bundle from GitHub",
        "MySQL and PostgreSQL on iPhone apps",
        "a HighAvailability pair and a CountDownLatch",
        "xHighCPUUsage is part of a longer word",
        "HighCPUUsage_total is a metric, not the alert",
        "Watchdog is always firing; InfoInhibitor too",
        "java.lang.OutOfMemoryError: Java heap space",
        "the node went NotReady, shutdown and Down",
    ],
)
def test_prose_and_other_words_are_not_alert_names(text):
    assert find_alert_names(text) == []


def test_every_catalogue_name_is_an_alert_name_and_found_alone():
    for name in ALERT_NAMES:
        assert is_alert_name(name)
        assert find_alert_names(f"告警：{name}。") == [name]


def test_a_catalogue_name_in_any_case_normalises_to_its_spelling():
    assert normalise_alert_name("kubenodenotready") == "KubeNodeNotReady"
    assert normalise_alert_name("HighCPUUsage") == "HighCPUUsage"


def test_alert_names_are_error_codes_too_in_the_order_of_the_text():
    text = "KubePodCrashLooping: pod in CrashLoopBackOff, then HighMemoryUsage and OOMKilled"
    assert find_error_codes(text) == [
        "KubePodCrashLooping",
        "CrashLoopBackOff",
        "HighMemoryUsage",
        "OOMKilled",
    ]


def test_an_alert_name_normalises_and_keys_like_any_code():
    assert normalise_error_code("kubejobfailed") == "KubeJobFailed"
    assert error_code_key("KUBEJOBFAILED") == error_code_key("KubeJobFailed")


def test_a_kubernetes_reason_stays_one_code_not_also_an_alert():
    assert find_error_codes("节点 NodeNotReady，随后 KubeNodeNotReady 告警") == [
        "NodeNotReady",
        "KubeNodeNotReady",
    ]

"""Prometheus alert names in free text: found whole-word and normalised, so that an alert an
operator pastes (`[FIRING:1] KubePodCrashLooping`) finds the runbook that names it.

Pure Python (no Django); `caselibrary.error_codes.find_error_codes` reports these names as
codes alongside the other families. A word is an alert name when it is either

1. a name from the catalogue below: the real alerts of kube-prometheus (the kubernetes,
   node-exporter, Prometheus, Alertmanager and etcd mixins) and the widely copied
   hand-written rules (`HostOutOfDiskSpace`, `RedisDown`, `MysqlSlaveReplicationLag`...).
   Matched however it is cased (`kubepodcrashlooping`) and normalised to the catalogue's
   spelling; or
2. a CamelCase word written as an alert rule is written: it starts with a capital, has at
   least two words (`High` + `CPU` + `Usage`), and either starts with `High`, `Low`, `Too`
   or `Excessive`, or has `High` or `Low` after its first word and before its last
   (`NginxHigh5xxRate`, `GatewayHigh502Rate`), or ends with an alert word (`Down`,
   `Failed`, `FillingUp`, `Lag`, `Errors`, `ErrorRate`, `Latency`, `Restarting`, `Usage`,
   `Utilization`, `Unavailable`, `Expiring`, `Mismatch`, `Saturation`, `Throttling`,
   `High`, `Low`, `Full`...), or has `Not` or `OutOf` after its first word
   (`KafkaBrokerNotReady`, `HostOutOfMemory`). Kept as written. A word that only ends in
   `Rate` or `Ratio` is not one: `SampleRate`, `FrameRate`, `AspectRatio`, `CacheHitRatio`
   name settings and metrics far more often.

Never an alert name: a word inside a longer word or identifier (`xHighCPUUsage`,
`HighCPUUsage_total`), ordinary prose (`high CPU usage`, `Download`, `shutdown`: no
CamelCase), a few CamelCase words that say something else (`HighAvailability`,
`CountDown`, `RedisHighAvailability`, `NetworkLowLatency`), the Kubernetes reasons and
Java exceptions that `error_codes` already reports in their own family (`NodeNotReady`,
`OutOfMemoryError`), and the always-firing housekeeping alerts that are not incidents
(`Watchdog`, `InfoInhibitor`).
"""

from __future__ import annotations

import itertools
import re

__all__ = ["ALERT_NAMES", "find_alert_names", "is_alert_name", "normalise_alert_name"]

ALERT_NAMES = (
    # kubernetes-mixin: apps
    "KubePodCrashLooping",
    "KubePodNotReady",
    "KubeDeploymentGenerationMismatch",
    "KubeDeploymentReplicasMismatch",
    "KubeDeploymentRolloutStuck",
    "KubeStatefulSetReplicasMismatch",
    "KubeStatefulSetGenerationMismatch",
    "KubeStatefulSetUpdateNotRolledOut",
    "KubeDaemonSetRolloutStuck",
    "KubeDaemonSetNotScheduled",
    "KubeDaemonSetMisScheduled",
    "KubeContainerWaiting",
    "KubeJobNotCompleted",
    "KubeJobFailed",
    "KubeJobCompletion",  # KubeJobNotCompleted before kubernetes-mixin renamed it
    "KubeHpaReplicasMismatch",
    "KubeHpaMaxedOut",
    # kubernetes-mixin: resources and storage
    "KubeCPUOvercommit",
    "KubeMemoryOvercommit",
    "KubeCPUQuotaOvercommit",
    "KubeMemoryQuotaOvercommit",
    "KubeQuotaAlmostFull",
    "KubeQuotaFullyUsed",
    "KubeQuotaExceeded",
    "CPUThrottlingHigh",
    "KubePersistentVolumeFillingUp",
    "KubePersistentVolumeInodesFillingUp",
    "KubePersistentVolumeErrors",
    # kubernetes-mixin: system
    "KubeVersionMismatch",
    "KubeClientErrors",
    "KubeAPIErrorBudgetBurn",
    "KubeAggregatedAPIErrors",
    "KubeAggregatedAPIDown",
    "KubeAPIDown",
    "KubeAPITerminatedRequests",
    "KubeNodeNotReady",
    "KubeNodeUnreachable",
    "KubeNodeEviction",
    "KubeNodePressure",
    "KubeletTooManyPods",
    "KubeNodeReadinessFlapping",
    "KubeletPlegDurationHigh",
    "KubeletPodStartUpLatencyHigh",
    "KubeletClientCertificateExpiration",
    "KubeletServerCertificateExpiration",
    "KubeletClientCertificateRenewalErrors",
    "KubeletServerCertificateRenewalErrors",
    "KubeletDown",
    "KubeSchedulerDown",
    "KubeControllerManagerDown",
    "KubeProxyDown",
    "KubeClientCertificateExpiration",
    "KubeStateMetricsListErrors",
    "KubeStateMetricsWatchErrors",
    "KubeStateMetricsShardingMismatch",
    "KubeStateMetricsShardsMissing",
    # node-exporter mixin
    "NodeFilesystemSpaceFillingUp",
    "NodeFilesystemAlmostOutOfSpace",
    "NodeFilesystemFilesFillingUp",
    "NodeFilesystemAlmostOutOfFiles",
    "NodeNetworkReceiveErrs",
    "NodeNetworkTransmitErrs",
    "NodeHighNumberConntrackEntriesUsed",
    "NodeTextFileCollectorScrapeError",
    "NodeClockSkewDetected",
    "NodeClockNotSynchronising",
    "NodeRAIDDegraded",
    "NodeRAIDDiskFailure",
    "NodeFileDescriptorLimit",
    "NodeCPUHighUsage",
    "NodeSystemSaturation",
    "NodeMemoryMajorPagesFaults",
    "NodeMemoryHighUtilization",
    "NodeDiskIOSaturation",
    "NodeSystemdServiceFailed",
    "NodeSystemdServiceCrashlooping",
    "NodeBondingDegraded",
    "NodeNetworkInterfaceFlapping",
    # Prometheus and Alertmanager mixins, general rules
    "TargetDown",
    "PrometheusBadConfig",
    "PrometheusNotificationQueueRunningFull",
    "PrometheusErrorSendingAlertsToSomeAlertmanagers",
    "PrometheusErrorSendingAlertsToAnyAlertmanager",
    "PrometheusNotConnectedToAlertmanagers",
    "PrometheusTSDBReloadsFailing",
    "PrometheusTSDBCompactionsFailing",
    "PrometheusNotIngestingSamples",
    "PrometheusDuplicateTimestamps",
    "PrometheusOutOfOrderTimestamps",
    "PrometheusRemoteStorageFailures",
    "PrometheusRemoteWriteBehind",
    "PrometheusRemoteWriteDesiredShards",
    "PrometheusRuleFailures",
    "PrometheusMissingRuleEvaluations",
    "PrometheusTargetLimitHit",
    "PrometheusLabelLimitHit",
    "PrometheusScrapeBodySizeLimitHit",
    "PrometheusScrapeSampleLimitHit",
    "PrometheusSDRefreshFailure",
    "PrometheusKubernetesListWatchFailures",
    "PrometheusTargetSyncFailure",
    "PrometheusHighQueryLoad",
    "AlertmanagerFailedReload",
    "AlertmanagerMembersInconsistent",
    "AlertmanagerFailedToSendAlerts",
    "AlertmanagerClusterFailedToSendAlerts",
    "AlertmanagerConfigInconsistent",
    "AlertmanagerClusterDown",
    "AlertmanagerClusterCrashlooping",
    "ConfigReloaderSidecarErrors",
    # prometheus-operator mixin
    "PrometheusOperatorListErrors",
    "PrometheusOperatorWatchErrors",
    "PrometheusOperatorSyncFailed",
    "PrometheusOperatorReconcileErrors",
    "PrometheusOperatorStatusUpdateErrors",
    "PrometheusOperatorNodeLookupErrors",
    "PrometheusOperatorNotReady",
    "PrometheusOperatorRejectedResources",
    # etcd mixin (lower-case first word, as etcd writes them)
    "etcdMembersDown",
    "etcdInsufficientMembers",
    "etcdNoLeader",
    "etcdHighNumberOfLeaderChanges",
    "etcdHighNumberOfFailedGRPCRequests",
    "etcdGRPCRequestsSlow",
    "etcdMemberCommunicationSlow",
    "etcdHighNumberOfFailedProposals",
    "etcdHighFsyncDurations",
    "etcdHighCommitDurations",
    "etcdDatabaseQuotaLowSpace",
    "etcdBackendQuotaLowSpace",  # etcdDatabaseQuotaLowSpace before etcd renamed it
    "etcdExcessiveDatabaseGrowth",
    "etcdDatabaseHighFragmentationRatio",
    # Common hand-written rules (awesome-prometheus-alerts and the exporters' examples)
    "HostOutOfMemory",
    "HostMemoryUnderMemoryPressure",
    "HostOutOfDiskSpace",
    "HostDiskWillFillIn24Hours",
    "HostOutOfInodes",
    "HostHighCpuLoad",
    "HostCpuStealNoisyNeighbor",
    "HostOomKillDetected",
    "HostNetworkReceiveErrors",
    "HostClockSkew",
    "HostConntrackLimit",
    "HostUnusualDiskReadLatency",
    "HostUnusualDiskWriteLatency",
    "MysqlDown",
    "MysqlTooManyConnections",
    "MysqlHighThreadsRunning",
    "MysqlSlaveIoThreadNotRunning",
    "MysqlSlaveSqlThreadNotRunning",
    "MysqlSlaveReplicationLag",
    "MysqlSlowQueries",
    "MysqlInnodbLogWaits",
    "MysqlRestarted",
    "PostgresqlDown",
    "PostgresqlTooManyConnections",
    "RedisDown",
    "RedisMissingMaster",
    "RedisTooManyMasters",
    "RedisDisconnectedSlaves",
    "RedisReplicationBroken",
    "RedisClusterFlapping",
    "RedisMissingBackup",
    "RedisOutOfSystemMemory",
    "RedisOutOfConfiguredMaxmemory",
    "RedisTooManyConnections",
    "RedisRejectedConnections",
    "KafkaTopicsReplicas",
    "KafkaConsumersGroup",
    "RabbitmqNodeDown",
    "RabbitmqTooManyUnackMessages",
    "ElasticsearchHeapUsageTooHigh",
    "ElasticsearchHeapUsageWarning",
    "ElasticsearchDiskOutOfSpace",
    "ElasticsearchDiskSpaceLow",
    "ElasticsearchClusterRed",
    "ElasticsearchClusterYellow",
    "ElasticsearchUnassignedShards",
    "ElasticsearchPendingTasks",
    "NginxHighHttp4xxErrorRate",
    "NginxHighHttp5xxErrorRate",
    "NginxLatencyHigh",
    "NGINXConfigFailed",
    "NGINXCertificateExpiry",
    "NGINXTooMany500s",
    "NGINXTooMany400s",
    "BlackboxProbeFailed",
    "BlackboxSlowProbe",
    "BlackboxProbeHttpFailure",
    "BlackboxSslCertificateWillExpireSoon",
    "BlackboxSslCertificateExpired",
    "CoreDNSDown",
    "CoreDNSErrorsHigh",
    "CoreDNSLatencyHigh",
    "CertManagerCertExpirySoon",
    "CertManagerCertNotReady",
    "CertManagerHittingRateLimits",
    "JvmMemoryFillingUp",
)
_CANONICAL = {name.casefold(): name for name in ALERT_NAMES}

# Always-firing or inhibiting housekeeping alerts: in the catalogue's mixins, never incidents.
NOISE = frozenset({"watchdog", "infoinhibitor"})

_PREFIXES = frozenset({"High", "Low", "Too", "Excessive"})
_SUFFIXES = frozenset(
    {
        "Down",
        "Failed",
        "Failing",
        "Failure",
        "Failures",
        "Lag",
        "Lagging",
        "Errors",
        "Errs",
        "Latency",
        "Restarting",
        "Restarts",
        "Usage",
        "Utilization",
        "Unavailable",
        "Unreachable",
        "Unhealthy",
        "Expiring",
        "Expired",
        "Expiry",
        "Mismatch",
        "Overcommit",
        "Saturation",
        "Saturated",
        "Throttling",
        "Throttled",
        "Backlog",
        "Exhausted",
        "Crashing",
        "Crashlooping",
        "Looping",
        "Flapping",
        "Stuck",
        "Overloaded",
        "Degraded",
        "Rejected",
        "High",
        "Low",
        "Full",
        "Slow",
    }
)
# A qualifier after the first word and before the last: "NginxHigh5xxRate".
_INNER_QUALIFIERS = frozenset({"High", "Low"})
# Two-word endings: "...FillingUp", "...ErrorRate".
_PAIR_SUFFIXES = frozenset({("Filling", "Up"), ("Error", "Rate")})
# CamelCase words that fit the shape but name something other than an alert.
_NOT_ALERTS = frozenset(
    {
        "highavailability",
        "highlevel",
        "lowlevel",
        "lowlatency",
        "highperformance",
        "lowcode",
        "countdown",
        "shutdown",
        "slowdown",
        "teardown",
        "breakdown",
        "drilldown",
        "dropdown",
        "topdown",
        "markdown",
        "pulldown",
        "scaledown",
        "cooldown",
        "lockdown",
        "memoryusage",
        "highpriority",
        "lowpriority",
        "highprecision",
        "lowpower",
        "highwater",
        "highwatermark",
        "lowwater",
        "lowwatermark",
        # A Kubernetes reason: error_codes reports it in that family.
        "nodenotready",
    }
)

# A word: letters and digits, nothing of them on either side (a CJK character, space,
# punctuation or "=" may touch it: `告警KubePodCrashLooping触发`, `alertname=TargetDown`).
_WORD_EDGE_BEFORE = r"(?<![A-Za-z0-9_])"
_WORD_EDGE_AFTER = r"(?![A-Za-z0-9_])"
# A word that could be an alert name: a letter, then letters and digits (six at least).
_WORD = re.compile(_WORD_EDGE_BEFORE + r"[A-Za-z][A-Za-z0-9]{5,}" + _WORD_EDGE_AFTER)
_HUMP = re.compile(r"[a-z0-9][A-Z]")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b|$)|[A-Z]?[a-z]+|\d+|[A-Z]+")


def _has_alert_shape(word: str) -> bool:
    if word.casefold() in _NOT_ALERTS or _HUMP.search(word) is None or not word[0].isupper():
        return False
    parts = _PARTS.findall(word)
    if len(parts) < 2:
        return False
    if parts[-2] in _INNER_QUALIFIERS and (parts[-2] + parts[-1]).casefold() in _NOT_ALERTS:
        return False  # a feature, not a fault: "RedisHighAvailability", "NetworkLowLatency"
    if parts[0] in _PREFIXES or parts[-1] in _SUFFIXES or tuple(parts[-2:]) in _PAIR_SUFFIXES:
        return True
    inner = parts[1:]
    pairs = list(itertools.pairwise(inner))
    if any(
        first in _INNER_QUALIFIERS and (first + second).casefold() not in _NOT_ALERTS
        for first, second in pairs
    ):
        return True
    return "Not" in inner[:-1] or ("Out", "Of") in pairs


def _java_like(word: str) -> bool:
    # A Java class name: error_codes reports it in that family.
    return word.endswith(("Exception", "Error"))


def is_alert_name(word: str) -> bool:
    """Whether one word (no spaces) is an alert name by the rules in the module docstring."""
    word = word.strip()
    folded = word.casefold()
    if folded in NOISE:
        return False
    if folded in _CANONICAL:
        return True
    return _has_alert_shape(word) and not _java_like(word)


def normalise_alert_name(name: str) -> str:
    """A catalogue name in the catalogue's spelling; any other name as written (trimmed)."""
    name = name.strip()
    return _CANONICAL.get(name.casefold(), name)


def iter_alert_matches(text: str) -> list[tuple[int, int, str]]:
    """(start, end, normalised name) of every alert name in `text`, in the order of the text."""
    # One pass over the words with a dictionary look-up: an alternation of the catalogue's
    # names made finding the codes of a case three times slower.
    found: list[tuple[int, int, str]] = []
    for match in _WORD.finditer(text):
        word = match[0]
        canonical = _CANONICAL.get(word.casefold())
        if canonical is not None:
            found.append((match.start(), match.end(), canonical))
        elif _HUMP.search(word) is not None and is_alert_name(word):
            found.append((match.start(), match.end(), word))
    return found


def find_alert_names(text: str) -> list[str]:
    """The alert names in `text`, normalised, in the order they first appear, no repeats."""
    names: list[str] = []
    for _start, _end, name in sorted(iter_alert_matches(text or "")):
        if name not in names:
            names.append(name)
    return names

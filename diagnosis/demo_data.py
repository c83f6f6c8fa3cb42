"""Deterministic demo data: diagnosis sessions, tool-invocation facts and feedback.

Pure standard library on purpose, so it can feed fixtures, a management command, tests
and API demos alike without a configured Django. Every session is derived from its own
`random.Random`, so a session's content depends only on the seed and its index: growing
`count` appends sessions and never rewrites the earlier ones.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

__all__ = ["DemoInvocation", "DemoSession", "demo_sessions"]


@dataclass(frozen=True)
class DemoInvocation:
    invocation_id: str
    tool_name: str
    kind: str
    status: str
    match_level: str | None
    hit_count: int
    query: str | None
    error_message: str | None
    duration_ms: int | None


@dataclass(frozen=True)
class DemoSession:
    """One demo session.

    `days_ago` and `minutes_into_day` place the session in local time; for sessions
    with `days_ago == 0` a loader should clamp the result to "now", since the time of
    day may still lie ahead.
    """

    session_id: str
    user_id: str | None
    query: str
    status: str
    answer: str | None
    invocations: tuple[DemoInvocation, ...]
    feedback: str | None
    days_ago: int
    minutes_into_day: int


# --------------------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------------------

_SERVICES = (
    "order-service",
    "payment-gateway",
    "user-center",
    "inventory-api",
    "cart-service",
    "coupon-service",
    "search-api",
    "notification-service",
    "risk-engine",
    "logistics-tracker",
    "auth-service",
    "billing-worker",
    "product-catalog",
    "recommendation-api",
    "settlement-job",
)
_CHECKOUT_SERVICES = ("order-service", "payment-gateway", "cart-service", "coupon-service")

# Table names follow the owning service so that a question about payment-gateway does
# not suddenly talk about the inventory schema.
_TABLES = {
    "order": ("t_order", "t_order_item", "t_order_status_log"),
    "payment": ("t_payment_record", "t_refund_record"),
    "user": ("t_user_profile", "t_user_login_log"),
    "inventory": ("t_inventory_sku", "t_stock_lock"),
    "cart": ("t_cart_item",),
    "coupon": ("t_coupon_instance", "t_coupon_template"),
    "risk": ("t_risk_event", "t_risk_rule_hit"),
    "logistics": ("t_waybill", "t_waybill_trace"),
    "billing": ("t_invoice", "t_billing_cycle"),
    "settlement": ("t_settlement_batch", "t_settlement_detail"),
    "product": ("t_product_spu", "t_product_sku"),
}
_NAMESPACES = ("prod", "prod", "prod-core", "prod-trade", "prod-sg")
_CLUSTERS = ("k8s-prod-bj-01", "k8s-prod-bj-02", "k8s-prod-sh-01", "k8s-prod-sg-01")
_NODE_ZONES = ("bj-a", "bj-b", "sh-a", "sh-c", "sg-1")
_PARTNERS = (
    "WeChat Pay API",
    "Alipay open API",
    "Aliyun SMS",
    "Amap geocoding API",
    "SF Express tracking API",
    "Stripe API",
    "Twilio Verify",
)
_LOAD_BALANCERS = (
    "ALB prod-public-01",
    "ingress-nginx (prod)",
    "SLB lb-bp1x9k2f7",
    "Envoy edge-gateway",
    "F5 vs-trade-443",
)
_DOMAINS = ("m.shop.example.com", "api.example.com", "pay.example.com", "open.example.com")
_FLAGS = (
    "new-checkout-flow",
    "enable_async_stock_deduct",
    "coupon.v2.enabled",
    "risk-engine-shadow-mode",
    "search.rerank.ltr",
    "user-center.sso-v2",
)
_CONFIG_KEYS = (
    "spring.datasource.hikari.maximum-pool-size",
    "feign.client.config.default.readTimeout",
    "spring.redis.timeout",
    "server.tomcat.threads.max",
    "kafka.consumer.max.poll.records",
    "resilience4j.circuitbreaker.failureRateThreshold",
)
_CLASS_NAMES = (
    "PriceCalculator.applyCoupon",
    "OrderAssembler.toDto",
    "AddressResolver.resolve",
    "StockReserveHandler.handle",
    "UserProfileCache.get",
    "RefundValidator.validate",
)
_MOUNTS = ("/", "/var/lib/docker", "/var/log", "/data")
# The alphabet Kubernetes uses for generated name suffixes (no vowels, no 0/1/3).
_K8S_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

_ZH_USERS = (
    "ops.zhangwei",
    "ops.liuyang",
    "sre.wangfang",
    "dba.zhaolei",
    "oncall.chenjie",
    "ops.lina",
    "sre.huangtao",
)
_EN_USERS = ("sre.alice", "sre.bob", "sre.priya", "netops.kevin", "sre.maria", "dba.tom")


# --------------------------------------------------------------------------------------
# Topics: a question, the agent's answer and the tool queries all come from one topic,
# so the evidence trail of a session reads as if it belonged to its question.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Topic:
    key: str
    category: str
    zh_questions: tuple[str, ...]
    en_questions: tuple[str, ...]
    zh_keywords: tuple[str, ...]
    en_keywords: tuple[str, ...]
    codes: tuple[str, ...]
    metric_queries: tuple[str, ...]
    log_queries: tuple[str, ...]
    zh_cause: str
    zh_steps: tuple[str, ...]
    en_cause: str
    en_steps: tuple[str, ...]
    services: tuple[str, ...] = _SERVICES


_LOG_ERRORS = '{{namespace="{namespace}", app="{service}"}} |= "{error_code}"'
_P99 = (
    "histogram_quantile(0.99, sum by (le) (rate("
    'http_server_requests_seconds_bucket{{service="{service}"}}[5m])))'
)
_ERROR_RATE = (
    'sum(rate(http_server_requests_seconds_count{{service="{service}", status=~"5.."}}[5m]))'
    ' / sum(rate(http_server_requests_seconds_count{{service="{service}"}}[5m]))'
)

_TOPICS: tuple[_Topic, ...] = (
    _Topic(
        key="mysql_slow_query",
        category="database",
        zh_questions=(
            "{service} 接口 P99 从 {baseline}ms 涨到 {p99}ms，"
            "慢日志里全是 {table} 的查询，是缺索引吗？",
            "{db_instance} 慢查询突增，{table} 上很多超过 2s 的 SQL，怎么定位？",
            "{service} 报 {error_code}，{db_instance} CPU 90% 以上，先查哪里？",
        ),
        en_questions=(
            "{service} p99 up from {baseline}ms to {p99}ms, "
            "slow log is all {table}. Missing index?",
            "{error_code} from {service} and {db_instance} CPU above 90%. Which queries?",
        ),
        zh_keywords=("MySQL 慢查询", "执行计划变化", "索引失效"),
        en_keywords=("MySQL slow query", "query plan regression", "index not used"),
        codes=("MySQL 3024 query timeout", "SQLTimeoutException"),
        metric_queries=(
            'rate(mysql_global_status_slow_queries{{instance="{db_instance}"}}[5m])',
            _P99,
        ),
        log_queries=('{{job="mysql-slowlog", instance="{db_instance}"}} |= "{table}"',),
        zh_cause=(
            "{db_instance} 上 {table} 的查询在 {time} 之后执行计划发生了变化：统计信息更新后，"
            "优化器放弃了联合索引 idx_user_status_ctime，改为全表扫描，单条 SQL 扫描行数从几百行"
            "升到数百万行，{service} 接口 P99 因此升到 {p99}ms，并触发 {error_code}。"
        ),
        zh_steps=(
            "用 pt-query-digest 或 performance_schema 按总耗时排序，确认 Top SQL 是 {table} 上的"
            "查询，并用 EXPLAIN 对比当前执行计划。",
            "临时止血：对该 SQL 加 FORCE INDEX 或设置 max_execution_time 保护数据库，"
            "必要时在 {service} 侧降级非核心查询。",
            "执行 ANALYZE TABLE {table} 重新收集统计信息，观察执行计划是否恢复。",
            "长期：为高频查询条件补充合适的联合索引，并把慢查询数量加入 {service} 的发布检查项。",
        ),
        en_cause=(
            "After {time} the plan for queries against {table} on {db_instance} changed: "
            "following a statistics refresh the optimizer stopped using the composite index "
            "idx_user_status_ctime and switched to a full table scan, so rows examined per "
            "query went from hundreds to millions. That is what drives {service} p99 to "
            "{p99}ms and triggers {error_code}."
        ),
        en_steps=(
            "Rank statements by total latency (pt-query-digest or performance_schema), "
            "confirm the top offender is on {table} and EXPLAIN it against the expected plan.",
            "Stop the bleeding: pin the index with FORCE INDEX or cap it with "
            "max_execution_time, and degrade non-critical reads in {service} if needed.",
            "Run ANALYZE TABLE {table} to refresh statistics and check the plan goes back "
            "to the index.",
            "Longer term: add a composite index matching the hot predicates and put slow "
            "query count on the {service} release checklist.",
        ),
    ),
    _Topic(
        key="mysql_replication_lag",
        category="database",
        zh_questions=(
            "{db_instance} 从库延迟 {lag_s} 秒，{service} 读到旧数据，怎么处理？",
            "Seconds_Behind_Master 从 {time} 开始一直涨，现在 {lag_s}，是大事务吗？",
        ),
        en_questions=(
            "{db_instance} replica is {lag_s}s behind and "
            "{service} serves stale reads. What first?",
            "Replication lag on {db_instance} climbing since {time} ({lag_s}s). Big transaction?",
        ),
        zh_keywords=("主从复制延迟", "Seconds_Behind_Master 上涨", "大事务 从库延迟"),
        en_keywords=("replication lag", "Seconds_Behind_Master", "large transaction replica"),
        codes=("Seconds_Behind_Master={lag_s}", "MySQL replica lag alert"),
        metric_queries=('mysql_slave_status_seconds_behind_master{{instance="{db_instance}"}}',),
        log_queries=('{{job="mysql-error", instance="{db_instance}"}} |= "Slave SQL"',),
        zh_cause=(
            "{db_instance} 的从库延迟来自 {time} 前后执行的一个大事务：数据修复脚本批量更新了 "
            "{table} 约 800 万行，并作为单个事务写入 binlog。从库按单线程回放，"
            "Seconds_Behind_Master 持续上涨到 {lag_s} 秒，{service} 的读请求因此读到旧数据。"
        ),
        zh_steps=(
            "在主库的 information_schema.innodb_trx 和 binlog 中确认大事务来源，暂停后续批次。",
            "临时把 {service} 中对一致性敏感的读（如写后立即读的查询）切到主库，"
            "或在读写分离中间件里对延迟超过阈值的从库摘流。",
            "开启并行复制（replica_parallel_workers=8，replica_parallel_type=LOGICAL_CLOCK）"
            "加快回放。",
            "后续批量任务按主键分批提交（每批 1000–5000 行）并在批次间 sleep，避免再次产生大事务。",
        ),
        en_cause=(
            "The lag on the {db_instance} replica comes from one large transaction that ran "
            "around {time}: a data-fix script updated roughly 8 million rows of {table} in a "
            "single transaction. The replica applies it on one thread, so "
            "Seconds_Behind_Master climbs to {lag_s}s and {service} reads stale data."
        ),
        en_steps=(
            "Find the transaction on the primary (information_schema.innodb_trx, binlog) and "
            "pause the remaining batches.",
            "Route consistency-sensitive reads of {service} (read-after-write paths) to the "
            "primary, or "
            "have the read/write-split proxy drop replicas above the lag threshold.",
            "Enable parallel replication (replica_parallel_workers=8, "
            "replica_parallel_type=LOGICAL_CLOCK) to catch up faster.",
            "Make batch jobs commit in primary-key chunks of 1000-5000 rows with a pause "
            "between chunks.",
        ),
    ),
    _Topic(
        key="db_connection_pool",
        category="database",
        zh_questions=(
            "{service} 大量报 {error_code}，连接池 {pool_size} 个全被占满，重启后几分钟又满了",
            "{when_zh} {service} 拿不到数据库连接，active={pool_size} idle=0 waiting={waiting}",
            "{cluster} 上 {service} 连接池耗尽，是连接泄漏还是数据库慢？",
        ),
        en_questions=(
            "{service} throwing {error_code}, pool of {pool_size} all busy. Restarts barely help.",
            "DB pool exhausted on {service} {when_en} (waiting={waiting}). Leak or slow DB?",
        ),
        zh_keywords=("连接池耗尽", "HikariCP 连接泄漏", "数据库连接超时"),
        en_keywords=("connection pool exhausted", "HikariCP leak detection", "db pool timeout"),
        codes=(
            "ERR_CONN_POOL_EXHAUSTED",
            "HikariPool-1 connection timeout (30000ms)",
            "MySQL 1040 Too many connections",
        ),
        metric_queries=(
            'hikaricp_connections_pending{{application="{service}"}}',
            'hikaricp_connections_active{{application="{service}"}}',
        ),
        log_queries=(_LOG_ERRORS,),
        zh_cause=(
            "{service} 的连接池耗尽并不是数据库本身变慢，而是连接泄漏和慢调用叠加：{time} 后"
            "上线的对账接口在异常分支中没有归还连接，同时事务内调用了下游 {service2} 的 HTTP "
            "接口（平均 2s），连接被长时间占用。活跃连接打满 {pool_size} 后，新请求等待 30s "
            "超时，报 {error_code}。"
        ),
        zh_steps=(
            "打开 HikariCP 的 leakDetectionThreshold（如 20000ms），"
            "从泄漏堆栈定位未关闭连接的代码。",
            "把对 {service2} 的远程调用移出数据库事务，缩短连接持有时间。",
            "临时止血：滚动重启 {service}，适当调大 maximum-pool-size"
            "（总数不要超过数据库 max_connections）。",
            "为 hikaricp_connections_pending 和活跃连接数配置告警，提前发现连接池打满。",
        ),
        en_cause=(
            "The database itself is not slow: the pool is drained by a connection leak plus "
            "slow work inside transactions. The reconciliation endpoint released after {time} "
            "does not return its connection on the error path, and it calls {service2} over "
            "HTTP (about 2s) while holding a transaction. Once all {pool_size} connections are "
            "busy, new requests wait 30s and fail with {error_code}."
        ),
        en_steps=(
            "Turn on HikariCP leakDetectionThreshold (e.g. 20000ms) and use the leak stack "
            "traces to find the code that never closes its connection.",
            "Move the {service2} call out of the database transaction.",
            "Short term: rolling-restart {service} and raise maximum-pool-size moderately "
            "(keep the total under the database max_connections).",
            "Alert on hikaricp_connections_pending and active connections so the next "
            "exhaustion is caught early.",
        ),
    ),
    _Topic(
        key="mysql_deadlock",
        category="database",
        zh_questions=(
            "{service} 更新 {table} 报 {error_code}，和新上线的批量任务有关吗？",
            "{db_instance} 大量死锁，LATEST DETECTED DEADLOCK 都是 {table}，怎么解决？",
        ),
        en_questions=(
            "{error_code} on {table} in {service}. Is the new batch job to blame?",
            "Frequent deadlocks on {db_instance}, always on {table}. How do we fix this?",
        ),
        zh_keywords=("InnoDB 死锁", "锁等待超时", "批量更新 死锁"),
        en_keywords=("InnoDB deadlock", "lock wait timeout", "batch update deadlock"),
        codes=(
            "MySQL 1213 Deadlock found",
            "MySQL 1205 Lock wait timeout exceeded",
            "ORA-00060 deadlock detected",
        ),
        metric_queries=(
            'rate(mysql_global_status_innodb_deadlocks{{instance="{db_instance}"}}[5m])',
        ),
        log_queries=(_LOG_ERRORS,),
        zh_cause=(
            "死锁发生在 {table} 上：新上线的批量任务按主键 id 升序更新，而在线请求按 order_no "
            "索引更新同一批记录，两个事务以相反顺序获取行锁和间隙锁。InnoDB 检测到循环等待后回滚"
            "其中一方，{service} 因此收到 {error_code}。"
        ),
        zh_steps=(
            "通过 SHOW ENGINE INNODB STATUS 的 LATEST DETECTED DEADLOCK "
            "确认两条冲突 SQL 及加锁索引。",
            "调整批量任务：按与在线请求相同的顺序加锁，缩小每个事务的更新范围，并避开业务高峰。",
            "在 {service} 中对因死锁回滚的事务做有限次数的幂等重试（如 3 次，指数退避）。",
            "评估把隔离级别从 REPEATABLE READ 调整为 READ COMMITTED，减少间隙锁。",
        ),
        en_cause=(
            "The deadlocks are on {table}: the new batch job updates rows in ascending "
            "primary-key order while online requests update the same rows through the "
            "order_no index, so the two transactions take row and gap locks in opposite "
            "order. InnoDB detects the cycle and rolls one of them back, which {service} "
            "sees as {error_code}."
        ),
        en_steps=(
            "Read LATEST DETECTED DEADLOCK in SHOW ENGINE INNODB STATUS to confirm the two "
            "statements and the indexes they lock.",
            "Change the batch job to lock in the same order as online traffic, shrink each "
            "transaction and run it outside peak hours.",
            "Retry deadlock victims in {service} a bounded number of times (3, exponential "
            "backoff), making sure the operation is idempotent.",
            "Consider READ COMMITTED instead of REPEATABLE READ to cut down gap locks.",
        ),
    ),
    _Topic(
        key="dns_failure",
        category="network",
        zh_questions=(
            "{service} 间歇性解析 {dep_host} 失败，报 {error_code}，CoreDNS 有问题吗？",
            "{when_zh} 起 {namespace} 多个服务 DNS 解析超时，{service} 调 {service2} 失败率 {pct}%",
        ),
        en_questions=(
            "{service} intermittently can't resolve {dep_host}: {error_code}. CoreDNS?",
            "DNS timeouts in {namespace} {when_en}, {service} -> {service2} failing at {pct}%.",
        ),
        zh_keywords=("CoreDNS 解析超时", "DNS 解析失败 ndots", "NodeLocal DNSCache"),
        en_keywords=("CoreDNS timeout", "DNS resolution failure ndots", "NodeLocal DNSCache"),
        codes=(
            "NXDOMAIN",
            "SERVFAIL",
            "java.net.UnknownHostException",
            "dial udp 10.96.0.10:53: i/o timeout",
        ),
        metric_queries=(
            "histogram_quantile(0.99, sum by (le) "
            '(rate(coredns_dns_request_duration_seconds_bucket{{cluster="{cluster}"}}[5m])))',
            'sum(rate(coredns_dns_responses_total{{rcode="SERVFAIL", cluster="{cluster}"}}[5m]))',
        ),
        log_queries=('{{namespace="kube-system", k8s_app="kube-dns"}} |= "i/o timeout"',),
        zh_cause=(
            "{cluster} 中 CoreDNS 只有 2 个副本，{time} 前后流量上涨后 CoreDNS 被 CPU 限流；"
            "加上 Pod 默认 ndots:5，每次解析 {dep_host} 都要先尝试多个 search 域，DNS 查询量"
            "被放大 4–5 倍，部分请求超时，返回 {error_code}。"
        ),
        zh_steps=(
            "查看 coredns_dns_request_duration_seconds 和 CoreDNS 的 CPU throttling 指标，"
            "确认是否过载。",
            "临时扩容 CoreDNS 副本（或启用 NodeLocal DNSCache），并放宽其 CPU limit。",
            "在 {service} 的 Pod dnsConfig 中把 ndots 调整为 2，或调用方使用以点结尾的完整域名。",
            "检查客户端 DNS 缓存配置（如 JVM networkaddress.cache.ttl），"
            "避免缓存同时失效后集中解析。",
        ),
        en_cause=(
            "CoreDNS in {cluster} runs only 2 replicas and started being CPU-throttled when "
            "traffic grew around {time}. With the default ndots:5 every lookup of {dep_host} "
            "first walks several search domains, multiplying DNS queries by 4-5x, so part of "
            "them time out and come back as {error_code}."
        ),
        en_steps=(
            "Check coredns_dns_request_duration_seconds and CoreDNS CPU throttling to confirm "
            "the overload.",
            "Scale CoreDNS out (or enable NodeLocal DNSCache) and relax its CPU limit.",
            "Set ndots to 2 in the {service} pod dnsConfig, or use fully qualified names "
            "ending with a dot.",
            "Review client-side DNS caching (JVM networkaddress.cache.ttl) so caches do not "
            "expire all at once.",
        ),
    ),
    _Topic(
        key="packet_loss",
        category="network",
        zh_questions=(
            "{node} 上的 Pod 到数据库丢包 {loss}%，{service} 超时变多，怎么找是哪一跳？",
            "{node} 上 {service} 的 TCP 重传率飙升，网络组说没有变更",
        ),
        en_questions=(
            "~{loss}% packet loss from pods on {node}, {service} timing out. "
            "How to find the bad hop?",
            "TCP retransmits spiking on {node} {when_en}, netops says nothing changed.",
        ),
        zh_keywords=("网络丢包 排查", "TCP 重传率高", "交换机端口 CRC 错误"),
        en_keywords=("packet loss troubleshooting", "TCP retransmission", "switch port CRC"),
        codes=("SocketTimeoutException: Read timed out", "TCP retransmission rate high"),
        metric_queries=(
            'rate(node_netstat_Tcp_RetransSegs{{instance=~"{node}.*"}}[5m])',
            'rate(node_network_receive_errs_total{{instance=~"{node}.*"}}[5m])',
        ),
        log_queries=(_LOG_ERRORS,),
        zh_cause=(
            "丢包集中在 {node} 所在机柜的上联交换机端口：该端口 CRC 错误计数在 {time} 后持续增长，"
            "经过这条链路的流量约 {loss}% 丢包，"
            "TCP 重传把 {service} 的调用延迟放大，最终触发读超时。"
        ),
        zh_steps=(
            "从 {node} 用 mtr -rwc 200 逐跳测试到目标地址，确认丢包从哪一跳开始。",
            "对比同机柜其他节点的 node_netstat_Tcp_RetransSegs，区分单机网卡问题和交换机端口问题。",
            "临时对 {node} 执行 kubectl cordon 并驱逐 {service} 的 Pod 到其他节点。",
            "联系网络组检查交换机端口 CRC 和光模块，必要时更换光模块或切换上联。",
        ),
        en_cause=(
            "The loss is on the uplink switch port of the rack that hosts {node}: its CRC "
            "error counter has been growing since {time}, about {loss}% of the packets on "
            "that link are dropped, and TCP retransmissions stretch {service} calls until "
            "they hit read timeouts."
        ),
        en_steps=(
            "Run mtr -rwc 200 from {node} to the destination to see where the loss starts.",
            "Compare node_netstat_Tcp_RetransSegs with other nodes in the same rack to tell "
            "a bad NIC from a bad switch port.",
            "kubectl cordon {node} and move the {service} pods elsewhere for now.",
            "Ask netops to check CRC counters and the optics on that port and swap the "
            "transceiver or fail over the uplink.",
        ),
    ),
    _Topic(
        key="tls_handshake",
        category="network",
        zh_questions=(
            "{service} 调 {partner} 报 {error_code}，是证书过期了吗？",
            "{lb} TLS 握手失败率 {pct}%，客户端报 {error_code}",
        ),
        en_questions=(
            "{service} -> {partner} failing with {error_code} since {time}. Expired cert?",
            "TLS handshake failures at {lb} up to {pct}%: {error_code}. Where to look?",
        ),
        zh_keywords=("TLS 握手失败", "证书链不完整", "证书过期 排查"),
        en_keywords=("TLS handshake failure", "incomplete certificate chain", "cert expiry"),
        codes=(
            "x509: certificate has expired",
            "SSL_ERROR_SYSCALL",
            "PKIX path building failed",
            "tls: handshake failure (alert 40)",
        ),
        metric_queries=(
            "probe_ssl_earliest_cert_expiry - time()",
            'sum(rate(nginx_ingress_controller_ssl_handshake_errors_total{{cluster="{cluster}"}}[5m]))',
        ),
        log_queries=('{{namespace="{namespace}", app="{service}"}} |~ "(?i)handshake|x509"',),
        zh_cause=(
            "握手失败源于 {time} 的证书轮换：新证书由新的中间 CA 签发，但部署时只配置了叶子证书，"
            "没有带上中间证书。能自动补全证书链的客户端不受影响，而 {service} 所用 JDK 的 "
            "truststore 和部分旧客户端无法完成证书链校验，报 {error_code}。"
        ),
        zh_steps=(
            "用 openssl s_client -connect <域名>:443 -showcerts 查看对端实际返回的证书链和有效期。",
            "在负载均衡或服务端补齐完整证书链（叶子证书 + 中间证书）后重新加载。",
            "如果是第三方证书变更，更新 {service} 镜像中的 truststore 并滚动发布。",
            "把证书到期时间和证书链完整性加入黑盒探测（blackbox_exporter），提前 30 天告警。",
        ),
        en_cause=(
            "The failures start with the certificate rotation at {time}: the new certificate "
            "is issued by a new intermediate CA, but only the leaf certificate was deployed, "
            "without the intermediate. Clients that fetch missing intermediates cope; the JDK "
            "truststore used by {service} and some older clients cannot build the chain and "
            "fail with {error_code}."
        ),
        en_steps=(
            "Run openssl s_client -connect <host>:443 -showcerts to see the chain and "
            "validity actually served.",
            "Serve the full chain (leaf + intermediate) on the load balancer or server and "
            "reload it.",
            "If the change is on the third-party side, update the truststore in the "
            "{service} image and roll it out.",
            "Probe certificate expiry and chain completeness with blackbox_exporter and alert "
            "30 days ahead.",
        ),
    ),
    _Topic(
        key="lb_502_504",
        category="network",
        zh_questions=(
            "{lb} 上 {service} 的 {error_code} 占 {pct}%，后端 Pod 都是 Ready，为什么？",
            "{domain} 间歇性 {error_code}，Nginx 日志是 upstream timed out",
            "每次发布 {service}，{lb} 都会出一波 {error_code}，正常吗？",
        ),
        en_questions=(
            "{lb} returns {error_code} for {pct}% of {service} requests, all pods Ready. Why?",
            "Intermittent {error_code} on {domain} {when_en}, nginx says upstream timed out.",
        ),
        zh_keywords=("负载均衡 502 504", "keepalive 超时 不一致", "upstream timed out"),
        en_keywords=(
            "load balancer 502 504",
            "keepalive idle timeout mismatch",
            "upstream timeout",
        ),
        codes=("HTTP 502", "HTTP 504", "HTTP 502 Bad Gateway", "HTTP 504 Gateway Timeout"),
        metric_queries=(
            'sum by (status) (rate(nginx_ingress_controller_requests{{service="{service}"}}[5m]))',
            _ERROR_RATE,
        ),
        log_queries=(
            '{{namespace="ingress-nginx"}} |= "upstream timed out" |= "{service}"',
            '{{namespace="ingress-nginx"}} |= "{service}" | json | status >= 502',
        ),
        zh_cause=(
            "{lb} 与 {service} 之间的长连接超时配置不一致：后端 keepalive_timeout 为 30s，"
            "小于负载均衡 60s 的空闲超时，后端主动关闭连接时负载均衡仍复用该连接转发请求，"
            "表现为间歇性 502；另外部分慢接口处理时间超过 60s 的代理超时，返回 504。"
        ),
        zh_steps=(
            "在负载均衡访问日志中按 upstream_status 和 upstream_response_time 拆分 502/504，"
            "确认对应的后端 Pod 和接口。",
            "把 {service} 的 keepalive 超时调到大于负载均衡的空闲超时（如 75s）。",
            "为 {service} 配置 preStop（sleep 10–15s）和优雅停机，避免发布时摘流慢于 Pod 退出。",
            "对超过 60s 的慢接口做异步化或单独调大该路由的超时，避免拖垮整条链路。",
        ),
        en_cause=(
            "Keep-alive timeouts between {lb} and {service} do not line up: the backend "
            "closes idle connections after 30s while the load balancer keeps them for 60s, "
            "so it sometimes forwards a request on a connection the backend has just closed "
            "(intermittent 502). Separately, a few slow endpoints exceed the 60s proxy "
            "timeout and come back as 504."
        ),
        en_steps=(
            "Split 502s and 504s in the load balancer access log by upstream_status and "
            "upstream_response_time to pin down backends and endpoints.",
            "Raise the {service} keep-alive timeout above the load balancer idle timeout "
            "(e.g. 75s).",
            "Add a preStop sleep (10-15s) and graceful shutdown to {service} so pods leave "
            "the pool before they exit during deploys.",
            "Make the endpoints that run past 60s asynchronous, or give only that route a "
            "longer timeout.",
        ),
    ),
    _Topic(
        key="disk_full",
        category="capacity",
        zh_questions=(
            "{node} 的 {mount} 用了 {disk_pct}%，{service} 报 {error_code}，先清什么？",
            "{node} 磁盘告警 {disk_pct}%，kubelet 开始驱逐 Pod 了",
        ),
        en_questions=(
            "{mount} on {node} at {disk_pct}%, {service} fails with {error_code}. "
            "What is safe to delete?",
            "{node} disk at {disk_pct}% and kubelet is evicting pods (DiskPressure).",
        ),
        zh_keywords=("磁盘满 清理", "DiskPressure 驱逐", "容器日志 轮转"),
        en_keywords=("disk full cleanup", "DiskPressure eviction", "container log rotation"),
        codes=("No space left on device", "ENOSPC", "DiskPressure"),
        metric_queries=(
            '1 - node_filesystem_avail_bytes{{instance=~"{node}.*", mountpoint="{mount}"}}'
            ' / node_filesystem_size_bytes{{instance=~"{node}.*", mountpoint="{mount}"}}',
        ),
        log_queries=('{{job="kubelet", node="{node}"}} |= "eviction"',),
        zh_cause=(
            "{node} 上 {mount} 的空间主要被 {service} 的容器日志和未清理的旧镜像占用：{time} 后"
            "DEBUG 日志被误打开，单个 Pod 每小时写入约 20GB，而日志轮转只按天切分、没有总量上限，"
            "磁盘使用率升到 {disk_pct}%，触发 {error_code} 和 kubelet 的 DiskPressure 驱逐。"
        ),
        zh_steps=(
            "先把 {service} 的日志级别恢复为 INFO，阻止继续增长。",
            "安全清理：crictl rmi --prune 删除未使用镜像，truncate 已轮转的大日志文件"
            "（不要直接 rm 仍被进程打开的文件）。",
            "配置 kubelet 的 containerLogMaxSize/containerLogMaxFiles 和镜像 GC 阈值。",
            "为磁盘使用率配置 80%/90% 两级告警，并按预测剩余时间（predict_linear）告警。",
        ),
        en_cause=(
            "{mount} on {node} is filled by {service} container logs and stale images: "
            "DEBUG logging was switched on by mistake after {time}, one pod writes about 20GB "
            "an hour, and log rotation is daily with no size cap. Usage reached {disk_pct}%, "
            "hence {error_code} and DiskPressure evictions."
        ),
        en_steps=(
            "Set {service} back to INFO logging to stop the growth.",
            "Free space safely: crictl rmi --prune for unused images and truncate large "
            "rotated logs (do not rm files a process still holds open).",
            "Configure kubelet containerLogMaxSize/containerLogMaxFiles and image GC thresholds.",
            "Alert at 80%/90% usage and on predict_linear time-to-full.",
        ),
    ),
    _Topic(
        key="cpu_throttling",
        category="capacity",
        zh_questions=(
            "{service} CPU limit {cpu_limit} 核，使用率才 60% 但 P99 {p99}ms，是被限流了吗？",
            "{pod} CPU throttled 超过 {pct}%，要去掉 CPU limit 吗？",
        ),
        en_questions=(
            "{service} at 60% of its {cpu_limit}-core limit but p99 is {p99}ms. CFS throttling?",
            "{pod} throttled {pct}% of the time. Should we drop the CPU limit?",
        ),
        zh_keywords=("CPU throttling CFS", "CPU limit 设置", "容器 CPU 限流"),
        en_keywords=("CPU throttling CFS quota", "kubernetes CPU limits", "container throttled"),
        codes=("CPUThrottlingHigh", "container_cpu_cfs_throttled_periods_total"),
        metric_queries=(
            'sum(rate(container_cpu_cfs_throttled_periods_total{{pod="{pod}"}}[5m])) / '
            'sum(rate(container_cpu_cfs_periods_total{{pod="{pod}"}}[5m]))',
            _P99,
        ),
        log_queries=(),
        zh_cause=(
            "{service} 的平均 CPU 使用率不高，但请求是突发的：在 100ms 的 CFS 周期内，"
            "多个 GC 线程和业务线程同时运行，很快用完 {cpu_limit} 核的配额，剩余时间被限流，"
            "单个请求因此多等待几十到上百毫秒，P99 升到 {p99}ms。"
        ),
        zh_steps=(
            "用 container_cpu_cfs_throttled_periods_total / container_cpu_cfs_periods_total "
            "确认限流比例，并与延迟曲线对齐。",
            "根据 JVM 实际可用核数设置 -XX:ActiveProcessorCount 和 GC 线程数，"
            "避免线程数远大于配额。",
            "把 {service} 的 CPU limit 调高到峰值的 1.5 倍，或在节点资源充足时只保留 requests。",
            "观察一周 P99 与节点负载，确认调整没有挤占同节点其他服务。",
        ),
        en_cause=(
            "Average CPU on {service} is modest but the load is bursty: within each 100ms CFS "
            "period several GC and worker threads run at once, use up the {cpu_limit}-core "
            "quota early and sit throttled for the rest of the period. Requests wait tens of "
            "milliseconds extra, which shows up as a {p99}ms p99."
        ),
        en_steps=(
            "Confirm the throttled ratio (throttled_periods / periods) and line it up with "
            "the latency graph.",
            "Size -XX:ActiveProcessorCount and GC threads to the quota so the JVM does not "
            "run far more threads than it has cores.",
            "Raise the {service} CPU limit to ~1.5x the observed peak, or keep only requests "
            "where nodes have headroom.",
            "Watch p99 and node load for a week to make sure neighbours are not starved.",
        ),
    ),
    _Topic(
        key="oomkilled",
        category="capacity",
        zh_questions=(
            "{pod} 一直 OOMKilled，limit {mem_limit}，是 limit 太小还是泄漏？",
            "{when_zh} {service} 多个 Pod 重启，Last State: OOMKilled",
        ),
        en_questions=(
            "{pod} keeps getting OOMKilled (exit 137) at {mem_limit}. Limit too low or a leak?",
            "Several {service} pods restarted {when_en} with OOMKilled. Next steps?",
        ),
        zh_keywords=("OOMKilled exit code 137", "容器内存 limit", "JVM 容器内存"),
        en_keywords=("OOMKilled exit code 137", "container memory limit", "JVM in container"),
        codes=("OOMKilled", "exit code 137"),
        metric_queries=(
            'container_memory_working_set_bytes{{pod=~"{service}.*", container="{service}"}}',
            'kube_pod_container_status_last_terminated_reason{{reason="OOMKilled", '
            'namespace="{namespace}"}}',
        ),
        log_queries=('{{job="kernel", node="{node}"}} |= "Memory cgroup out of memory"',),
        zh_cause=(
            "{service} 容器被内核 OOM killer 杀掉，而不是 JVM 抛出 OutOfMemoryError：堆设置为 "
            "limit 的 85%（-Xmx 固定值），再加上 Metaspace、线程栈和 Netty 堆外内存，总占用超过 "
            "{mem_limit} 的 limit。{time} 前后流量上涨使线程数和直接内存增加，越过了上限。"
        ),
        zh_steps=(
            "对比 container_memory_working_set_bytes 与 JVM 堆使用量，确认超出部分来自堆外。",
            "改用 -XX:MaxRAMPercentage=70 代替固定 -Xmx，为堆外内存预留空间，"
            "并用 -XX:MaxDirectMemorySize 约束直接内存。",
            "临时把 {service} 的内存 limit 调高一档并同步调整 requests，避免被调度到紧张节点。",
            "如果调整后 working set 仍单调增长，按内存泄漏流程处理（NMT、堆 dump 对比）。",
        ),
        en_cause=(
            "The {service} containers are killed by the kernel OOM killer, not by a JVM "
            "OutOfMemoryError: the heap is pinned at 85% of the limit with a fixed -Xmx, and "
            "metaspace, thread stacks and Netty direct buffers push the total past the "
            "{mem_limit} limit. Higher traffic around {time} added threads and direct memory."
        ),
        en_steps=(
            "Compare container_memory_working_set_bytes with JVM heap usage to confirm the "
            "overshoot is off-heap.",
            "Use -XX:MaxRAMPercentage=70 instead of a fixed -Xmx and cap direct memory with "
            "-XX:MaxDirectMemorySize.",
            "Raise the {service} memory limit one step now and adjust requests to match.",
            "If the working set still grows monotonically, treat it as a leak (NMT, heap dump "
            "diff).",
        ),
    ),
    _Topic(
        key="jvm_heap",
        category="capacity",
        zh_questions=(
            "{service} 报 {error_code}，Full GC 频繁，老年代 95% 以上，先 dump 还是先扩容？",
            "{service} GC 停顿 {gc_pause}ms，-Xmx{heap}，接口大量超时",
        ),
        en_questions=(
            "{service} hits {error_code}, old gen 95%+. Heap dump or scale out?",
            "{gc_pause}ms GC pauses on {pod} (-Xmx{heap}). How to analyze?",
        ),
        zh_keywords=("JVM 老年代 Full GC", "堆内存溢出 排查", "GC 停顿 长"),
        en_keywords=("JVM full GC old gen", "heap OutOfMemoryError", "long GC pause"),
        codes=("java.lang.OutOfMemoryError: Java heap space", "GC overhead limit exceeded"),
        metric_queries=(
            'jvm_memory_used_bytes{{application="{service}", area="heap"}}',
            'rate(jvm_gc_pause_seconds_sum{{application="{service}"}}[5m])',
        ),
        log_queries=('{{namespace="{namespace}", app="{service}"}} |= "Pause Full"',),
        zh_cause=(
            "{service} 的老年代被本地缓存占满：{time} 前后的版本把商品/用户信息缓存从 Caffeine "
            "（有容量上限）改成了无界 ConcurrentHashMap，缓存对象只增不减，老年代持续在 95% "
            "以上，Full GC 频繁且回收不掉，最终报 {error_code}。"
        ),
        zh_steps=(
            "先对一个实例摘流后执行 jmap -dump:live,format=b 或 jcmd GC.heap_dump 保留现场，"
            "再重启恢复服务。",
            "用 MAT 分析 dump，查看 Dominator Tree 中占用最大的对象和引用链。",
            "修复缓存：恢复有容量上限和过期时间的缓存实现，并为命中率和条目数加监控。",
            "修复上线前可临时扩容实例数分摊压力，但单纯调大堆只会推迟问题。",
        ),
        en_cause=(
            "The old generation of {service} is filled by a local cache: the release around "
            "{time} replaced a bounded Caffeine cache with an unbounded ConcurrentHashMap, so "
            "entries are never evicted, old gen stays above 95%, full GCs reclaim almost "
            "nothing and the JVM ends with {error_code}."
        ),
        en_steps=(
            "Take one instance out of rotation and capture a heap dump (jcmd GC.heap_dump) "
            "before restarting, so the evidence survives.",
            "Open the dump in MAT and follow the dominator tree to the biggest retainers.",
            "Fix the cache: bring back a size- and TTL-bounded cache and monitor its size and "
            "hit ratio.",
            "Scale out to buy time until the fix ships; a bigger heap only postpones the crash.",
        ),
    ),
    _Topic(
        key="bad_rollout",
        category="deployment",
        zh_questions=(
            "{service} 发布 {new_version} 后错误率 {pct}%，要立即回滚吗？",
            "{service} 新版本 Pod 一直 {error_code}，发布卡在 {ready}/{replicas}",
            "{when_zh} 发了 {service} {new_version} 之后告警一片，怎么确认是不是发布引起的？",
        ),
        en_questions=(
            "{service} {old_version} -> {new_version} rollout, error rate now {pct}%. Roll back?",
            "New {service} pods in {error_code}, rollout stuck at {ready}/{replicas}. Why?",
        ),
        zh_keywords=("发布失败 回滚", "CrashLoopBackOff 排查", "新版本 错误率上升"),
        en_keywords=("bad deployment rollback", "CrashLoopBackOff troubleshooting", "canary"),
        codes=("CrashLoopBackOff", "Readiness probe failed", "ImagePullBackOff"),
        metric_queries=(
            _ERROR_RATE,
            'kube_deployment_status_replicas_unavailable{{deployment="{service}"}}',
        ),
        log_queries=(
            '{{namespace="{namespace}", app="{service}"}} |= "APPLICATION FAILED TO START"',
            _LOG_ERRORS,
        ),
        zh_cause=(
            "故障与 {new_version} 的发布强相关：新版本引入了必填配置项 {config_key}，"
            "但 {cluster} 的 ConfigMap 没有同步，部分 Pod 启动失败进入 {error_code}，"
            "启动成功的 Pod 使用了错误的默认值，导致请求报错，错误率升到 {pct}%。"
        ),
        zh_steps=(
            "立即回滚：kubectl rollout undo deployment/{service}（或在发布平台回滚到 "
            "{old_version}），先恢复业务。",
            "用 kubectl describe pod 和 kubectl logs --previous 查看启动失败原因，"
            "确认缺失的配置项。",
            "补齐 {cluster} 的配置后，先在单个金丝雀实例验证，再分批发布。",
            "在 CI 中增加配置项校验，发布流程加入基于错误率的自动暂停。",
        ),
        en_cause=(
            "The incident lines up with the {new_version} rollout: the new version requires "
            "{config_key}, which was never added to the ConfigMap in {cluster}. Some pods "
            "fail to start ({error_code}); the ones that do start fall back to a wrong "
            "default and fail requests, pushing the error rate to {pct}%."
        ),
        en_steps=(
            "Roll back first: kubectl rollout undo deployment/{service} (or redeploy "
            "{old_version}) to restore service.",
            "Use kubectl describe pod and kubectl logs --previous to confirm the missing setting.",
            "Add the configuration in {cluster}, verify on a single canary, then roll out in "
            "batches.",
            "Validate required settings in CI and let the pipeline auto-pause on error-rate "
            "regressions.",
        ),
    ),
    _Topic(
        key="config_drift",
        category="deployment",
        zh_questions=(
            "{service} 两个机房表现不一致，{config_key} 的值不一样，怎么查配置漂移？",
            "有人手工改了 {service} 的 ConfigMap（{config_key}），影响范围怎么确认？",
        ),
        en_questions=(
            "{service} behaves differently in {cluster}; {config_key} differs. Config drift?",
            "Someone hand-edited the {service} ConfigMap ({config_key}). How to assess impact?",
        ),
        zh_keywords=("配置漂移", "ConfigMap 手工修改", "GitOps OutOfSync"),
        en_keywords=("configuration drift", "ConfigMap manual change", "GitOps OutOfSync"),
        codes=("Argo CD OutOfSync", "ConfigDriftDetected"),
        metric_queries=(_ERROR_RATE, _P99),
        log_queries=('{{namespace="argocd"}} |= "{service}" |= "OutOfSync"',),
        zh_cause=(
            "{cluster} 中 {service} 的 {config_key} 在 {time} 被人通过 kubectl edit 直接修改，"
            "没有回写到 Git；Argo CD 对该应用关闭了自动同步，因此只标记为 {error_code}，"
            "两个机房的配置从那时起不一致，行为差异由此产生。"
        ),
        zh_steps=(
            "用 argocd app diff 或 kubectl diff 对比集群实际配置与 Git 中的期望配置。",
            "通过 Kubernetes 审计日志确认修改人、时间和修改前的值。",
            "评估后把正确值提交到 Git，由 GitOps 同步覆盖，不要在集群里再次手工修改。",
            "为生产命名空间开启 Argo CD 自动同步和 selfHeal，并限制 ConfigMap 的 edit 权限。",
        ),
        en_cause=(
            "{config_key} for {service} in {cluster} was changed with kubectl edit at {time} "
            "and never committed to Git. Auto-sync is off for that Argo CD app, so it only "
            "shows {error_code}; since then the two regions run different configuration, "
            "which explains the different behaviour."
        ),
        en_steps=(
            "Diff live against desired state with argocd app diff or kubectl diff.",
            "Use the Kubernetes audit log to find who changed it, when, and the old value.",
            "Commit the correct value to Git and let GitOps reconcile; no more in-cluster edits.",
            "Enable auto-sync with selfHeal for production namespaces and restrict edit "
            "rights on ConfigMaps.",
        ),
    ),
    _Topic(
        key="feature_flag",
        category="deployment",
        zh_questions=(
            "打开开关 {flag} 后 {service} 错误率 {pct}%，关掉能恢复吗？",
            "{flag} 放量到 {rollout_pct}% 后 {service} 报 {error_code}，是开关引起的吗？",
        ),
        en_questions=(
            "{service} errors at {pct}% right after enabling {flag}. Is turning it off enough?",
            "{flag} at {rollout_pct}% and {service} throws {error_code}. Is the flag the cause?",
        ),
        zh_keywords=("特性开关 回滚", "灰度发布 错误率", "feature flag 事故"),
        en_keywords=("feature flag rollback", "progressive rollout error rate", "kill switch"),
        codes=("HTTP 500", "java.lang.IllegalStateException", "HTTP 503"),
        metric_queries=(_ERROR_RATE,),
        log_queries=(_LOG_ERRORS, '{{namespace="{namespace}", app="{service}"}} |= "{flag}"'),
        zh_cause=(
            "错误与 {flag} 的放量时间完全吻合：开关打开后请求走新逻辑，新逻辑依赖的下游 "
            "{service2} 接口尚未在所有机房部署，命中开关的请求返回 {error_code}；"
            "错误率随灰度比例同步上升。"
        ),
        zh_steps=(
            "在开关平台把 {flag} 回退到 0%（关闭开关即可生效，无需发布），观察错误率是否回落。",
            "按开关命中标签拆分错误率，确认只有命中开关的请求失败。",
            "与 {service2} 的负责人确认其新接口的部署范围，补齐后再按 1%→5%→20% 逐步放量。",
            "为开关放量配置自动熔断：错误率超过阈值时自动关闭。",
        ),
        en_cause=(
            "The errors track the ramp of {flag} exactly: requests behind the flag take the "
            "new code path, which calls a {service2} endpoint that is not deployed in every "
            "region yet, so they fail with {error_code}. The error rate grows with the "
            "rollout percentage."
        ),
        en_steps=(
            "Set {flag} back to 0% in the flag service (no deploy needed) and watch the error "
            "rate drop.",
            "Split the error rate by flag variant to show only flagged requests fail.",
            "Check with the {service2} owners where the new endpoint is deployed, then ramp "
            "again 1% -> 5% -> 20%.",
            "Attach an automatic kill switch to the flag when the error rate crosses a threshold.",
        ),
    ),
    _Topic(
        key="helm_release_failed",
        category="deployment",
        zh_questions=(
            "helm upgrade {release} 失败：{error_code}，现在是 pending-upgrade，怎么恢复？",
            "{release} 升级 chart {chart_version} 超时，一半 Pod 还是旧版本，怎么回滚？",
        ),
        en_questions=(
            "helm upgrade {release} failed: {error_code}. Stuck in pending-upgrade.",
            "{release} upgrade to chart {chart_version} timed out halfway. Safe to roll back?",
        ),
        zh_keywords=("helm upgrade 失败", "pending-upgrade 恢复", "helm rollback"),
        en_keywords=("helm upgrade failed", "pending-upgrade stuck", "helm rollback"),
        codes=(
            "another operation (install/upgrade/rollback) is in progress",
            "timed out waiting for the condition",
            "rendered manifests contain a resource that already exists",
        ),
        metric_queries=('kube_deployment_status_replicas_updated{{deployment="{service}"}}',),
        log_queries=('{{namespace="ci", job="helm-deploy"}} |= "{release}"',),
        zh_cause=(
            "{release} 的升级在 CI 任务被取消时中断，Helm 没有机会把 release 状态从 "
            "pending-upgrade 更新为 failed，后续升级因此报 {error_code}；"
            "同时新 chart {chart_version} "
            "的 readinessProbe 初始延迟过短，新 Pod 长时间不 Ready，--wait 超时。"
        ),
        zh_steps=(
            "用 helm history {release} 查看历史版本，确认最后一个 deployed 的 revision。",
            "执行 helm rollback {release} <revision> 回到稳定版本；如仍被锁定，删除状态为 "
            "pending-upgrade 的 release secret 后再回滚。",
            "修正 chart {chart_version} 中 readinessProbe 的 initialDelaySeconds，"
            "先在 staging 验证。",
            "CI 中使用 helm upgrade --atomic --timeout 10m，避免中断后留下半完成状态。",
        ),
        en_cause=(
            "The {release} upgrade was interrupted when the CI job got cancelled, so Helm "
            "never moved the release from pending-upgrade to failed and every later upgrade "
            "fails with {error_code}. On top of that, chart {chart_version} sets a "
            "readinessProbe initial delay that is too short, so new pods stay unready and "
            "--wait times out."
        ),
        en_steps=(
            "helm history {release} to find the last deployed revision.",
            "helm rollback {release} <revision>; if the release is still locked, delete the "
            "pending-upgrade release secret first.",
            "Fix initialDelaySeconds of the readinessProbe in chart {chart_version} and "
            "verify it on staging.",
            "Use helm upgrade --atomic --timeout 10m in CI so an interruption does not leave "
            "a half-applied release.",
        ),
    ),
    _Topic(
        key="redis_timeout",
        category="dependency",
        zh_questions=(
            "{service} 访问 {redis} 大量 {error_code}，Redis CPU 不高，有大 key 吗？",
            "{redis} 延迟从 1ms 涨到 {p99}ms，{service} 线程池满了",
        ),
        en_questions=(
            "{service}: {error_code} on {redis}, Redis CPU low. Big keys?",
            "{redis} latency 1ms -> {p99}ms {when_en}, {service} thread pool saturated.",
        ),
        zh_keywords=("Redis 超时 大 key", "Redis 慢日志", "Redis 连接数打满"),
        en_keywords=("Redis timeout big key", "Redis slowlog", "Redis maxclients"),
        codes=(
            "RedisCommandTimeoutException",
            "ERR max number of clients reached",
            "READONLY You can't write against a read only replica",
        ),
        metric_queries=(
            'redis_commands_duration_seconds_total{{instance="{redis}"}}',
            'redis_connected_clients{{instance="{redis}"}}',
        ),
        log_queries=(_LOG_ERRORS,),
        zh_cause=(
            "{redis} 上存在一个约 80MB 的大 Hash（活动配置缓存），{time} 起被 {service} "
            "高频 HGETALL 读取；Redis 单线程执行该命令时阻塞其他请求，网络出口带宽也被打满，"
            "客户端大量 {error_code}，连接池等待进一步拖满 {service} 线程池。"
        ),
        zh_steps=(
            "用 SLOWLOG GET 128 和 redis-cli --bigkeys（或 MEMORY USAGE）确认大 key 及相关命令。",
            "临时在 {service} 中为该 key 加本地缓存（如 5s），降低对 Redis 的访问。",
            "把大 Hash 拆分为多个小 key，或改用 HSCAN/HMGET 按需读取字段。",
            "为 Redis 慢日志、网络出口带宽和连接数配置告警，并在代码评审中禁止对大 key 使用 "
            "HGETALL/KEYS。",
        ),
        en_cause=(
            "{redis} holds an ~80MB hash (campaign config cache) that {service} has been "
            "reading with HGETALL at high rate since {time}. Redis is single-threaded, so "
            "each call blocks other commands and the egress bandwidth saturates; clients get "
            "{error_code} and pool waits fill up the {service} thread pool."
        ),
        en_steps=(
            "Confirm with SLOWLOG GET 128 and redis-cli --bigkeys (or MEMORY USAGE).",
            "Put a short local cache (e.g. 5s) in {service} in front of that key.",
            "Split the hash into smaller keys, or read only needed fields with HMGET/HSCAN.",
            "Alert on slowlog, egress bandwidth and client count, and ban HGETALL/KEYS on big "
            "keys in code review.",
        ),
    ),
    _Topic(
        key="kafka_consumer_lag",
        category="dependency",
        zh_questions=(
            "{consumer_group} 在 {kafka_topic} 上 lag {kafka_lag}，扩分区还是扩消费者？",
            "{consumer_group} 频繁 rebalance，报 {error_code}，积压越来越多",
        ),
        en_questions=(
            "{consumer_group} lag on {kafka_topic} is {kafka_lag}. More partitions or consumers?",
            "{consumer_group} keeps rebalancing ({error_code}), backlog growing.",
        ),
        zh_keywords=("Kafka 消费积压", "consumer rebalance 频繁", "max.poll.interval.ms"),
        en_keywords=("Kafka consumer lag", "frequent consumer rebalance", "max.poll.interval.ms"),
        codes=(
            "CommitFailedException",
            "RebalanceInProgressException",
            "consumer poll timeout has expired",
        ),
        metric_queries=(
            'sum(kafka_consumergroup_lag{{consumergroup="{consumer_group}", '
            'topic="{kafka_topic}"}})',
        ),
        log_queries=('{{namespace="{namespace}", app="{service}"}} |= "rebalance"',),
        zh_cause=(
            "{consumer_group} 的单条消息处理时间在 {time} 后变长（每条消息同步调用 {service2}，"
            "其延迟升高），一次 poll 的 500 条消息处理超过 max.poll.interval.ms（5 分钟），"
            "消费者被踢出组触发 rebalance，提交 offset 失败报 {error_code}，"
            "重复消费让积压越来越多。"
        ),
        zh_steps=(
            "查看消费者日志中的 rebalance 频率和单批处理耗时，确认是否超过 max.poll.interval.ms。",
            "临时把 max.poll.records 降到 50–100，保证一批消息能在超时前处理完。",
            "把对 {service2} 的同步调用改为批量或异步，并为其设置超时和熔断。",
            "积压消化后再评估扩容：消费者数量不能超过分区数，需要时再扩分区。",
        ),
        en_cause=(
            "Per-message processing in {consumer_group} slowed down after {time} because each "
            "message makes a synchronous call to {service2}, whose latency went up. A poll of "
            "500 records now takes longer than max.poll.interval.ms (5 min), the consumer is "
            "kicked out of the group, offsets fail to commit ({error_code}) and reprocessing "
            "grows the backlog."
        ),
        en_steps=(
            "Check rebalance frequency and per-batch processing time in the consumer logs "
            "against max.poll.interval.ms.",
            "Lower max.poll.records to 50-100 so a batch finishes within the interval.",
            "Batch or async the {service2} calls and give them a timeout and circuit breaker.",
            "Scale only after the backlog drains: consumers beyond the partition count sit "
            "idle, add partitions if needed.",
        ),
    ),
    _Topic(
        key="third_party_rate_limit",
        category="dependency",
        zh_questions=(
            "{service} 调 {partner} 返回 {error_code}，配额 {rate_limit} QPS，"
            "峰值 {qps}，怎么限流？",
            "{partner} 从 {when_zh} 开始大量 {error_code}，是我们的重试放大了吗？",
        ),
        en_questions=(
            "{partner} returns {error_code}: quota {rate_limit} QPS, we peak at {qps}. "
            "How to throttle?",
            "{partner} started returning {error_code} {when_en}. Are our retries making it worse?",
        ),
        zh_keywords=("第三方接口 限流 429", "重试风暴", "外部依赖 降级"),
        en_keywords=(
            "third-party API rate limit 429",
            "retry storm",
            "degrade external dependency",
        ),
        codes=("HTTP 429 Too Many Requests", "ERR_RATE_LIMITED", "quota exceeded"),
        metric_queries=(
            'sum by (status) (rate(http_client_requests_seconds_count{{service="{service}", '
            'client_name="{partner}"}}[1m]))',
        ),
        log_queries=(_LOG_ERRORS,),
        zh_cause=(
            "{partner} 对我们的配额是 {rate_limit} QPS，{time} 起业务量上涨，{service} 峰值达到 "
            "{qps} QPS，超出部分被返回 {error_code}；客户端配置了立即重试 3 次且没有退避，"
            "被限流的请求又被放大，形成重试风暴。"
        ),
        zh_steps=(
            "在 {service} 出口处加令牌桶限流，把对 {partner} 的请求控制在配额的 90% 以内。",
            "重试改为指数退避加抖动，并尊重响应中的 Retry-After，对 429 不做立即重试。",
            "对非实时场景做排队异步处理或降级（如短信改为延迟发送）。",
            "与 {partner} 沟通提升配额，并为 429 比例和配额使用率配置告警。",
        ),
        en_cause=(
            "{partner} gives us {rate_limit} QPS. Traffic grew after {time} and {service} "
            "peaks at {qps} QPS, so the excess is rejected with {error_code}. The client "
            "retries three times immediately with no backoff, which multiplies the rejected "
            "requests into a retry storm."
        ),
        en_steps=(
            "Add a token-bucket limiter on the {service} egress to {partner} at ~90% of the quota.",
            "Switch retries to exponential backoff with jitter, honour Retry-After and never "
            "retry 429 immediately.",
            "Queue or degrade non-real-time calls (e.g. defer notifications).",
            "Ask {partner} for a higher quota and alert on 429 ratio and quota usage.",
        ),
    ),
    _Topic(
        key="npe_spike",
        category="application",
        zh_questions=(
            "{service} NPE 从 {when_zh} 开始暴增，每分钟 {npe_rate} 次，堆栈在 {class_name}",
            "{service} 异常数告警，全是 NullPointerException，昨天刚上了 {new_version}",
        ),
        en_questions=(
            "{service} NPEs since {time}, {npe_rate}/min at {class_name}. Data or code?",
            "{service} exception alert, all NullPointerException; {new_version} shipped yesterday.",
        ),
        zh_keywords=("NullPointerException 突增", "空指针 发布回归", "异常数告警"),
        en_keywords=("NullPointerException spike", "NPE regression after release", "exceptions"),
        codes=("java.lang.NullPointerException",),
        metric_queries=(
            'sum(rate(logback_events_total{{application="{service}", level="error"}}[5m]))',
        ),
        log_queries=('{{namespace="{namespace}", app="{service}"}} |= "NullPointerException"',),
        zh_cause=(
            "空指针出现在 {class_name}：{new_version} 新增了对用户收货地址 region 字段的读取，"
            "但历史数据中约 3% 的地址该字段为空，代码未做判空；只有命中这部分老数据的请求失败，"
            "所以表现为每分钟 {npe_rate} 次而不是全部失败。"
        ),
        zh_steps=(
            "按异常堆栈和请求参数聚合日志，确认失败请求都对应 region 为空的老数据。",
            "短期：回滚 {new_version} 或通过开关关闭新逻辑；同时对该字段做判空并给出默认值。",
            "数据修复：用脚本补齐历史数据的 region 字段（分批执行，先在从库统计影响范围）。",
            "在单元测试中覆盖空值场景，并为 ERROR 日志数量设置基于基线的告警。",
        ),
        en_cause=(
            "The NPE comes from {class_name}: {new_version} started reading the region field "
            "of shipping addresses, but about 3% of historical addresses have it empty and "
            "the code does not null-check it. Only requests that hit that legacy data fail, "
            "hence {npe_rate}/min instead of a total outage."
        ),
        en_steps=(
            "Group the error logs by stack trace and request parameters to confirm every "
            "failure involves an address with an empty region.",
            "Short term: roll back {new_version} or disable the new path behind its flag, and "
            "add a null check with a sane default.",
            "Backfill region for historical rows in batches (size the impact on a replica first).",
            "Cover the null case in unit tests and alert on ERROR log volume against the baseline.",
        ),
    ),
    _Topic(
        key="checkout_5xx",
        category="application",
        services=_CHECKOUT_SERVICES,
        zh_questions=(
            "/api/v1/checkout 5xx 比例 {pct}%，{service} 报 {error_code}，支付成功率也掉了",
            "大促结算页报错，{service} 返回 {error_code}，QPS {qps}，怎么止血？",
            "checkout 链路大量 {error_code}，{service} 和 {service2} 都在告警，先处理哪个？",
        ),
        en_questions=(
            "Checkout 5xx at {pct}%, {service} logs {error_code}, payment success rate dropped.",
            "Checkout failing in the sale: {service} returns {error_code} at {qps} QPS. Quick fix?",
        ),
        zh_keywords=("下单接口 5xx", "结算链路 超时", "线程池打满 熔断"),
        en_keywords=("checkout 5xx", "checkout dependency timeout", "thread pool bulkhead"),
        codes=("HTTP 500", "HTTP 503", "HTTP 500 (downstream timeout)"),
        metric_queries=(_ERROR_RATE, _P99),
        log_queries=(
            _LOG_ERRORS,
            '{{namespace="{namespace}", app="{service}"}} |= "/api/v1/checkout"',
        ),
        zh_cause=(
            "结算接口的 5xx 来自下游 {service2} 变慢：{time} 后 {service2} 的 P99 升到 {p99}ms，"
            "{service} 对它的同步调用没有设置合理超时（默认 60s），也没有熔断，"
            "Tomcat 工作线程被慢调用占满，连不依赖 {service2} 的请求也开始返回 {error_code}。"
        ),
        zh_steps=(
            "止血：对 {service2} 的调用开启降级（如跳过优惠计算或使用缓存结果），"
            "并临时扩容 {service}。",
            "把对 {service2} 的超时调整为 800ms，并配置熔断（错误率 50%、最小请求数 20）。",
            "为不同下游使用独立线程池（舱壁隔离），避免一个依赖拖垮整个接口。",
            "事后排查 {service2} 变慢的原因，并在大促前压测包含依赖故障的场景。",
        ),
        en_cause=(
            "The checkout 5xx come from a slow dependency: after {time} the p99 of {service2} "
            "went to {p99}ms, and {service} calls it synchronously with the default 60s "
            "timeout and no circuit breaker. Slow calls occupy every Tomcat worker, so even "
            "requests that never touch {service2} start failing with {error_code}."
        ),
        en_steps=(
            "Stop the bleeding: degrade the {service2} call (skip the discount calculation "
            "or use cached results) and scale {service} out.",
            "Set the {service2} timeout to 800ms and add a circuit breaker (50% failure rate, "
            "20 minimum calls).",
            "Give each dependency its own thread pool (bulkhead) so one cannot starve the "
            "whole endpoint.",
            "Afterwards find out why {service2} slowed down and load-test dependency "
            "failures before the next sale.",
        ),
    ),
    _Topic(
        key="memory_leak",
        category="application",
        zh_questions=(
            "{service} 内存每天涨 {leak_mb}MB，一周左右就 OOM，怎么找泄漏点？",
            "{pod} RSS 一直涨但堆正常，是 Netty 堆外内存泄漏吗？",
        ),
        en_questions=(
            "{service} grows ~{leak_mb}MB/day and OOMs about weekly. How to find the leak?",
            "RSS on {pod} keeps growing, heap flat. Off-heap leak (Netty direct buffers)?",
        ),
        zh_keywords=("内存泄漏 定位", "堆外内存泄漏 Netty", "RSS 持续增长"),
        en_keywords=("memory leak investigation", "Netty direct buffer leak", "RSS growth"),
        codes=("OutOfMemoryError: Direct buffer memory", "OOMKilled"),
        metric_queries=(
            'container_memory_rss{{pod=~"{service}.*"}}',
            'jvm_buffer_memory_used_bytes{{application="{service}", id="direct"}}',
        ),
        log_queries=('{{namespace="{namespace}", app="{service}"}} |= "LEAK:"',),
        zh_cause=(
            "{service} 的内存增长来自堆外：自定义的 Netty 解码器在异常分支中没有调用 "
            "ReferenceCountUtil.release()，每次解析失败都会泄漏一个 direct ByteBuf，"
            "约每天 {leak_mb}MB，直到超过容器 limit 或报 {error_code}。"
        ),
        zh_steps=(
            "开启 -Dio.netty.leakDetection.level=advanced，"
            "从日志中的 LEAK: 报告定位分配和最后访问的位置。",
            "用 NMT（-XX:NativeMemoryTracking=summary）和 jvm_buffer_memory_used_bytes "
            "确认增长集中在 direct buffer。",
            "修复解码器，在 finally 中释放 ByteBuf，并补充异常报文的测试用例。",
            "修复上线前，按增长速度安排定期滚动重启作为临时措施。",
        ),
        en_cause=(
            "The growth is off-heap: a custom Netty decoder in {service} does not call "
            "ReferenceCountUtil.release() on its error path, so every failed parse leaks a "
            "direct ByteBuf, roughly {leak_mb}MB a day, until the container limit is hit or "
            "the JVM reports {error_code}."
        ),
        en_steps=(
            "Run with -Dio.netty.leakDetection.level=advanced and follow the LEAK: reports to "
            "the allocation and last access.",
            "Use NMT (-XX:NativeMemoryTracking=summary) and jvm_buffer_memory_used_bytes to "
            "confirm the growth is in direct buffers.",
            "Release the ByteBuf in a finally block and add tests with malformed messages.",
            "Until the fix ships, schedule rolling restarts based on the growth rate.",
        ),
    ),
)

# Operators often add a line of context; it is also what makes some questions long.
_ZH_PREFIXES = ("", "", "", "", "【P1】", "紧急：", "@oncall ", "线上问题：", "请教一下，")
# Suffixes depend on whether the question already ends with a question mark.
_ZH_SUFFIXES = ("", "", "", "", "", "，急", "，帮忙看下", "，谢谢", "，有没有类似的历史故障？")
_ZH_SUFFIXES_AFTER_QUESTION = ("", "", "", "", "", "急", "有没有类似的历史故障？", "谢谢")
_ZH_EXTRAS = (
    "已经重启过一次，恢复了大概十分钟又复现了。监控大盘上同时看到下游 {service2} 的延迟也在上涨，"
    "不确定是因果还是巧合，麻烦帮忙分析一下根因和下一步该怎么做。",
    "影响范围目前是 {cluster} 的全部实例，客服那边已经有用户投诉，"
    "值班群里有人说上周也出现过类似情况但没有留下复盘记录。",
    "{time} 前后没有发布记录，变更平台上只看到一次 {service2} 的配置变更，"
    "需要确认和这次问题有没有关系。",
)
_EN_PREFIXES = ("", "", "", "", "", "", "P1: ", "urgent - ", "@oncall ")
_EN_SUFFIXES = ("", "", "", "", "", "", " Any ideas?", " Thanks!", " Seen this before?")
_EN_EXTRAS = (
    "We already restarted once, it recovered for about ten minutes and then came back. "
    "The dashboard also shows latency rising on {service2} at the same time; not sure "
    "whether that is cause or symptom.",
    "Impact is every instance in {cluster}, customer support is already getting tickets, "
    "and someone in the on-call channel says this happened last week too without a "
    "postmortem.",
    "No deploys around {time}; the change calendar only shows a config change on "
    "{service2}, which we need to rule in or out.",
)

_RETRIEVAL_TOOLS = (
    ("QueryInternalDocsTools", 35),
    ("SearchRunbookTools", 25),
    ("QueryIncidentHistoryTools", 20),
    ("QueryKnowledgeBaseTools", 20),
)
_OTHER_TOOLS = (
    ("QueryMetricsTools", 35),
    ("QueryLogsTools", 35),
    ("DateTimeTools", 15),
    ("QueryTopologyTools", 15),
)

_RETRIEVAL_QUERIES_ZH = {
    "QueryInternalDocsTools": ("{kw} 排查手册", "{service} {kw}", "{error_code} 处理方法"),
    "SearchRunbookTools": ("{kw} runbook", "{service} 应急预案 {kw}"),
    "QueryIncidentHistoryTools": ("{service} {kw} 历史故障", "{error_code} 近 90 天故障记录"),
    "QueryKnowledgeBaseTools": ("{kw} 常见根因", "{kw} 最佳实践"),
}
_RETRIEVAL_QUERIES_EN = {
    "QueryInternalDocsTools": ("{kw} troubleshooting", "{service} {kw}", "{error_code} fix"),
    "SearchRunbookTools": ("runbook {kw}", "{service} on-call runbook {kw}"),
    "QueryIncidentHistoryTools": ("past incidents {service} {kw}", "postmortem {error_code}"),
    "QueryKnowledgeBaseTools": ("{kw} common root causes", "{kw} best practices"),
}
_DATETIME_QUERIES = (
    "now (Asia/Shanghai)",
    "convert {time} Asia/Shanghai to UTC",
    "time range: last 1h",
    "time range: {time} - now",
    "time range: last 24h",
)
_TOPOLOGY_QUERIES = (
    "downstream dependencies of {service}",
    "upstream callers of {service} in {cluster}",
    "call path {service} -> {service2}",
    "pods of {service} in {namespace} and their nodes",
)

# Each failure is (message, min_ms, max_ms): timeouts take as long as the timeout,
# refusals come back fast, which is what a latency chart of failed calls should show.
_Failure = tuple[str, int, int]
_RETRIEVAL_FAILURES: dict[str, tuple[_Failure, ...]] = {
    "QueryInternalDocsTools": (
        (
            "HTTP 503 Service Unavailable from docs-search: upstream connect error or "
            "disconnect/reset before headers",
            40,
            400,
        ),
        ("ReadTimeout: docs-search.internal:443 read timed out (read timeout=5.0)", 5000, 5100),
        ("Elasticsearch search_phase_execution_exception: too_many_clauses", 150, 900),
    ),
    "SearchRunbookTools": (
        ("PermissionDenied: API token lacks scope 'runbook:read'", 20, 120),
        ("HTTP 503 Service Unavailable from runbook-svc", 30, 300),
        ("ConnectTimeout: runbook-svc.internal:8080 connect timed out after 3000 ms", 3000, 3050),
    ),
    "QueryIncidentHistoryTools": (
        ("incident-api returned 500 Internal Server Error", 80, 600),
        ("ReadTimeout: incident-api.internal:443 read timed out after 8000 ms", 7950, 8000),
        ("ConnectionError: [Errno 111] Connection refused (incident-api.internal:443)", 20, 60),
    ),
    "QueryKnowledgeBaseTools": (
        ("HTTP 429 Too Many Requests: embedding service rate limit exceeded", 30, 200),
        ("vector store query timed out after 5000 ms", 5000, 5080),
        ("PermissionDenied: user is not a member of knowledge space 'sre-kb'", 20, 100),
    ),
}
_OTHER_FAILURES: dict[str, tuple[_Failure, ...]] = {
    "QueryMetricsTools": (
        ("Prometheus query failed: query timed out in expression evaluation", 7000, 8000),
        ("422 Unprocessable Entity: bad_data: 1:38: parse error: unexpected '}}'", 20, 80),
        ("exceeded maximum resolution of 11,000 points per timeseries", 30, 150),
    ),
    "QueryLogsTools": (
        ("Loki query failed: context deadline exceeded after 8s", 7900, 8000),
        ("max entries limit per query exceeded (limit: 5000)", 600, 3000),
        ("403 Forbidden: no read access to namespace '{namespace}'", 20, 90),
    ),
    "DateTimeTools": (("ValueError: unknown timezone 'CST+8'", 20, 40),),
    "QueryTopologyTools": (
        ("topology-api returned 502 Bad Gateway", 50, 400),
        ("service '{service}' not found in CMDB", 30, 200),
    ),
}
# Typical latency of a successful call per tool, in ms.
_MEDIAN_MS = {
    "QueryInternalDocsTools": 650,
    "SearchRunbookTools": 420,
    "QueryIncidentHistoryTools": 380,
    "QueryKnowledgeBaseTools": 900,
    "QueryMetricsTools": 450,
    "QueryLogsTools": 1500,
    "DateTimeTools": 30,
    "QueryTopologyTools": 240,
}

# Weights for 0..25 invocations: most sessions need 3-10 calls, a few give up at once
# and a few wander through 20+.
_INVOCATION_COUNT_WEIGHTS = (
    4, 3, 5, 9, 11, 12, 11, 10, 8, 6, 5, 3, 2.5, 2, 1.5, 1.2, 1, 0.8, 0.6, 0.5,
    0.5, 0.4, 0.3, 0.3, 0.2, 0.2,
)  # fmt: skip

# Evidence quality is decided per session, not per call: otherwise every session with
# a handful of retrieval calls would land an L0 hit and the feedback split by evidence
# would be flat. Averaged over the mix the call-level shares stay ~25/35/40.
_EVIDENCE_PROFILES = (
    # (share of sessions, weights for L0, L1, NONE)
    (0.30, (50, 35, 15)),
    (0.40, (20, 45, 35)),
    (0.30, (5, 22, 73)),
)


def _weighted(rng: random.Random, pairs: tuple[tuple[str, int], ...]) -> str:
    names = [name for name, _ in pairs]
    weights = [weight for _, weight in pairs]
    return rng.choices(names, weights=weights)[0]


def _k8s_suffix(rng: random.Random, length: int) -> str:
    return "".join(rng.choice(_K8S_ALPHABET) for _ in range(length))


def _version(rng: random.Random) -> tuple[str, str]:
    major, minor, patch = rng.randint(1, 3), rng.randint(0, 24), rng.randint(0, 9)
    old = f"v{major}.{minor}.{patch}"
    new = f"v{major}.{minor + 1}.0" if rng.random() < 0.6 else f"v{major}.{minor}.{patch + 1}"
    return old, new


def _zh_when(rng: random.Random, hour: int, hhmm: str) -> str:
    if hour < 6:
        part = "凌晨"
    elif hour < 12:
        part = "上午"
    elif hour < 18:
        part = "下午"
    else:
        part = "晚上"
    day = rng.choice(("今天", "今天", "", "昨天" if hour >= 18 else "今天"))
    return f"{day}{part} {hhmm}"


def _en_when(rng: random.Random, hour: int, hhmm: str) -> str:
    if hour >= 19 and rng.random() < 0.4:
        return f"last night around {hhmm}"
    return rng.choice((f"around {hhmm}", f"at {hhmm} today", f"shortly after {hhmm}"))


def _context(rng: random.Random, topic: _Topic) -> dict[str, str]:
    service = rng.choice(topic.services)
    service2 = rng.choice([s for s in _SERVICES if s != service])
    prefix = service.split("-")[0]
    namespace = rng.choice(_NAMESPACES)
    cluster = rng.choice(_CLUSTERS)
    # Incidents cluster in busy hours but do wake people up at night.
    hour = rng.randint(9, 23) if rng.random() < 0.75 else rng.randint(0, 8)
    hhmm = f"{hour:02d}:{rng.randrange(0, 60, 5):02d}"
    baseline = rng.choice((45, 60, 80, 120, 150, 200))
    old_version, new_version = _version(rng)
    rate_limit = rng.choice((50, 100, 200, 500, 1000))
    ctx = {
        "service": service,
        "service2": service2,
        "namespace": namespace,
        "cluster": cluster,
        "pod": f"{service}-{_k8s_suffix(rng, 10)}-{_k8s_suffix(rng, 5)}",
        "node": f"node-{rng.choice(_NODE_ZONES)}-{rng.randint(1, 48):02d}",
        "time": hhmm,
        "when_zh": _zh_when(rng, hour, hhmm),
        "when_en": _en_when(rng, hour, hhmm),
        "db_instance": f"mysql-{prefix}-{rng.choice(('master', 'primary'))}-0{rng.randint(1, 4)}",
        "table": rng.choice(_TABLES.get(prefix, (f"t_{prefix}_record",))),
        "baseline": str(baseline),
        "p99": str(baseline * rng.randint(8, 40)),
        "pct": f"{rng.uniform(2.5, 45.0):.1f}",
        "lag_s": str(rng.choice((45, 120, 300, 900, 1800, 3600))),
        "pool_size": str(rng.choice((20, 30, 50, 100))),
        "waiting": str(rng.randint(40, 400)),
        "disk_pct": str(rng.randint(91, 100)),
        "mount": rng.choice(_MOUNTS),
        "cpu_limit": rng.choice(("1", "2", "4")),
        "mem_limit": rng.choice(("512Mi", "1Gi", "2Gi", "4Gi")),
        "heap": rng.choice(("2g", "4g", "6g", "8g")),
        "gc_pause": str(rng.choice((800, 1200, 2500, 4000))),
        "old_version": old_version,
        "new_version": new_version,
        "release": f"{service}-{namespace}",
        "chart_version": f"{rng.randint(0, 3)}.{rng.randint(1, 30)}.{rng.randint(0, 9)}",
        "ready": "",
        "replicas": "",
        "flag": rng.choice(_FLAGS),
        "rollout_pct": str(rng.choice((5, 10, 20, 50))),
        "config_key": rng.choice(_CONFIG_KEYS),
        "redis": f"redis-{prefix}-cache-0{rng.randint(1, 6)}",
        "kafka_topic": rng.choice((f"{prefix}-events", f"{prefix}.status.changed", "trade-events")),
        "consumer_group": f"{service}-consumer",
        "kafka_lag": f"{rng.randint(20, 3000) * 1000:,}",
        "partner": rng.choice(_PARTNERS),
        "rate_limit": str(rate_limit),
        "qps": str(int(rate_limit * rng.uniform(1.3, 4.0))),
        "lb": rng.choice(_LOAD_BALANCERS),
        "domain": rng.choice(_DOMAINS),
        "dep_host": f"{service2}.{namespace}.svc.cluster.local",
        "loss": str(rng.choice((2, 3, 5, 8, 12, 20))),
        "class_name": f"com.example.{prefix}.{rng.choice(_CLASS_NAMES)}",
        "npe_rate": str(rng.choice((40, 120, 300, 850, 2000))),
        "leak_mb": str(rng.choice((150, 200, 300, 500))),
    }
    replicas = rng.choice((4, 6, 8, 12, 20))
    ctx["replicas"] = str(replicas)
    ctx["ready"] = str(rng.randint(1, replicas - 1))
    # Some codes embed other fields (e.g. the lag), so they are formatted last.
    ctx["error_code"] = rng.choice(topic.codes).format(**ctx)
    return ctx


def _question(rng: random.Random, topic: _Topic, zh: bool, ctx: dict[str, str]) -> str:
    templates = topic.zh_questions if zh else topic.en_questions
    body = rng.choice(templates).format(**ctx)
    if zh:
        suffixes = _ZH_SUFFIXES_AFTER_QUESTION if body.endswith("？") else _ZH_SUFFIXES
        text = rng.choice(_ZH_PREFIXES) + body + rng.choice(suffixes)
        if rng.random() < 0.08:
            sep = "" if text.endswith(("。", "？", "，")) else "。"
            text += sep + rng.choice(_ZH_EXTRAS).format(**ctx)
        return text
    text = rng.choice(_EN_PREFIXES) + body + rng.choice(_EN_SUFFIXES)
    if rng.random() < 0.08:
        sep = " " if text.endswith((".", "?", "!")) else ". "
        text += sep + rng.choice(_EN_EXTRAS).format(**ctx)
    return text


def _tool_query(rng: random.Random, tool: str, topic: _Topic, zh: bool, ctx: dict[str, str]) -> str:
    if tool in _RETRIEVAL_QUERIES_ZH:
        # Agents sometimes search in English even for a Chinese question.
        use_zh = zh and rng.random() < 0.85
        templates = (_RETRIEVAL_QUERIES_ZH if use_zh else _RETRIEVAL_QUERIES_EN)[tool]
        keyword = rng.choice(topic.zh_keywords if use_zh else topic.en_keywords)
        return rng.choice(templates).format(kw=keyword, **ctx)
    if tool == "QueryMetricsTools":
        return rng.choice(topic.metric_queries or (_P99,)).format(**ctx)
    if tool == "QueryLogsTools":
        return rng.choice(topic.log_queries or (_LOG_ERRORS,)).format(**ctx)
    if tool == "DateTimeTools":
        return rng.choice(_DATETIME_QUERIES).format(**ctx)
    return rng.choice(_TOPOLOGY_QUERIES).format(**ctx)


def _duration(rng: random.Random, tool: str) -> int:
    return max(20, min(8000, int(_MEDIAN_MS[tool] * rng.lognormvariate(0.0, 0.6))))


def _invocations(
    rng: random.Random,
    topic: _Topic,
    zh: bool,
    ctx: dict[str, str],
    count: int,
    failure_rate: float,
) -> tuple[DemoInvocation, ...]:
    profile = rng.choices(
        [weights for _, weights in _EVIDENCE_PROFILES],
        weights=[share for share, _ in _EVIDENCE_PROFILES],
    )[0]
    calls = []
    for n in range(1, count + 1):
        retrieval = rng.random() >= 0.25
        if retrieval:
            tool = _weighted(rng, _RETRIEVAL_TOOLS)
        elif n == 1 and rng.random() < 0.5:
            # Resolving "since 14:05" into a time range is a natural first step.
            tool = "DateTimeTools"
        else:
            tool = _weighted(rng, _OTHER_TOOLS)
        query = _tool_query(rng, tool, topic, zh, ctx)
        if rng.random() < failure_rate:
            failures = (_RETRIEVAL_FAILURES if retrieval else _OTHER_FAILURES)[tool]
            message, low, high = rng.choice(failures)
            calls.append(
                DemoInvocation(
                    invocation_id=f"inv-{n:03d}",
                    tool_name=tool,
                    kind="retrieval" if retrieval else "other",
                    status="FAILED",
                    match_level=None,
                    hit_count=0,
                    query=query,
                    error_message=message.format(**ctx),
                    duration_ms=rng.randint(low, high),
                )
            )
            continue
        match_level = None
        hit_count = 0
        if retrieval:
            match_level = rng.choices(("L0", "L1", "NONE"), weights=profile)[0]
            if match_level == "L0":
                hit_count = rng.choices(
                    range(1, 13), weights=(30, 22, 15, 10, 7, 5, 4, 3, 1, 1, 1, 1)
                )[0]
            elif match_level == "L1":
                hit_count = rng.choices(
                    range(1, 13), weights=(8, 12, 14, 14, 12, 10, 8, 7, 5, 4, 3, 3)
                )[0]
        # A few tools do not report their latency.
        duration = None if rng.random() < 0.02 else _duration(rng, tool)
        calls.append(
            DemoInvocation(
                invocation_id=f"inv-{n:03d}",
                tool_name=tool,
                kind="retrieval" if retrieval else "other",
                status="SUCCESS",
                match_level=match_level,
                hit_count=hit_count,
                query=query,
                error_message=None,
                duration_ms=duration,
            )
        )
    return tuple(calls)


def _answer(
    rng: random.Random,
    topic: _Topic,
    zh: bool,
    ctx: dict[str, str],
    invocations: tuple[DemoInvocation, ...],
) -> str:
    levels = {inv.match_level for inv in invocations}
    reference_ids = {
        "rb": f"RB-{rng.randint(100, 999)}",
        "inc": f"INC-2025{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}-{rng.randint(1, 40):02d}",
    }
    if zh:
        steps = "\n".join(
            f"{i}. {step.format(**ctx)}" for i, step in enumerate(topic.zh_steps, start=1)
        )
        parts = [f"根因分析：\n{topic.zh_cause.format(**ctx)}", f"处理建议：\n{steps}"]
        if "L0" in levels:
            parts.append("参考资料：Runbook {rb}，历史故障 {inc}。".format(**reference_ids))
        elif not levels & {"L0", "L1"}:
            parts.append(
                "说明：本次未检索到直接相关的内部文档，以上结论主要基于指标和日志推断，建议人工复核。"
            )
    else:
        steps = "\n".join(
            f"{i}. {step.format(**ctx)}" for i, step in enumerate(topic.en_steps, start=1)
        )
        parts = [f"Root cause:\n{topic.en_cause.format(**ctx)}", f"Recommended steps:\n{steps}"]
        if "L0" in levels:
            parts.append("References: runbook {rb}, past incident {inc}.".format(**reference_ids))
        elif not levels & {"L0", "L1"}:
            parts.append(
                "Note: no directly relevant internal document was found; the conclusion "
                "above is inferred from metrics and logs and should be double-checked."
            )
    return "\n\n".join(parts)


def _feedback(rng: random.Random, invocations: tuple[DemoInvocation, ...]) -> str | None:
    levels = {inv.match_level for inv in invocations}
    # (useful, not_useful, none): better evidence, happier operators, mildly so.
    if "L0" in levels:
        weights = (52, 15, 33)
    elif "L1" in levels:
        weights = (42, 20, 38)
    else:
        weights = (24, 38, 38)
    return rng.choices(("useful", "not_useful", None), weights=weights)[0]


def _build(seed: int, index: int) -> tuple[_Topic, DemoSession]:
    # A generator per session keeps session i identical whatever `count` is; the seed is
    # only demo determinism, not a secret.
    rng = random.Random(seed * 1_000_003 + index)  # noqa: S311
    zh = rng.random() < 0.55
    topic = rng.choice(_TOPICS)
    ctx = _context(rng, topic)
    query = _question(rng, topic, zh, ctx)

    roll = rng.random()
    status = "SUCCESS" if roll < 0.78 else "FAILED" if roll < 0.90 else "RUNNING"

    count = rng.choices(range(len(_INVOCATION_COUNT_WEIGHTS)), weights=_INVOCATION_COUNT_WEIGHTS)[0]
    if status == "RUNNING":
        # Still in progress: only part of the plan has run so far.
        count = rng.randint(0, count)
    all_failed_chance = {"FAILED": 0.20, "SUCCESS": 0.005, "RUNNING": 0.01}[status]
    if count and rng.random() < all_failed_chance:
        failure_rate = 1.0
    else:
        failure_rate = 0.16 if status == "FAILED" else 0.06
    invocations = _invocations(rng, topic, zh, ctx, count, failure_rate)

    answer = None
    feedback = None
    if status == "SUCCESS":
        answer = _answer(rng, topic, zh, ctx, invocations)
        feedback = _feedback(rng, invocations)

    if status == "RUNNING":
        days_ago = 0 if rng.random() < 0.7 else rng.randint(1, 2)
    else:
        # More recent days are busier, as with any growing user base.
        days_ago = rng.choices(range(30), weights=[60 - d for d in range(30)])[0]

    if zh:
        pool, other = _ZH_USERS, _EN_USERS
    else:
        pool, other = _EN_USERS, _ZH_USERS
    user_roll = rng.random()
    if user_roll < 0.10:
        user_id = None
    elif user_roll < 0.85:
        user_id = rng.choice(pool)
    else:
        user_id = rng.choice(other)

    # Operators ask a little while after the incident time quoted in the question.
    incident_at = int(ctx["time"][:2]) * 60 + int(ctx["time"][3:])
    asked_at = min(1439, incident_at + rng.randint(3, 45))

    return topic, DemoSession(
        session_id=f"demo-{index + 1:04d}",
        user_id=user_id,
        query=query,
        status=status,
        answer=answer,
        invocations=invocations,
        feedback=feedback,
        days_ago=days_ago,
        minutes_into_day=asked_at,
    )


def demo_sessions(count: int = 300, *, seed: int = 20261202) -> list[DemoSession]:
    """Return `count` demo sessions; the same seed always yields the same sessions.

    Session i does not depend on `count`, so `demo_sessions(300)` is a prefix of
    `demo_sessions(500)`.
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    return [_build(seed, index)[1] for index in range(count)]


def _best_evidence(session: DemoSession) -> str:
    levels = {inv.match_level for inv in session.invocations}
    return "L0 hit" if "L0" in levels else "L1 only" if "L1" in levels else "no hit"


def _is_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def _bucket(n: int) -> str:
    if n == 0:
        return "0"
    if n <= 2:
        return "1-2"
    if n <= 10:
        return "3-10"
    if n <= 19:
        return "11-19"
    return "20+"


def _pct(part: int, whole: int) -> str:
    return f"{part:5d} ({100 * part / whole:5.1f}%)" if whole else f"{part:5d}"


def _print_counter(title: str, counter: Counter[str], order: tuple[str, ...] = ()) -> None:
    total = sum(counter.values())
    print(f"{title} (n={total})")
    keys = list(order) + sorted(k for k in counter if k not in order)
    for key in keys:
        print(f"  {key:<14} {_pct(counter[key], total)}")


if __name__ == "__main__":
    built = [_build(20261202, index) for index in range(300)]
    sessions = [session for _, session in built]
    calls = [inv for s in sessions for inv in s.invocations]

    problems = []
    if len({s.session_id for s in sessions}) != len(sessions):
        problems.append("duplicate session ids")
    if demo_sessions(500)[:300] != sessions or demo_sessions(300) != sessions:
        problems.append("sessions depend on count")
    for s in sessions:
        ids = [inv.invocation_id for inv in s.invocations]
        if len(set(ids)) != len(ids):
            problems.append(f"{s.session_id}: duplicate invocation ids")
        if (s.answer is not None or s.feedback is not None) and s.status != "SUCCESS":
            problems.append(f"{s.session_id}: answer/feedback on a {s.status} session")
        if len(s.session_id) > 64 or (s.user_id and len(s.user_id) > 64):
            problems.append(f"{s.session_id}: id too long")
        for inv in s.invocations:
            if len(inv.invocation_id) > 64 or len(inv.tool_name) > 128:
                problems.append(f"{s.session_id}/{inv.invocation_id}: field too long")
            if (inv.match_level in (None, "NONE")) != (inv.hit_count == 0):
                problems.append(f"{s.session_id}/{inv.invocation_id}: hit_count mismatch")
            if inv.duration_ms is not None and not 20 <= inv.duration_ms <= 8000:
                problems.append(f"{s.session_id}/{inv.invocation_id}: duration out of range")

    _print_counter("status", Counter(s.status for s in sessions), ("SUCCESS", "FAILED", "RUNNING"))
    _print_counter(
        "language", Counter("zh" if _is_chinese(s.query) else "en" for s in sessions), ("zh", "en")
    )
    _print_counter("category", Counter(topic.category for topic, _ in built))
    _print_counter(
        "invocations per session",
        Counter(_bucket(len(s.invocations)) for s in sessions),
        ("0", "1-2", "3-10", "11-19", "20+"),
    )
    _print_counter("call kind", Counter(inv.kind for inv in calls), ("retrieval", "other"))
    _print_counter("call status", Counter(inv.status for inv in calls), ("SUCCESS", "FAILED"))
    _print_counter(
        "match level (retrieval, SUCCESS)",
        Counter(
            str(inv.match_level)
            for inv in calls
            if inv.kind == "retrieval" and inv.status == "SUCCESS"
        ),
        ("L0", "L1", "NONE"),
    )
    all_failed = sum(
        1 for s in sessions if s.invocations and all(i.status == "FAILED" for i in s.invocations)
    )
    print(f"sessions whose calls all FAILED: {all_failed}")
    success = [s for s in sessions if s.status == "SUCCESS"]
    _print_counter(
        "feedback (SUCCESS sessions)",
        Counter(str(s.feedback) for s in success),
        ("useful", "not_useful", "None"),
    )
    print("feedback by best evidence (SUCCESS sessions)")
    for label in ("L0 hit", "L1 only", "no hit"):
        mix = Counter(str(s.feedback) for s in success if _best_evidence(s) == label)
        total = sum(mix.values())
        shares = ", ".join(
            f"{key} {_pct(mix[key], total).strip()}" for key in ("useful", "not_useful", "None")
        )
        print(f"  {label:<8} n={total:<4} {shares}")
    long_queries = sum(1 for s in sessions if len(s.query) > 100)
    templates = sum(len(t.zh_questions) + len(t.en_questions) for t in _TOPICS)
    print(f"questions > 100 chars: {long_queries}; distinct question templates: {templates}")
    print(f"distinct questions: {len({s.query for s in sessions})} / {len(sessions)}")
    if problems:
        print("PROBLEMS:")
        for problem in problems[:20]:
            print(f"  {problem}")
        raise SystemExit(1)
    print("all checks passed")

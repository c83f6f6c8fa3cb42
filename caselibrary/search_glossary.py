"""An operations glossary, English and Chinese, that lets a question's words find a case
written in the other language.

The lexical ranking matches words, so an English question shares none with a Chinese case
("payment service memory leak" and "支付服务内存泄漏"); the embedding model bridges the two
languages, but a small one does so weakly. A question's words that the glossary knows
bring their counterparts in the other language, in both directions, into the full-text
query (dictionary-based cross-language retrieval), into the text the model embeds and
into the terms a passage is checked for (caselibrary/search_engine.py). The entries are
the everyday vocabulary of incidents (resources, symptoms, components, actions), not any
library's content; an operator adds their own domain's words by adding lines.

Pure Python. Each line: English words = Chinese words, alternatives separated by commas on
either side. A phrase of several words matches when the question holds all its terms.
"""

from __future__ import annotations

from functools import lru_cache

from django.conf import settings

from caselibrary.search_backends.base import get_backend
from caselibrary.search_text import tokenize

ENTRIES = """
cpu usage, cpu utilization = cpu使用率, cpu利用率
usage, utilization = 使用率, 利用率, 占用
load = 负载
high load = 高负载, 负载高
memory, ram = 内存
memory leak, leak = 内存泄漏, 泄漏, 泄露
oom = 内存溢出, 内存不足, oom
heap = 堆, 堆内存
stack = 栈
disk = 磁盘, 硬盘
disk space, disk full = 磁盘空间, 磁盘满
space = 空间
full = 满
inode = inode
file descriptor, fd = 文件描述符, 句柄
handle = 句柄
io, i/o = io, 读写
latency = 延迟, 时延
slow = 慢, 缓慢
slow query = 慢查询
query = 查询
timeout, timed = 超时
spike, spikes, surge, soar, skyrocket = 飙高, 飙升, 激增, 暴涨, 突增
increase, rise, grow, growing = 上升, 增长, 升高, 增加
drop, decrease, fall = 下降, 降低, 减少
exceed, exceeds, above = 超过
threshold = 阈值
percent = 百分比
peak = 峰值, 高峰
traffic = 流量
bandwidth = 带宽
throughput = 吞吐, 吞吐量
qps, tps = qps, tps
request = 请求
response = 响应
response time = 响应时间
error = 错误, 报错, 异常
exception = 异常
error rate = 错误率
failure, fail, failed, failing = 失败, 故障
fault, outage, incident = 故障, 事故
unavailable, outage = 宕机, 不可用, 挂掉
crash, crashed, crashes = 崩溃, 挂掉
restart, restarted, restarting, reboot = 重启
hang, hung, stuck, freeze, frozen = 卡住, 卡死, 假死, 夯住
unresponsive, not responding = 无响应, 没有响应
refused = 拒绝
connection refused = 连接拒绝, 拒绝连接
connection = 连接
connections = 连接数
connection pool, pool = 连接池
pool exhausted = 连接池耗尽
exhausted, exhaustion = 耗尽, 用尽
reset = 重置
network = 网络
packet loss = 丢包
packet = 数据包, 包
dns, resolve, resolution = dns, 域名解析, 解析
domain = 域名
certificate, cert = 证书
expired, expire, expiry, expiration = 过期, 到期, 失效
ssl, tls = ssl, tls
handshake = 握手
port = 端口
firewall = 防火墙
load balancer = 负载均衡
proxy = 代理
gateway = 网关
route, routing = 路由
database, db = 数据库
table = 表
index = 索引
lock = 锁
row lock = 行锁
table lock = 表锁
deadlock = 死锁
lock wait = 锁等待
transaction = 事务
long transaction = 长事务
commit = 提交
rollback = 回滚
replication = 复制, 同步
replica, slave, standby = 从库, 备库, 副本
primary, master = 主库, 主节点
lag, delay = 延迟
replication lag = 复制延迟, 主从延迟
sync, synchronization = 同步
failover, switchover = 切换, 主备切换, 故障转移
backup = 备份
restore = 恢复, 还原
binlog = binlog, 日志
cache = 缓存
cache miss = 缓存未命中
hit rate = 命中率
penetration = 穿透
avalanche = 雪崩
hot key = 热点, 热key
eviction, evicted, evict = 淘汰, 驱逐
expire key = 过期键
queue = 队列
message = 消息
message queue, mq = 消息队列
backlog, pile up, piling up = 积压, 堆积
consumer = 消费者, 消费
producer = 生产者
consumer lag = 消费延迟, 消费积压
partition = 分区
topic = 主题
broker = broker
offset = 偏移量, 位点
rebalance = 重平衡
duplicate, duplicated = 重复
lost, loss, missing = 丢失
data loss = 数据丢失
consistency, inconsistent = 一致性, 不一致
container = 容器
pod = pod
node = 节点
cluster = 集群
namespace = 命名空间
deployment, deploy = 部署, 发布
release = 发布, 上线
rollout = 发布, 滚动发布
scale, scaling, autoscaling = 扩容, 缩容, 扩缩容
scale out, scale up = 扩容
image = 镜像
pull = 拉取
probe = 探针
liveness = 存活
readiness = 就绪
health check = 健康检查
evicted pod = 驱逐
scheduling, schedule, scheduled = 调度
pending = 等待, 挂起
volume = 卷, 存储卷
storage = 存储
mount = 挂载
quota = 配额
limit = 限制, 上限
rate limit, throttle, throttling = 限流
circuit breaker = 熔断
degrade, degradation = 降级
retry, retries = 重试
jvm = jvm
gc, garbage collection = gc, 垃圾回收
full gc = full gc
thread = 线程
thread pool = 线程池
process = 进程
zombie = 僵尸
service = 服务
microservice = 微服务
api, interface = 接口, api
upstream = 上游
downstream = 下游
dependency = 依赖
call = 调用
log, logs, logging = 日志
alert, alarm = 告警, 报警
monitor, monitoring = 监控
metric, metrics = 指标
dashboard = 大盘, 看板
config, configuration = 配置
parameter = 参数
setting = 设置
permission, denied = 权限, 拒绝
permission denied = 权限不足, 没有权限
authentication, auth, login = 认证, 鉴权, 登录
password = 密码
account = 账号, 账户
user = 用户
token = 令牌, token
session = 会话
version = 版本
upgrade = 升级
downgrade = 降级
migration, migrate = 迁移
cron, job = 定时任务, 任务
batch = 批量, 批处理
task = 任务
script = 脚本
file = 文件
directory, folder = 目录
write = 写入, 写
read = 读取, 读
payment, pay = 支付
order = 订单
inventory, stock = 库存
user center = 用户中心
search = 搜索
login service = 登录服务
frontend = 前端
backend = 后端
web page, page = 页面
website, site = 网站
mobile, app = 客户端, 应用
machine, server, host = 服务器, 机器, 主机
instance = 实例
virtual machine, vm = 虚拟机
kernel = 内核
operating system = 操作系统
clock, time = 时钟, 时间
time drift, clock skew = 时钟漂移, 时间不同步
slowly = 缓慢
frequent, frequently = 频繁
intermittent, intermittently, occasional = 偶发, 间歇
fix = 修复
root cause = 根因, 根本原因
solution = 解决方案
workaround = 临时方案, 规避
rollback release = 回滚
alert storm = 告警风暴
nginx = nginx
mysql = mysql
redis = redis
kafka = kafka
elasticsearch, es = elasticsearch, es
kubernetes, k8s = kubernetes, k8s
docker = docker
java = java
"""


def _terms(phrase: str) -> frozenset[str]:
    return frozenset(tokenize(phrase))


@lru_cache(maxsize=1)
def _pairs() -> dict[str, list[tuple[frozenset[str], frozenset[str]]]]:
    """(the terms a phrase needs, the terms it brings), both directions, one per phrase,
    listed under each term the phrase needs."""
    by_term: dict[str, list[tuple[frozenset[str], frozenset[str]]]] = {}
    for line in ENTRIES.strip().splitlines():
        english, _, chinese = line.partition("=")
        english_phrases = [_terms(p) for p in english.split(",") if p.strip()]
        chinese_phrases = [_terms(p) for p in chinese.split(",") if p.strip()]
        english_terms = frozenset().union(*english_phrases)
        chinese_terms = frozenset().union(*chinese_phrases)
        pairs = [(phrase, chinese_terms) for phrase in english_phrases]
        pairs += [(phrase, english_terms) for phrase in chinese_phrases]
        for needed, brought in pairs:
            for term in needed:
                by_term.setdefault(term, []).append((needed, brought))
    return by_term


def counterparts(terms: list[str]) -> list[str]:
    """The terms in the other language of the glossary phrases that `terms` hold, none of
    them already among `terms`, in the order the question's terms find them."""
    held = set(terms)
    found: dict[str, None] = {}
    by_term = _pairs()
    for term in dict.fromkeys(terms):
        for needed, brought in by_term.get(term, ()):
            if needed <= held:
                found.update(dict.fromkeys(sorted(brought - held)))
    return list(found)


def glossary_word(term: str) -> bool:
    """Whether a phrase of the glossary holds `term` (a search term)."""
    return term in _pairs()


def uncommon_terms(terms: list[str]) -> list[str]:
    """`terms` but those held by more than CASE_SEARCH_COMMON_SHARE of the passages: such a
    term weighs next to nothing in a BM25 ranking, and the lexical query reads every
    passage that holds it (glossary words such as 连接 or 失败 are in a third of the
    passages of the benchmark's 19,000: when MariaDB ranked them with InnoDB's full-text
    query, with every counterpart it took 3.9-4.9 ms at the median, 3.2 ms without the
    common ones, 0.7-1.1 ms with the question's own terms alone). Estimated in the
    database that stores the passages, whichever backend serves the search."""
    if not terms:
        return []
    store = get_backend("database")
    common = store.common_terms(settings.CASE_SEARCH_COMMON_SHARE)  # type: ignore[attr-defined]
    return [term for term in terms if term not in common]

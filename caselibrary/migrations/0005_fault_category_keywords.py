"""Keywords on the fault-category taxonomy (seeded for the categories of 0003), and the
side table that keeps what the automatic structuring proposed for each AUTO case."""

import django.db.models.deletion
from django.db import migrations, models

# Chinese and English, as operators and the agent write them. Operators refine them in
# the admin; a category they added has none until they give it some.
KEYWORDS = {
    "DATABASE": (
        "数据库, 慢查询, 慢 SQL, 主从延迟, 复制延迟, 死锁, 锁等待, 连接池, 索引, 表锁, "
        "mysql, mariadb, postgresql, postgres, oracle, sql, innodb, deadlock, slow query, "
        "replication lag, lock wait, connection pool, too many connections"
    ),
    "NETWORK": (
        "网络, 丢包, 网络延迟, 域名解析, 证书, 负载均衡, 防火墙, 端口不通, 连接被拒绝, "
        "dns, tls, ssl, certificate, packet loss, load balancer, firewall, network, "
        "connection refused, connection reset, no route to host, ECONNREFUSED, ECONNRESET, "
        "EHOSTUNREACH, ETIMEDOUT"
    ),
    "CAPACITY": (
        "磁盘满, 磁盘空间, 空间不足, 内存不足, 内存溢出, CPU 打满, CPU 使用率, 配额, 扩容, "
        "容量, 文件句柄, disk full, no space left, out of memory, oom, OOMKilled, ENOSPC, "
        "EMFILE, too many open files, quota, capacity, cpu throttling, evicted"
    ),
    "DEPLOYMENT_CONFIG": (
        "发布, 上线, 回滚, 配置错误, 配置变更, 变更, 灰度, 开关, 镜像, 版本, deploy, "
        "deployment, rollout, rollback, release, misconfiguration, config change, "
        "feature flag, helm, ImagePullBackOff, ErrImagePull, CreateContainerConfigError"
    ),
    "DEPENDENCY": (
        "依赖, 下游, 上游, 第三方, 缓存, 消息队列, 限流, 熔断, 注册中心, redis, kafka, "
        "rabbitmq, zookeeper, downstream, upstream, third-party, dependency, cache, "
        "message queue, rate limit, circuit breaker"
    ),
    "APPLICATION_ERROR": (
        "异常, 报错, 空指针, 内存泄漏, 代码缺陷, 堆栈, 崩溃, exception, stack trace, "
        "NullPointerException, memory leak, bug, panic, crash, CrashLoopBackOff, "
        "HTTP 500, 5xx"
    ),
}


def seed_keywords(apps, schema_editor):
    FaultCategory = apps.get_model("caselibrary", "FaultCategory")
    for code, keywords in KEYWORDS.items():
        # Only where nobody has written keywords yet.
        FaultCategory.objects.filter(code=code, keywords="").update(keywords=keywords)


class Migration(migrations.Migration):

    dependencies = [
        ('caselibrary', '0004_case_source_index_and_plural_label'),
    ]

    operations = [
        migrations.CreateModel(
            name='CaseStructuring',
            fields=[
                ('case', models.OneToOneField(db_column='case_id', db_constraint=False, on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='structuring', serialize=False, to='caselibrary.caselibrary', verbose_name='case')),
                ('proposed_category', models.CharField(max_length=64, verbose_name='proposed fault category')),
                ('proposed_error_code', models.CharField(blank=True, max_length=64, null=True, verbose_name='proposed error code')),
                ('method', models.CharField(max_length=32, verbose_name='method')),
                ('proposed_at', models.DateTimeField(verbose_name='proposed at')),
            ],
            options={
                'verbose_name': 'case structuring',
                'verbose_name_plural': 'case structurings',
                'db_table': 'case_structuring',
            },
        ),
        migrations.AddField(
            model_name='faultcategory',
            name='keywords',
            field=models.TextField(blank=True, default='', help_text='Words that put a new automatic case in this category, separated by commas or new lines, e.g. 慢查询, deadlock. The category with the most keywords found in the question and answer wins; none found keeps GENERAL.', verbose_name='keywords'),
        ),
        migrations.RunPython(seed_keywords, migrations.RunPython.noop),
    ]

"""The starting taxonomy: GENERAL (what automatic cases get) and the usual SRE categories."""

from django.db import migrations

CATEGORIES = [
    ("GENERAL", "未分类 / General", "Not curated yet: every automatic case starts here."),
    ("DATABASE", "数据库 / Database", "Slow queries, replication lag, locks, connection pools."),
    ("NETWORK", "网络 / Network", "DNS, packet loss, TLS, load balancers, timeouts between hosts."),
    ("CAPACITY", "容量 / Capacity", "Disk, CPU, memory, quotas, OOM, throttling."),
    ("DEPLOYMENT_CONFIG", "发布与配置 / Deployment & config", "Bad rollouts, config drift, flags."),
    ("DEPENDENCY", "依赖服务 / Dependency", "Caches, queues, third-party APIs, rate limits."),
    ("APPLICATION_ERROR", "应用错误 / Application error", "Exceptions, 5xx, leaks, bad releases."),
]


def seed(apps, schema_editor):
    FaultCategory = apps.get_model("caselibrary", "FaultCategory")
    for code, name, description in CATEGORIES:
        FaultCategory.objects.get_or_create(
            code=code, defaults={"name": name, "description": description}
        )


class Migration(migrations.Migration):
    dependencies = [("caselibrary", "0002_faultcategory")]

    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]

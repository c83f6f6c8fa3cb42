from django.db import models
from django.utils.translation import gettext_lazy as _


class WorkerHeartbeat(models.Model):
    """When a task-queue worker on each host last ran the heartbeat task.

    /readyz reads it: the newest beat tells whether any qcluster is taking work.
    """

    host = models.CharField(_("host"), max_length=255, primary_key=True)
    beat_at = models.DateTimeField(_("last heartbeat"))

    class Meta:
        db_table = "worker_heartbeat"
        verbose_name = _("worker heartbeat")
        verbose_name_plural = _("worker heartbeats")

    def __str__(self) -> str:
        return f"{self.host} @ {self.beat_at:%Y-%m-%d %H:%M:%S}"


class OpinionBudget(models.Model):
    """Calls made to a paid opinion provider on one UTC day.

    In the database, not the cache: the default cache is per process, and the budget is
    for every web and worker process together. One row a day, raised by a conditional
    UPDATE (`calls < budget`), so concurrent workers cannot overspend it.
    """

    day = models.DateField(_("day (UTC)"), primary_key=True)
    calls = models.PositiveIntegerField(_("calls"), default=0)

    class Meta:
        db_table = "opinion_daily_budget"
        verbose_name = _("opinion budget")
        verbose_name_plural = _("opinion budgets")

    def __str__(self) -> str:
        return f"{self.day}: {self.calls}"

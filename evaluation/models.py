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

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = _("Evidence scoring")

    def ready(self) -> None:
        from config import database_checks, index_checks  # noqa: F401 (the checks migrate runs)
        from config.metrics_scrape import SCRAPE_COLLECTORS
        from evaluation import checks  # noqa: F401 (registers the checks)
        from evaluation.health import HeartbeatCollector

        if not any(isinstance(c, HeartbeatCollector) for c in SCRAPE_COLLECTORS):
            SCRAPE_COLLECTORS.append(HeartbeatCollector())

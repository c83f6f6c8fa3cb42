from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = _("Evidence scoring")

    def ready(self) -> None:
        from evaluation import checks  # noqa: F401 (registers the checks)

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DiagnosisConfig(AppConfig):
    name = "diagnosis"
    verbose_name = _("Diagnosis sessions")

    def ready(self) -> None:
        # Connects the signals that drop a saved or deleted key from the key cache.
        from diagnosis import apikeys  # noqa: F401

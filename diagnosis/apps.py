from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DiagnosisConfig(AppConfig):
    name = "diagnosis"
    verbose_name = _("Diagnosis sessions")

    def ready(self) -> None:
        from config.logging import set_session_id_rule

        # Connects the signals that drop a saved or deleted key from the key cache.
        from diagnosis import apikeys  # noqa: F401
        from diagnosis.models import SESSION_ID_LOOKUP_PATTERN

        # A request's log lines name the session of its URL only when it is a session
        # id (config.logging.tag_request): the API's rule of a session id to look up.
        set_session_id_rule(SESSION_ID_LOOKUP_PATTERN.fullmatch)

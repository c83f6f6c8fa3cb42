from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class FeedbackConfig(AppConfig):
    name = "feedback"
    verbose_name = _("Feedback")

    def ready(self) -> None:
        from config.middleware import register_error_shape
        from feedback.views import contract_error

        register_error_shape("/api/feedback", contract_error)

from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class CaseLibraryConfig(AppConfig):
    name = "caselibrary"
    verbose_name = _("Case library")

    def ready(self) -> None:
        from caselibrary.triggers import after_migrate

        post_migrate.connect(after_migrate, sender=self)

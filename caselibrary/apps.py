from django.apps import AppConfig
from django.db.models.signals import post_migrate, pre_migrate
from django.utils.translation import gettext_lazy as _


class CaseLibraryConfig(AppConfig):
    name = "caselibrary"
    verbose_name = _("Case library")

    def ready(self) -> None:
        from caselibrary.triggers import after_migrate, before_migrate

        pre_migrate.connect(before_migrate, sender=self)
        post_migrate.connect(after_migrate, sender=self)

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CaseLibraryConfig(AppConfig):
    name = "caselibrary"
    verbose_name = _("Case library")

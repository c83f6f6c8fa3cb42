from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate, pre_migrate
from django.utils.translation import gettext_lazy as _


class CaseLibraryConfig(AppConfig):
    name = "caselibrary"
    verbose_name = _("Case library")

    def ready(self) -> None:
        from caselibrary.search_backends import refill
        from caselibrary.search_backends.base import collection_lost
        from caselibrary.triggers import after_migrate, before_migrate

        pre_migrate.connect(before_migrate, sender=self)
        post_migrate.connect(after_migrate, sender=self)

        # A search collection found lost or empty: every case is queued to fill it again.
        collection_lost.connect(_refill_when_collection_lost, dispatch_uid="case_index_refill")
        # /readyz's `search_index` (with Milvus) and /metrics' cases waiting for the indexer.
        refill.register()


def _refill_when_collection_lost(sender: object, **kwargs: Any) -> None:
    # The indexer's service, loaded when a collection is lost, not by every process.
    from caselibrary.services.index import refill_when_collection_lost

    refill_when_collection_lost(sender, **kwargs)

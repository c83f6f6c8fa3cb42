import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

from config.request_body import ChunkedBodyLength

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = ChunkedBodyLength(
    get_wsgi_application(),
    limit=max(
        settings.API_MAX_BODY_BYTES,
        settings.OTLP_MAX_BODY_BYTES,
        settings.CASE_IMPORT_MAX_BYTES,
    ),
)

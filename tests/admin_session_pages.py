"""The sessions admin's addresses: its list and a session's page."""

from diagnosis.models import DiagnosisSession

LIST = "/admin/diagnosis/diagnosissession/"


def change_url(session: DiagnosisSession) -> str:
    return f"{LIST}{session.pk}/change/"

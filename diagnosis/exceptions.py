"""Why a session cannot be found or changed; raised by the services and selectors alike."""

from config.api import Conflict, NotFound
from diagnosis.models import DiagnosisSession


class SessionNotFound(NotFound):
    def __init__(self, session_id: str) -> None:
        super().__init__(f'会话 "{session_id}" 不存在')


class SessionAlreadyExists(Conflict):
    def __init__(self, session_id: str) -> None:
        super().__init__(f'会话 "{session_id}" 已存在')


class SessionFinished(Conflict):
    """`doing` names what was refused, as the caller sees it: a case search is recorded
    as a tool invocation, but the agent asked to search."""

    def __init__(self, session: DiagnosisSession, doing: str = "记录工具调用") -> None:
        self.session = session
        super().__init__(f'会话 "{session.session_id}" 已是 {session.status} 状态，不能再{doing}')


class CompletionConflict(Conflict):
    def __init__(self, session: DiagnosisSession) -> None:
        super().__init__(
            f'会话 "{session.session_id}" 已以 {session.status} 结束，且结果不同；'
            "一个会话只能结束一次"
        )

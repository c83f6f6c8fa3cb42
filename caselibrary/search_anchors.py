"""The reference a question's closeness is measured against.

Cosines of a small embedding model sit in a narrow band (e5: most text pairs of one
domain score 0.75-0.9), and where in the band depends on the question: a short, generic
question is close to everything. A case answers a question when it is much closer to it
than unrelated operations text is. That text is this fixed list, the same for every
library, so the decision does not move with the size or the content of the library.
"""

from __future__ import annotations

import threading

import numpy as np

from caselibrary.embedding import embed_texts

ANCHORS = (
    "服务器上的定时任务没有按时执行",
    "网页打开很慢，加载图片超时",
    "数据库备份文件占用空间过大",
    "如何申请新的测试环境账号",
    "发布流程需要哪些人审批",
    "监控大盘上的指标显示异常",
    "日志里出现大量警告信息",
    "接口返回的数据格式不正确",
    "机房网络割接的通知",
    "配置文件修改后没有生效",
    "用户反馈页面报错，刷新后恢复",
    "升级依赖库版本后编译失败",
    "The nightly batch job did not run on schedule",
    "The web page loads slowly and images time out",
    "How do I request access to the staging environment",
    "Which approvals does a production release need",
    "A dashboard panel shows unexpected values",
    "The service logs are full of warnings",
    "The API returns fields in the wrong format",
    "A configuration change did not take effect",
    "Users see an error page that goes away after a refresh",
    "The build fails after upgrading a dependency",
    "Disk usage on the backup server keeps growing",
    "Network maintenance window in the data centre",
)

_lock = threading.Lock()
_matrix: np.ndarray | None = None


def anchor_matrix() -> np.ndarray:
    """The anchors' vectors (embedded once per process); EmbeddingUnavailable if the
    model cannot run."""
    global _matrix
    if _matrix is None:
        with _lock:
            if _matrix is None:
                _matrix = embed_texts(list(ANCHORS))
    return _matrix


def baseline(vector: np.ndarray) -> float:
    """How close unrelated operations text is to this question: the mean of its cosines
    to the anchors."""
    return float(np.mean(anchor_matrix() @ vector))

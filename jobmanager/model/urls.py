"""What a URL says, read as text: no file system is reached.

Apart from ``jobmanager.model.storage`` (fsspec) because the job model's pure parts (source
inference, which the scheduling core runs on replay) name sources in explanations and must not
load a file system to do it.
"""

from __future__ import annotations

import re

__all__ = ["redact"]

_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")
_SECRET_QUERY = re.compile(r"(?i)([?&](?:sig|signature|token|x-amz-[a-z-]+|sv|se)=)[^&\s]+")


def redact(text: str) -> str:
    """``text`` with credentials a URL may carry (``user:secret@``, signed-URL tokens) masked,
    for logs, events and reports."""
    return _SECRET_QUERY.sub(r"\1***", _CREDENTIALS.sub("***@", text))

"""Where the server keeps uploaded files: one folder per corpus under ``data_dir``.

A module of its own at the bottom of the layers because two floors need the same rule: the
server stores uploads there (:mod:`kg_platform.serve.uploads`), and the SDK's ``drop_corpus``
removes a dropped corpus's folder whichever door dropped it.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from kg_platform.corpus_name import corpus_key

__all__ = ["remove_upload_folder", "upload_folder", "uploads_root"]

log = logging.getLogger(__name__)


def uploads_root(settings: Any) -> Path:
    """Where every corpus's upload folder lives."""
    return Path(settings.data_dir) / "serve" / "uploads"


def upload_folder(settings: Any, corpus: str) -> Path:
    """The folder of ``corpus``'s uploads (named by its key: any corpus name is safe)."""
    return uploads_root(settings) / corpus_key(corpus)


def remove_upload_folder(settings: Any, corpus: str) -> bool:
    """Delete ``corpus``'s upload folder; whether there was one. A failure is logged, not
    raised: the corpus itself is already gone from the graph."""
    folder = upload_folder(settings, corpus)
    try:
        shutil.rmtree(folder)
    except FileNotFoundError:
        return False
    except OSError as exc:
        log.warning("could not remove the upload folder %s: %s", folder, exc)
        return False
    return True

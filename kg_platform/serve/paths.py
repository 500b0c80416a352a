"""No server paths in answers: the serving boundary's rewrite of source URIs, run records and
error texts (the graph keeps what it stores; only what the HTTP API and MCP answer changes).

- a URI under an ingest root (``serve.ingest_roots``) becomes its path relative to that root;
- an uploaded file (``data_dir/serve/uploads/<corpus key>/<name>``) becomes its file name;
- any other absolute path (a source ``kgp ingest`` read from elsewhere, a file of ``data_dir``)
  becomes its file name; URLs are left as they are.

Free texts (error reasons, hints, a run's fatal error) get the same rewrite for every absolute
path they contain.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from kg_platform.ingest.roots import PathGuard
from kg_platform.serve.uploads import uploads_root

__all__ = ["PublicPaths"]

# an absolute path inside a text: starts with "/" not preceded by a word character, ":" or "/"
# (so the "/" of a URL is not one), runs to white space, a quote, a bracket or ":" / ","
_ABSOLUTE = re.compile(r"(?<![\w:/.~\\-])/[^\s'\"()<>\[\]{},;:]+")
_URI_KEYS = frozenset({"source_uri", "uri"})


class PublicPaths:
    """The rewrite for one server's settings (its roots and its ``data_dir``)."""

    def __init__(self, settings: Any) -> None:
        self.guard = PathGuard.from_settings(settings)
        root = uploads_root(settings)
        prefixes = {str(root), os.path.realpath(root)}
        self._uploads = [
            re.compile(re.escape(p.rstrip("/")) + r"/ck[0-9a-f]{24}/") for p in prefixes
        ]
        # longest first: a root inside another root is relative to the inner one
        self._roots = sorted(
            {str(r).rstrip("/") for r in (*self.guard.given_roots, *self.guard.roots)},
            key=len,
            reverse=True,
        )

    def uri(self, uri: Any) -> Any:
        """One source URI or path as an answer may show it."""
        if not isinstance(uri, str) or not uri or "://" in uri:
            return uri
        for pattern in self._uploads:
            if pattern.match(uri):
                return pattern.sub("", uri, count=1)
        relative = self.guard.relative(uri)
        if relative is not None:
            return relative
        if uri.startswith("/"):
            return PurePosixPath(uri).name or uri
        return uri

    def text(self, text: Any) -> Any:
        """A free text with every absolute path in it rewritten as :meth:`uri` does."""
        if not isinstance(text, str) or "/" not in text:
            return text
        for pattern in self._uploads:
            text = pattern.sub("", text)
        for root in self._roots:
            if root:
                text = text.replace(root + "/", "")
        return _ABSOLUTE.sub(lambda m: str(self.uri(m.group(0))), text)

    def uris(self, value: Any) -> Any:
        """``value`` (a search, an answer, a source outline) with every ``source_uri`` and
        ``uri`` field rewritten, at any depth."""
        if isinstance(value, dict):
            return {k: (self.uri(v) if k in _URI_KEYS else self.uris(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.uris(v) for v in value]
        return value

    def answer(self, answer: dict[str, Any]) -> dict[str, Any]:
        """:meth:`uris` of one answer (a dict in, a dict out)."""
        return {k: (self.uri(v) if k in _URI_KEYS else self.uris(v)) for k, v in answer.items()}

    def run(self, run: dict[str, Any]) -> dict[str, Any]:
        """A run (a server task or a graph record) with its paths, errors, report and problem
        rewritten."""
        out = dict(run)
        if isinstance(out.get("paths"), list):
            out["paths"] = [self.uri(p) for p in out["paths"]]
        if isinstance(out.get("errors"), list):
            out["errors"] = self._issues(out["errors"])
        report = out.get("report")
        if isinstance(report, dict):
            report = dict(report)
            for key in ("added", "replaced", "skipped", "pruned"):
                if isinstance(report.get(key), list):
                    report[key] = [self.uri(u) for u in report[key]]
            for key in ("errors", "warnings"):
                if isinstance(report.get(key), list):
                    report[key] = self._issues(report[key])
            report["fatal"] = self.text(report.get("fatal"))
            out["report"] = report
        problem = out.get("problem")
        if isinstance(problem, dict):
            out["problem"] = {
                k: (self.text(v) if k in ("detail", "hint") else v) for k, v in problem.items()
            }
        return out

    def _issues(self, items: Iterable[Any]) -> list[Any]:
        fixed: list[Any] = []
        for item in items:
            if isinstance(item, dict):
                fixed.append(
                    {
                        k: (
                            self.uri(v)
                            if k in ("path", "uri")
                            else self.text(v)
                            if k in ("reason", "hint", "warning")
                            else v
                        )
                        for k, v in item.items()
                    }
                )
            else:
                fixed.append(self.text(item))
        return fixed

"""F3: a folder that cannot be listed is reported, never skipped silently, and ``--prune`` keeps
the sources under it instead of dying with a bare PermissionError.

The suite runs as root, for whom ``chmod 000`` does not stop reads. So the walk is tested in a
forked child that drops to the ``nobody`` user (a real permission denial from the kernel), and the
ingest + prune test injects the same ``PermissionError`` at ``os.scandir`` for one folder, which is
where ``os.walk`` meets it.
"""

from __future__ import annotations

import json
import os
import pwd
import tempfile
from pathlib import Path

import pytest

from kg_platform.ingest import ingest_paths
from kg_platform.ingest.pipeline import discover

pytestmark = pytest.mark.faults


def _tree(base: Path) -> Path:
    root = base / "docs"
    (root / "open").mkdir(parents=True)
    (root / "locked").mkdir()
    (root / "open" / "a.md").write_text("# A\n\nThe heron waits. It strikes fast.\n")
    (root / "locked" / "b.md").write_text("# B\n\nThe kestrel hovers. It drops on prey.\n")
    return root


@pytest.mark.skipif(os.geteuid() != 0, reason="drops privileges with setuid: needs root")
def test_walk_reports_a_folder_the_kernel_refuses():
    base = Path(tempfile.mkdtemp(prefix="kgp-f3-"))
    os.chmod(base, 0o755)
    root = _tree(base)
    for p in [root, root / "open", root / "open" / "a.md", root / "locked" / "b.md"]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    os.chmod(root / "locked", 0o000)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: become nobody, walk, report through the pipe
        try:
            os.close(read_fd)
            os.setgid(pwd.getpwnam("nobody").pw_gid)
            os.setuid(pwd.getpwnam("nobody").pw_uid)
            found = discover([root])
            payload = {
                "files": [str(f) for f in found.files],
                "unreadable": [[str(p), r] for p, r in found.unreadable],
            }
            os.write(write_fd, json.dumps(payload).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd) as fh:
        payload = json.loads(fh.read() or "{}")
    os.waitpid(pid, 0)
    os.chmod(root / "locked", 0o755)
    assert payload["files"] == [str(root / "open" / "a.md")]
    assert payload["unreadable"] == [[str(root / "locked"), "Permission denied"]]


def test_ingest_reports_the_folder_and_prune_keeps_its_sources(
    clean_graph, settings, embedder, tmp_path, monkeypatch
):
    root = _tree(tmp_path)
    corpus = "t-f3"
    first = ingest_paths(clean_graph, settings, [root], corpus, embedder=embedder)
    assert first.status == "completed" and len(first.added) == 2

    locked = str(root / "locked")
    real_scandir = os.scandir

    def scandir(path=".", *args, **kwargs):
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real_scandir(path, *args, **kwargs)

    monkeypatch.setattr(os, "scandir", scandir)
    second = ingest_paths(clean_graph, settings, [root], corpus, prune=True, embedder=embedder)
    assert second.status == "completed_with_errors"
    assert [e.path for e in second.errors] == [locked]
    assert "cannot list folder" in second.errors[0].reason
    assert second.pruned == []
    rows = clean_graph.read_raw("MATCH (s:Source {corpus: $c}) RETURN count(s) AS n", c=corpus)
    assert rows[0]["n"] == 2

"""The rules under ingest roots and the serving boundary's path rewrite, without a server: what
:class:`PathGuard` allows and how :class:`PublicPaths` shows paths (issue 54, High and Low)."""

from __future__ import annotations

from pathlib import Path

from kg_platform.config import ServeSettings, Settings
from kg_platform.ingest.roots import PathGuard
from kg_platform.serve.paths import PublicPaths
from kg_platform.serve.uploads import upload_folder


def test_the_guard_resolves_links_and_refuses_what_leaves_the_roots(tmp_path: Path) -> None:
    root, data = tmp_path / "root", tmp_path / "root" / "kgp-data"
    (root / "docs").mkdir(parents=True)
    data.mkdir()
    (root / "docs" / "a.md").write_text("a")
    (data / "api-key").write_text("k")
    (tmp_path / "out.md").write_text("o")
    (root / "docs" / "in.md").symlink_to(root / "docs" / "a.md")
    (root / "docs" / "out.md").symlink_to(tmp_path / "out.md")
    (root / "docs" / "key").symlink_to(data / "api-key")
    (root / "loop").symlink_to(root / "loop")
    guard = PathGuard([root], [data])
    assert guard.resolve("docs/a.md") == (root / "docs" / "a.md").resolve()
    assert guard.resolve(root / "docs" / "in.md") == (root / "docs" / "a.md").resolve()
    for refused in [
        "../out.md",
        root / "docs" / "out.md",
        root / "docs" / "key",
        data,
        data / "api-key",
        root / "loop",
        root / "missing.md",
        "",
        "/etc/passwd",
    ]:
        assert guard.resolve(refused) is None, refused
    assert not guard.allows(root / "docs" / "out.md") and guard.allows(root / "docs" / "in.md")
    assert not PathGuard([]).resolve(root / "docs" / "a.md")


def test_answers_show_paths_relative_to_their_root(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data", serve=ServeSettings(ingest_roots=[tmp_path / "docs"])
    )
    public = PublicPaths(settings)
    upload = upload_folder(settings, "team/a") / "report.docx"
    assert public.uri(str(tmp_path / "docs" / "x" / "a.md")) == "x/a.md"
    assert public.uri(str(upload)) == "report.docx"
    assert public.uri("/home/someone/private/notes.md") == "notes.md"
    assert public.uri("https://example.org/a/b") == "https://example.org/a/b"
    reason = f"{upload}: damaged .docx package; cannot read '{tmp_path}/docs/x/a.md': denied"
    assert public.text(reason) == "report.docx: damaged .docx package; cannot read 'x/a.md': denied"
    run = public.run(
        {
            "paths": [str(tmp_path / "docs" / "x")],
            "errors": [{"path": str(upload), "reason": f"{upload} is empty", "hint": ""}],
            "report": {"added": [str(tmp_path / "docs" / "x" / "a.md")], "fatal": None},
        }
    )
    assert str(tmp_path) not in str(run)
    assert run["paths"] == ["x"] and run["report"]["added"] == ["x/a.md"]
    assert run["errors"][0] == {"path": "report.docx", "reason": "report.docx is empty", "hint": ""}
    found = public.answer({"items": [{"source_uri": str(upload), "text": "/etc/passwd stays"}]})
    assert found == {"items": [{"source_uri": "report.docx", "text": "/etc/passwd stays"}]}


def test_the_servers_guard_refuses_its_data_and_cache_folders_even_inside_a_root(
    tmp_path: Path,
) -> None:
    """``DATA_DIR`` and ``CACHE_DIR`` hold the Neo4j password, the API keys and model files: a
    root that contains them (a team's home folder, say) must still not reach them."""
    root = tmp_path / "home"
    data, cache = root / ".kgp" / "data", root / ".kgp" / "cache"
    for folder in (data, cache, root / "notes"):
        folder.mkdir(parents=True)
    (data / "api-key").write_text("k")
    (cache / "model.onnx").write_bytes(b"weights")
    (root / "notes" / "a.md").write_text("a")
    (root / "notes" / "cached.md").symlink_to(cache / "model.onnx")
    settings = Settings(data_dir=data, cache_dir=cache, serve=ServeSettings(ingest_roots=[root]))
    guard = PathGuard.from_settings(settings)
    assert guard.resolve(root / "notes" / "a.md") == (root / "notes" / "a.md").resolve()
    for refused in [data / "api-key", cache / "model.onnx", cache, root / "notes" / "cached.md"]:
        assert guard.resolve(refused) is None, refused

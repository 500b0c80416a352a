"""Issue 54, Medium and Low: uploads were never cleaned (refused and corrupt files stayed, a
dropped corpus kept its folder, no quota), a zip container's uncompressed size was never checked
(a 306 KB ``.docx`` took the server 600 MB up and "completed"), and a 255-byte file name or an
empty ``corpus`` field answered a 500 / went to the default corpus.

The server is a real uvicorn in this process over the test Neo4j, so its resident memory is this
process's (read from /proc/self/status).
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import httpx
import pytest

from kg_platform.config import ServeSettings
from kg_platform.errors import CorruptDocument
from kg_platform.parsing import parse_file
from kg_platform.parsing.containers import check_container
from kg_platform.sdk import KnowledgePlatform
from kg_platform.serve.problems import Problem
from kg_platform.serve.uploads import UploadStore, upload_folder
from tests.support.http_api import api_client, problem, wait_run

pytestmark = pytest.mark.integration

KEY = "test-key-security-uploads-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {KEY}"}
QUOTA = 1_000_000
GOOD = b"# Lanterns\n\nThe harbour of Quillmere keeps seven amber lanterns lit at night.\n"


def _text(size: int, word: str) -> bytes:
    """``size`` bytes of a Markdown document (sentences about ``word``)."""
    body = (f"The {word} glows amber over the quiet harbour. ").encode() * (size // 40 + 1)
    return (b"# Notes\n\n" + body)[:size]


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def _docx(members: dict[str, bytes], big: tuple[str, int] | None = None) -> bytes:
    """A minimal .docx; ``big`` adds a member of that many zero bytes, streamed (deflated)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/'
            '2006/content-types"/>',
        )
        for name, data in members.items():
            zf.writestr(name, data)
        if big is not None:
            name, size = big
            block = b"\0" * 1_000_000
            with zf.open(name, "w", force_zip64=True) as out:
                for _ in range(size // len(block)):
                    out.write(block)
    return buf.getvalue()


DOCUMENT = (
    b'<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/'
    b'wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Hello</w:t></w:r></w:p></w:body>'
    b"</w:document>"
)


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> Path:
    """The report's bomb: a ~300 KB .docx whose docProps/core.xml unpacks to 300 MB."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.docx"
    path.write_bytes(_docx({"word/document.xml": DOCUMENT}, big=("docProps/core.xml", 300_000_000)))
    assert path.stat().st_size < 1_000_000
    return path


@pytest.fixture(scope="module")
def served(settings, tmp_path_factory):
    return settings.model_copy(
        update={
            "data_dir": tmp_path_factory.mktemp("uploads-data"),
            "serve": ServeSettings(rate_per_s=100, rate_burst=400, upload_quota_bytes=QUOTA),
        }
    )


@pytest.fixture(scope="module")
def api(served, embedder, graph_session):
    with api_client(served, embedder, KEY) as client:
        yield client


def _upload(api: httpx.Client, corpus: str | None, files: list[tuple[str, bytes]]):
    return api.post(
        "/v1/ingest/upload",
        data={} if corpus is None else {"corpus": corpus},
        files=[("files", (name, data, "application/octet-stream")) for name, data in files],
        headers=AUTH,
    )


def _finished(api: httpx.Client, response: httpx.Response) -> dict:
    assert response.status_code == 202, response.text[:2000]
    return wait_run(api, response.json()["task_id"], AUTH)


def _kept(served, corpus: str) -> list[str]:
    folder = upload_folder(served, corpus)
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_refused_and_corrupt_uploads_are_deleted_when_their_run_ends(api, served) -> None:
    corpus = "up-refused"
    run = _finished(
        api,
        _upload(
            api,
            corpus,
            [
                ("good.md", GOOD),
                ("corrupt.docx", b"this is not a zip package at all" * 10),
                ("empty.md", b""),
                ("binary.txt", bytes(range(256)) * 20),
            ],
        ),
    )
    assert run["status"] == "completed_with_errors", run
    assert {e["path"] for e in run["errors"]} == {"corrupt.docx", "empty.md", "binary.txt"}
    assert run["report"]["added"] == ["good.md"]
    # no server path in the answer: uploads are named by their file name
    assert str(served.data_dir) not in str(run)
    assert _kept(served, corpus) == ["good.md"]


def test_dropping_a_corpus_removes_its_upload_folder(api, served, embedder) -> None:
    corpus = "up-drop"
    assert _finished(api, _upload(api, corpus, [("good.md", GOOD)]))["status"] == "completed"
    assert _kept(served, corpus) == ["good.md"]
    assert api.delete(f"/v1/corpora/{corpus}", headers=AUTH).status_code == 200
    assert not upload_folder(served, corpus).exists()
    # and through the SDK (kgp corpus drop): the folder rule is derived from the settings
    corpus = "up-drop-sdk"
    assert _finished(api, _upload(api, corpus, [("good.md", GOOD)]))["status"] == "completed"
    assert upload_folder(served, corpus).exists()
    with KnowledgePlatform(served, embedder=embedder) as platform:
        assert platform.drop_corpus(corpus) == 1
    assert not upload_folder(served, corpus).exists()


def test_an_upload_over_the_quota_is_refused_and_nothing_is_stored(api, served, tmp_path) -> None:
    corpus = "up-quota"
    first = _finished(api, _upload(api, corpus, [("a.md", _text(5_000, "lamp"))]))
    assert first["status"] == "completed", first
    before = _kept(served, corpus)
    body = problem(
        _upload(api, corpus, [("b.md", _text(5_000, "buoy")), ("c.md", _text(QUOTA, "mast"))]),
        413,
    )
    assert "serve.upload_quota_bytes" in body["detail"], body
    assert _kept(served, corpus) == before == ["a.md"]
    assert not [p for p in upload_folder(served, corpus).iterdir() if p.name.startswith(".")]
    # the store itself: replacing a kept file counts its new size, not both
    small = served.model_copy(
        update={"data_dir": tmp_path, "serve": ServeSettings(upload_quota_bytes=1_000)}
    )
    store = UploadStore(small)
    store.store("q", [("x.md", iter([b"x" * 700, b""]).__next__)])
    store.store("q", [("x.md", iter([b"y" * 900, b""]).__next__)])
    assert store.usage("q") == 900
    with pytest.raises(Problem) as over:
        store.store("q", [("z.md", iter([b"z" * 200, b""]).__next__)])
    assert over.value.status == 413 and store.usage("q") == 900


def test_long_file_names_and_empty_fields_are_422(api, served) -> None:
    long_name = "n" * 253 + ".md"  # 256 bytes
    body = problem(_upload(api, "up-names", [(long_name, GOOD)]), 422)
    assert "255" in body["detail"]
    accented = "é" * 126 + ".md"  # 255 bytes of UTF-8: kept
    run = _finished(api, _upload(api, "up-names", [(accented, GOOD)]))
    assert run["status"] == "completed", run
    body = problem(_upload(api, "", [("good.md", GOOD)]), 422)
    assert "corpus" in body["detail"]
    assert not upload_folder(served, "default").exists()  # not sent to the default corpus


def _forbid_member_reads(monkeypatch) -> None:
    """From here on any read of a zip member fails the test (so does writing one: call it after
    the container is built): the check must decide from the central directory alone."""

    def no_reading(*args, **kwargs):
        raise AssertionError("a member of the container was read")

    monkeypatch.setattr(zipfile.ZipFile, "open", no_reading)


def test_a_docx_bomb_is_refused_before_any_member_is_read(bomb, monkeypatch) -> None:
    _forbid_member_reads(monkeypatch)
    rss = _rss_bytes()
    with pytest.raises(CorruptDocument) as refused:  # no member read: the central directory
        parse_file(bomb)  # alone decides, so the refusal takes what reading a few KB takes
    message = str(refused.value)
    assert "declares 300 MB uncompressed in docProps/core.xml" in message, message
    assert _rss_bytes() - rss < 100_000_000


@pytest.mark.parametrize("suffix", [".pptx", ".xlsx", ".docx"])
def test_every_office_container_is_checked_before_its_parser_opens_it(
    tmp_path, monkeypatch, suffix: str
) -> None:
    """The check sits in ``parse_file`` for every zip container, not in the DOCX parser: a PPTX
    or XLSX bomb is refused the same way, and no member is read."""
    dense = tmp_path / f"dense{suffix}"
    dense.write_bytes(_docx({}, big=("ppt/slides/slide1.xml", 30_000_000)))
    _forbid_member_reads(monkeypatch)
    with pytest.raises(CorruptDocument, match="30 MB uncompressed in ppt/slides/slide1.xml"):
        parse_file(dense)


def test_a_high_ratio_member_is_refused_and_an_ordinary_docx_is_not(tmp_path) -> None:
    dense = tmp_path / "dense.docx"  # the report's second: a 30 MB document.xml in ~50 KB
    dense.write_bytes(_docx({}, big=("word/document.xml", 30_000_000)))
    with pytest.raises(CorruptDocument, match="word/document.xml"):
        parse_file(dense)
    ordinary = tmp_path / "ordinary.docx"
    ordinary.write_bytes(_docx({"word/document.xml": DOCUMENT * 2000}))  # ~330 KB of XML
    check_container(ordinary)  # passes: no exception


def test_the_bomb_uploaded_is_refused_with_memory_flat_and_deleted(api, served, bomb) -> None:
    corpus = "up-bomb"
    rss = _rss_bytes()
    run = _finished(api, _upload(api, corpus, [("bomb.docx", bomb.read_bytes())]))
    assert _rss_bytes() - rss < 100_000_000
    assert run["status"] == "completed_with_errors", run
    (error,) = run["errors"]
    assert error["path"] == "bomb.docx" and error["error"] == "CorruptDocument", error
    assert "docProps/core.xml" in error["reason"] and str(served.data_dir) not in error["reason"]
    assert _kept(served, corpus) == []

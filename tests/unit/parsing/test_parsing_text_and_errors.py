"""Plain text (encodings, invalid bytes, streaming memory) and every bad-input error."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from kg_platform.errors import (
    CorruptDocument,
    EmptyDocument,
    KGPError,
    ParseError,
    UnsupportedFormat,
)
from kg_platform.parsing import parse_file, supported_extensions


def test_supported_extensions():
    exts = supported_extensions()
    for ext in (".pdf", ".docx", ".pptx", ".xlsx", ".html", ".htm", ".md", ".txt", ".eml"):
        assert ext in exts


def test_utf8_paragraphs_and_crlf(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes("Title line\r\nsecond line\r\n\r\n\r\nNext paragraph — ok\r\n".encode())
    doc = parse_file(path)
    assert [b.text for b in doc.root.blocks] == ["Title line\nsecond line", "Next paragraph — ok"]
    assert doc.title == "Title line" and doc.warnings == []
    assert doc.metadata["encoding"] == "utf-8"
    assert doc.bytes == path.stat().st_size and len(doc.sha256) == 64


def test_latin1_text_is_decoded(tmp_path):
    path = tmp_path / "menu.txt"
    text = (
        "Le café du coin sert un très bon thé.\n\nÀ côté, la crème brûlée est délicieuse, "
        "et le garçon est très aimable. Déjà midi: on mange à la française.\n"
    )
    path.write_bytes(text.encode("latin-1"))
    doc = parse_file(path)
    assert "café" in doc.text() and "crème brûlée" in doc.text()
    assert doc.warnings == []
    assert doc.metadata["encoding"] in ("latin_1", "iso8859-1", "cp1252", "iso8859-15")


def test_invalid_bytes_are_counted_not_dropped(tmp_path):
    path = tmp_path / "mixed.txt"
    path.write_bytes(
        "Grüße, naïve café — über alles. ".encode() * 5 + b"\xff\xfe" + b" still going\n"
    )
    doc = parse_file(path)
    assert doc.warnings == ["2 invalid byte(s) for encoding utf-8 were replaced by U+FFFD"]
    assert "\ufffd\ufffd still going" in doc.text() and "naïve café" in doc.text()


def test_utf16_with_bom(tmp_path):
    path = tmp_path / "wide.txt"
    path.write_bytes("Grüße aus Köln\n\nzweiter Absatz\n".encode("utf-16"))
    doc = parse_file(path)
    assert [b.text for b in doc.root.blocks] == ["Grüße aus Köln", "zweiter Absatz"]


@pytest.mark.parametrize("name", ["empty.txt", "empty.pdf", "empty.md", "empty.docx"])
def test_empty_file(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"")
    with pytest.raises(EmptyDocument) as err:
        parse_file(path)
    assert err.value.hint


def test_whitespace_only_text(tmp_path):
    path = tmp_path / "blank.txt"
    path.write_text("  \n\n\t\n")
    with pytest.raises(EmptyDocument):
        parse_file(path)


def test_binary_junk_with_text_extension(tmp_path):
    path = tmp_path / "junk.txt"
    path.write_bytes(os.urandom(8192))
    with pytest.raises(CorruptDocument, match="NUL bytes|control characters|content is a"):
        parse_file(path)


def test_control_characters_without_nul(tmp_path):
    path = tmp_path / "ctrl.md"
    path.write_bytes(bytes([1, 2, 3, 4, 5, 6, 7, 8, 14, 15, 16, 65]) * 200)
    with pytest.raises(CorruptDocument, match="control characters"):
        parse_file(path)


def test_pdf_renamed_to_markdown(tmp_path, docs):
    path = tmp_path / "paper.md"
    path.write_bytes((docs / "pdf" / "faa-amt-handbook-sample.pdf").read_bytes()[:4096])
    with pytest.raises(CorruptDocument, match="PDF") as err:
        parse_file(path)
    assert "rename" in err.value.hint


def test_unknown_extension(tmp_path):
    path = tmp_path / "data.xyz"
    path.write_text("hello")
    with pytest.raises(UnsupportedFormat) as err:
        parse_file(path)
    assert ".pdf" in err.value.hint and ".txt" in err.value.hint


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files regardless of permissions")
def test_unreadable_file(tmp_path):
    path = tmp_path / "secret.txt"
    path.write_text("hidden")
    path.chmod(0)
    try:
        with pytest.raises(ParseError, match="permission denied") as err:
            parse_file(path)
        assert "chmod" in err.value.hint
    finally:
        path.chmod(0o600)


def test_permission_error_while_reading_is_a_parse_error(tmp_path, monkeypatch):
    """Runs as root too: the OS refusal is injected at the one place files are opened."""
    from kg_platform.parsing import _files

    path = tmp_path / "locked.txt"
    path.write_text("hidden")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_files, "open", refuse, raising=False)
    with pytest.raises(ParseError, match="permission denied") as err:
        parse_file(path)
    assert "chmod" in err.value.hint


def test_directory_path(tmp_path):
    folder = tmp_path / "folder.txt"
    folder.mkdir()
    with pytest.raises(ParseError, match="is a directory") as err:
        parse_file(folder)
    assert err.value.hint


def test_vanished_path(tmp_path):
    path = tmp_path / "gone.txt"
    path.write_text("here for a moment")
    path.unlink()
    with pytest.raises(ParseError, match="file not found"):
        parse_file(path)


def test_errors_are_kgp_errors_with_hints(tmp_path):
    path = tmp_path / "x.unknown"
    path.write_text("x")
    with pytest.raises(KGPError) as err:
        parse_file(path)
    assert "hint:" in str(err.value)


def test_large_text_streams_with_bounded_memory(tmp_path):
    """A ~50 MB file: peak traced memory stays within 1.5x the file size (the parsed text itself
    is ~1x), and memory beyond what the result keeps stays under 32 MB: no second full copy."""
    path = tmp_path / "big.txt"
    para = ("The quick brown fox jumps over the lazy dog near the riverbank. " * 15 + "\n") * 2
    count = (50 * 1024 * 1024) // (len(para) + 1) + 1
    with open(path, "w", encoding="utf-8") as fh:
        for k in range(count):
            fh.write(f"{k} {para}\n")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        doc = parse_file(path)
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(doc.root.blocks) == count
    assert doc.root.blocks[-1].text.startswith(f"{count - 1} The quick")
    assert peak < 1.5 * size, f"peak {peak / 2**20:.1f} MiB for a {size / 2**20:.1f} MiB file"
    assert peak - current < 32 * 2**20, f"transient {(peak - current) / 2**20:.1f} MiB"
    del doc
    Path(path).unlink()

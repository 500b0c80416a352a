"""The generated Neo4j password never starts with a character an option parser would take."""

from __future__ import annotations

import pytest

from kg_platform.neo4j_server import manager


def test_new_password_redraws_a_leading_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    draws = iter(["-starts-with-dash", "_underscore-first", "Good-one_x"])
    monkeypatch.setattr(manager.secrets, "token_urlsafe", lambda n: next(draws))
    assert manager.new_password() == "Good-one_x"


def test_new_passwords_are_random_and_alphanumeric_first() -> None:
    seen = {manager.new_password() for _ in range(500)}
    assert len(seen) == 500
    assert all(pw[0].isalnum() and len(pw) >= 24 for pw in seen)

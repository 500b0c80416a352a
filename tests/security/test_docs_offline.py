"""Issue 54: ``/docs`` works offline. The Swagger UI page and every asset it references are
served by the API itself (no CDN, no other host), without the API key, and the page points
Swagger UI at the server's own OpenAPI document with the online validator off."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlparse

from fastapi.testclient import TestClient

from kg_platform.config import Settings
from kg_platform.sdk import KnowledgePlatform
from kg_platform.serve.app import build_app

KEY = "test-key-docs-offline-0123456789abcdef"


def test_docs_and_every_asset_load_from_the_server_itself(tmp_path) -> None:
    app = build_app(KnowledgePlatform(Settings(data_dir=tmp_path / "data")), key=KEY)
    client = TestClient(app)
    page = client.get("/docs")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    html = page.text
    refs = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html)
    refs += re.findall(r"""\b(?:url|openapi_url)\s*:\s*['"]([^'"]+)['"]""", html)
    assert len(refs) >= 3, refs  # script, style sheet, icon (and the OpenAPI document)
    here = urlparse(str(client.base_url)).netloc
    for ref in refs:
        target = urlparse(urljoin(str(client.base_url) + "/docs", ref))
        assert target.netloc == here, f"/docs loads {ref} from another host"
        answer = client.get(target.path)  # no key: the docs are open
        assert answer.status_code == 200 and answer.content, (ref, answer.status_code)
    assert not re.search(r"https?://[\w.-]+/[\w@./-]+\.(?:js|css|png)", html)
    assert '"validatorUrl": null' in html
    assert client.get("/openapi.json").json()["openapi"].startswith("3.")
    # only the named assets are open and served; nothing else of the package or the disk
    assert client.get("/docs/assets/index.html").status_code in (401, 404)
    assert client.get("/docs/assets/%2e%2e%2f%2e%2e%2fsetup.py").status_code in (401, 404)

"""``kgp browser``: where Neo4j Browser and the kg-platform guide are, for the running server.

``kgp browser`` prints the Browser URL, the ``:play`` command and a one-click link that opens
the guide; ``--open`` opens it. ``kgp browser write DIR`` / ``kgp browser serve`` make the guide
available to Browsers of other servers (Docker, remote), which cannot load it from their origin.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from kg_platform.cli.lazy import get_settings

app = typer.Typer(
    help="Neo4j Browser: the URL, the kg-platform guide and its style sheet.",
    invoke_without_command=True,
)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="browser")


@app.callback()
def browser(
    ctx: typer.Context,
    open_it: bool = typer.Option(False, "--open", help="open the guide in a web browser"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Print the Browser URL and the `:play` command of the guide for the running server."""
    if ctx.invoked_subcommand is not None:
        return
    from kg_platform.browser import browser_urls
    from kg_platform.errors import Neo4jServerError
    from kg_platform.neo4j_server import LocalNeo4j

    settings = get_settings()
    if settings.neo4j.uri:
        typer.echo(
            f"NEO4J_URI is set ({settings.neo4j.uri}): open that server's Browser, then "
            "serve the guide with `kgp browser serve` and run the `:play` line it prints."
        )
        return
    server = LocalNeo4j(settings)
    status = server.status()
    if not status.running or not status.browser_url:
        raise Neo4jServerError(
            "the local Neo4j server is not running", hint="start it with `kgp neo4j start`"
        )
    urls = browser_urls(status.browser_url.rsplit("/browser/", 1)[0])
    urls["user"] = "neo4j"
    urls["password_file"] = str(server.password_file)
    urls["guide_served"] = _answers(urls["guide"].replace("://localhost", "://127.0.0.1", 1))
    if as_json:
        typer.echo(json.dumps(urls, indent=2))
    else:
        if not urls["guide_served"]:
            typer.secho(
                "note: this server does not serve the guide (it was started before "
                "kg-platform installed it); restart it: `kgp neo4j stop && kgp neo4j "
                "start`, or use `kgp browser serve`",
                fg=typer.colors.YELLOW,
                err=True,
            )
        typer.echo(f"Neo4j Browser: {urls['browser']}  (user neo4j; `kgp neo4j password`)")
        typer.echo(f"Guide:         {urls['play']}")
        typer.echo(f"One click:     {urls['link']}")
    if open_it:
        import webbrowser

        webbrowser.open(urls["link"])


def _answers(url: str) -> bool:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


@app.command("write")
def write(
    out_dir: Path = typer.Argument(
        ..., help="folder to write kgp-guide.html and kgp-style.grass into"
    ),
) -> None:
    """Write the guide and the style sheet (to serve them from Docker or any web server)."""
    from kg_platform.browser import write_assets

    for path in write_assets(out_dir):
        typer.echo(str(path))


#: `kgp browser serve`'s default port: not `kgp serve`'s (8765) nor `kgp mcp --http`'s (8766), so
#: the guide can be served beside the HTTP API and the MCP server
GUIDE_PORT = 8767


@app.command("serve")
def serve(
    port: int = typer.Option(GUIDE_PORT, help="port on 127.0.0.1"),
    host: str = typer.Option("127.0.0.1", help="interface to listen on"),
) -> None:
    """Serve the guide with CORS so any Neo4j Browser (e.g. Docker's) can `:play` it."""
    import tempfile
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    from kg_platform.browser import GUIDE_FILE, write_assets

    folder = Path(tempfile.mkdtemp(prefix="kgp-guide-"))
    write_assets(folder)

    class CORSHandler(SimpleHTTPRequestHandler):
        def end_headers(self) -> None:
            self.send_header("Access-Control-Allow-Origin", "*")
            super().end_headers()

    httpd = ThreadingHTTPServer((host, port), partial(CORSHandler, directory=str(folder)))
    name = "localhost" if host in ("127.0.0.1", "0.0.0.0") else host
    typer.echo(
        f"serving the guide; in Neo4j Browser run:\n  :play http://{name}:{port}/{GUIDE_FILE}"
    )
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


@app.command("screenshot")
def screenshot(
    out: Path = typer.Option(Path("docs/browser-guide.png"), help="PNG to write"),
    query: str = typer.Option(
        "06_granularity_ladder",
        help="saved query run (with the style sheet) before the guide opens; '' = none",
    ),
    width: int = 1400,
    height: int = 1400,
) -> None:
    """Headless Chromium screenshot of Browser with the guide open (local server only)."""
    from kg_platform.browser import saved_queries, style_command
    from kg_platform.browser.screenshot import take_screenshot
    from kg_platform.errors import Neo4jServerError
    from kg_platform.neo4j_server import LocalNeo4j

    server = LocalNeo4j(get_settings())
    status = server.status()
    if not status.running or not status.browser_url or not status.bolt_uri:
        raise Neo4jServerError(
            "the local Neo4j server is not running", hint="start it with `kgp neo4j start`"
        )
    base = status.browser_url.rsplit("/browser/", 1)[0]
    before: tuple[str, ...] = ()
    if query:
        texts = {q.name: q.text for q in saved_queries()}
        if query not in texts:
            raise typer.BadParameter(f"no saved query {query!r}; known: {', '.join(texts)}")
        before = (style_command(), texts[query])
    typer.echo(
        str(
            take_screenshot(
                base,
                status.bolt_uri,
                server.password(),
                out,
                width=width,
                height=height,
                before=before,
                timeout=60,
            )
        )
    )

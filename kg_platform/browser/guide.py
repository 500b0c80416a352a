"""The Neo4j Browser guide, style sheet and saved queries of kg-platform.

The saved queries in ``cypher/browser/*.cypher`` are the single source: each file starts with
``// title:``, ``// view:`` (table/graph) and ``// layer:`` lines, then comment lines that explain
it, then the query. :func:`render_guide` turns them into a ``:play``-able Browser guide (slides
with runnable code), so the guide, ``kgp browser`` and the test that executes every query can
never disagree. Queries take no parameters: each picks a sensible example from the user's own
graph and has a ``WITH '' AS ...`` line to type a choice into.

Serving (see ``docs/browser.md``): the local server (``kgp neo4j start``) puts a copy of Browser
plus these files first on its class path, so they load from Browser's own origin at
``/browser/kgp-guide.html``. For Docker or any other server, ``kgp browser write DIR`` writes
the two files and ``kgp browser serve`` serves them with CORS on localhost (a default-allowed
guide host).
"""

from __future__ import annotations

import html
import os
import re
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from kg_platform.errors import ConfigError

GUIDE_FILE = "kgp-guide.html"
STYLE_FILE = "kgp-style.grass"
_META = re.compile(r"^//\s*(title|view|layer):\s*(.+?)\s*$")
_LAYERS = {
    "information resources": "Layer 1 - information resources: corpora, sources, runs",
    "corpus": "Layer 2 - corpus: sections, MoG chunks, MoGG pieces",
    "distilled knowledge": "Layer 3 - distilled knowledge: atomic questions, entities, tags",
    "answers": "Answers: why a chunk was retrieved",
}


@dataclass(frozen=True)
class SavedQuery:
    """One saved Browser query (``cypher/browser/<name>.cypher``)."""

    name: str
    title: str
    view: str  # 'table' | 'graph'
    layer: str
    description: str
    text: str  # the runnable text: explanation comments + query

    @property
    def statement(self) -> str:
        """The name for :meth:`GraphClient.read`: ``browser/<name>``."""
        return f"browser/{self.name}"


def _folder():  # type: ignore[no-untyped-def]
    return resources.files("kg_platform").joinpath("cypher", "browser")


def saved_queries() -> list[SavedQuery]:
    """Every saved query in guide order (file names start with a two-digit step)."""
    out = []
    for entry in sorted(_folder().iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".cypher"):
            continue
        meta: dict[str, str] = {}
        described: list[str] = []
        body: list[str] = []
        for line in entry.read_text(encoding="utf-8").strip().splitlines():
            match = _META.match(line)
            if match:
                meta[match.group(1)] = match.group(2)
            elif line.startswith("//") and not body:
                described.append(line[2:].strip())
                body.append(line)
            else:
                body.append(line)
        name = entry.name[: -len(".cypher")]
        if "title" not in meta:
            raise ConfigError(
                f"saved query {entry.name} has no '// title:' line",
                hint="every cypher/browser/*.cypher file starts with title/view/"
                "layer comment lines",
            )
        out.append(
            SavedQuery(
                name=name,
                title=meta["title"],
                view=meta.get("view", "table"),
                layer=meta.get("layer", ""),
                description=" ".join(described),
                text="\n".join(body).strip(),
            )
        )
    return out


def style_sheet() -> str:
    """The GraSS style sheet: one colour family per layer, captions that say what a node is."""
    return _folder().joinpath(STYLE_FILE).read_text(encoding="utf-8")


def style_command() -> str:
    """``:style`` with the sheet inline (one line): works in any Browser, no URL to allow."""
    compact = " ".join(line.strip() for line in style_sheet().splitlines() if line.strip())
    return f":style {compact}"


def _slide(side: str, main: str) -> str:
    return (
        f'<slide class="row-fluid">\n  <div class="col-sm-3">\n{side}\n  </div>\n'
        f'  <div class="col-sm-9">\n{main}\n  </div>\n</slide>\n'
    )


def _runnable(text: str) -> str:
    return f'<pre class="pre-scrollable code runnable">{html.escape(text)}</pre>'


def render_guide() -> str:
    """The ``:play``-able guide: an introduction, one slide per saved query, a closing slide."""
    queries = saved_queries()
    slides = [
        _slide(
            "    <h3>kg-platform: your graph</h3>\n"
            '    <p class="lead">A walk through the three layers of <em>your</em> knowledge graph, '
            "with queries you can run.</p>",
            "    <p>kg-platform keeps everything in Neo4j, in three layers (PIKE-RAG):</p>\n"
            "    <ol><li><b>Information resources</b> (blue): corpora, sources and the runs that "
            "ingested them.</li>\n"
            "    <li><b>Corpus</b> (green): each document's sections, its Mix-of-Granularity chunks "
            "(level 1 = finest, bigger circles are coarser) and the sentence pieces of the MoGG "
            "graph.</li>\n"
            "    <li><b>Distilled knowledge</b> (orange/purple/pink): atomic questions, entities and "
            "tags extracted by the LLM.</li></ol>\n"
            "    <p>First apply the kg-platform style sheet (click, then run with Ctrl+Enter):</p>\n"
            f"    {_runnable(style_command())}\n"
            "    <p>Every query picks an example from your graph; edit the value in its first "
            "<code>WITH '' AS ...</code> line to choose your own.</p>",
        )
    ]
    layer = None
    for q in queries:
        heading = ""
        if q.layer != layer:
            layer = q.layer
            heading = f"    <h4>{html.escape(_LAYERS.get(layer, layer))}</h4>\n"
        slides.append(
            _slide(
                f"{heading}    <h3>{html.escape(q.title)}</h3>\n"
                f"    <p>{html.escape(q.description)}</p>\n"
                f"    <p><small>view: {html.escape(q.view)} &middot; saved query "
                f"<code>cypher/browser/{html.escape(q.name)}.cypher</code></small></p>",
                f"    {_runnable(q.text)}",
            )
        )
    slides.append(
        _slide(
            "    <h3>More</h3>",
            "    <ul><li><code>kgp jobs history</code> lists the same runs as slide 3.</li>\n"
            '    <li><code>kgp ask "..." --json</code> prints an answer\'s '
            '<code>trajectory_id</code> for the "why" slides.</li>\n'
            "    <li>The saved queries live in <code>kg_platform/cypher/browser/</code>; add one "
            "to your Browser favourites with the star in its frame.</li></ul>",
        )
    )
    return (
        '<style type="text/css" media="screen">.kgp pre { white-space: pre-wrap; }</style>\n'
        '<article class="guide kgp">\n<carousel class="deck container-fluid">\n'
        + "".join(slides)
        + "</carousel>\n</article>\n"
    )


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def write_assets(out_dir: Path) -> list[Path]:
    """Write the guide and the style sheet to ``out_dir`` (for Docker or any web server)."""
    guide, style = out_dir / GUIDE_FILE, out_dir / STYLE_FILE
    _atomic_write(guide, render_guide())
    _atomic_write(style, style_sheet())
    return [guide, style]


def install_assets(target: Path, lib_dir: Path) -> Path:
    """Make ``target`` (a class-path ``browser/`` folder) a full copy of Neo4j Browser from the
    server's jars plus the kg-platform guide and style sheet.

    Neo4j resolves the ``browser`` folder with ``ClassLoader.getResource`` (first match only),
    so the guide cannot sit in a folder of its own: the copy keeps Browser working when this
    folder wins. The copy is extracted once per Browser jar (atomically, via rename); the guide
    is rewritten on every start so it follows the installed queries.
    """
    jars = sorted(Path(lib_dir).glob("neo4j-browser-*.jar"))
    if not jars:
        raise ConfigError(
            f"no neo4j-browser jar in {lib_dir}",
            hint="`kgp neo4j start` fetches it with the server",
        )
    marker = target / f".kgp-from-{jars[-1].name}"
    if not marker.exists():
        staging = Path(
            tempfile.mkdtemp(
                dir=target.parent if target.parent.exists() else None, prefix=".browser-"
            )
        )
        try:
            with zipfile.ZipFile(jars[-1]) as zf:
                for member in zf.namelist():
                    if member.startswith("browser/") and ".." not in member:
                        zf.extract(member, staging)
            (staging / "browser" / marker.name).write_text(jars[-1].name)
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():
                shutil.rmtree(target, ignore_errors=True)
            try:
                os.replace(staging / "browser", target)
            except OSError:
                if not marker.exists():  # another server won the race: use its copy
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    write_assets(target)
    return target / GUIDE_FILE


def browser_urls(http_base: str) -> dict[str, str]:
    """Browser, guide, ``:play`` command and one-click link for a server's HTTP base URL."""
    base = http_base.rstrip("/")
    # Browser fetches guides only from allowed hosts (browser.remote_content_hostname_whitelist,
    # default "guides.neo4j.com,localhost"): the name must be localhost, not 127.0.0.1.
    guide = f"{base.replace('://127.0.0.1', '://localhost', 1)}/browser/{GUIDE_FILE}"
    from urllib.parse import quote

    return {
        "browser": f"{base}/browser/",
        "guide": guide,
        "play": f":play {guide}",
        "link": f"{base}/browser/?cmd=play&arg={quote(guide, safe='')}",
    }

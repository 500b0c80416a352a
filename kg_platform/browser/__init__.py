"""Neo4j Browser surface: the ``:play`` guide, the GraSS style sheet and the saved queries."""

from kg_platform.browser.guide import (
    GUIDE_FILE,
    STYLE_FILE,
    SavedQuery,
    browser_urls,
    install_assets,
    render_guide,
    saved_queries,
    style_command,
    style_sheet,
    write_assets,
)

__all__ = [
    "GUIDE_FILE",
    "STYLE_FILE",
    "SavedQuery",
    "browser_urls",
    "install_assets",
    "render_guide",
    "saved_queries",
    "style_command",
    "style_sheet",
    "write_assets",
]

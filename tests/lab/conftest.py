"""The lab's tests (kg-platform-lab): collected only where the lab is installed.

The product's own suite (everything under ``tests/`` but this folder) runs without the lab;
``tests/unit/test_layering.py`` proves it imports and registers nothing from it.
"""

from __future__ import annotations

try:
    import kg_platform_lab  # noqa: F401
except ImportError:
    collect_ignore_glob = ["test_*.py"]

"""A/B of the CLI's driver import without pandas: `python cli_pandas_ab.py off|on kgp-args...`
runs `kgp` with `kg_platform.cli.driver_imports.install` disabled (off) or as shipped (on); time
it with `/usr/bin/time -f "%U %S"` (cpu-retrieve.txt)."""

import sys

from kg_platform.cli import driver_imports
from kg_platform.cli.main import main

if __name__ == "__main__":
    if sys.argv.pop(1) == "off":
        driver_imports.install = lambda: None
    main()

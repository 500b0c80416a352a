"""A/B of the CLI's driver import without pandas: `python cli_pandas_ab.py off|on kgp-args...`
runs `kgp` with `kg_platform.cli.driver_imports.install` disabled (off) or as shipped (on); time
it with `/usr/bin/time -f "%U %S"` (cpu-retrieve.txt)."""

import sys

mode = sys.argv.pop(1)
from kg_platform.cli import driver_imports

if mode == "off":
    driver_imports.install = lambda: None
from kg_platform.cli.main import main

main()

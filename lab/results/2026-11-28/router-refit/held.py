"""Keep only the questions the shipped routers were not trained on (the 225 held-out ones)."""

import json
import sys
from pathlib import Path

trained = {
    line.strip()
    for line in Path("lab/results/2026-11-24/default-routers/longdoc-trained-ids.txt")
    .read_text()
    .splitlines()
    if line.strip() and not line.startswith("#")
}
for name in sys.argv[1:]:
    src = Path(name)
    rows = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    kept = [r for r in rows if r["id"] not in trained]
    out = src.with_name(src.stem + "-held.jsonl")
    out.write_text("".join(json.dumps(r) + "\n" for r in kept))
    print(out, len(rows), len(kept))

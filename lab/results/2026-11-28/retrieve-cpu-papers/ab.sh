#!/bin/bash
# One `kgp retrieve` over papers, user + sys CPU, alternating the code before this session's
# embedding changes (a worktree at $BEFORE) and the checkout, ROUNDS rounds. Idle machine,
# local Neo4j warm. Usage: BEFORE=382b4bc ROUNDS=6 ab.sh > ab.txt
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
root=$PWD
before=${BEFORE:-382b4bc}
wt=$(mktemp -d)
git worktree add -q "$wt" "$before"
trap 'git worktree remove --force "$wt"' EXIT
for _ in $(seq "${ROUNDS:-6}"); do
  for side in before after; do
    dir=$root
    [ "$side" = before ] && dir=$wt
    (cd "$dir" && /usr/bin/time -f "$side %U %S %e" env PYTHONPATH="$dir" "$root/.venv/bin/python" \
      -m kg_platform.cli.main retrieve "What datasets are used for evaluation?" \
      --corpus doc-longdoc -k 5 >/dev/null) 2>&1 | tail -1
  done
done

#!/usr/bin/env bash
# Runs one benchmark of bench/ and prints its table:  bash scripts/bench.sh NAME [ARGS...]
# Benchmarks are not tests: they measure, on this machine, and their figures go to
# bench/RESULTS.md with the command that produced them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
if [ "$#" -lt 1 ]; then
  echo "usage: bash scripts/bench.sh NAME [ARGS...]   (NAME: $(ls bench/*.py | xargs -n1 basename | sed 's/\.py$//' | tr '\n' ' '))" >&2
  exit 2
fi
name="$1"; shift
python -m pip install --quiet -e ".[bench]"
exec python "bench/$name.py" "$@"

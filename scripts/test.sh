#!/usr/bin/env bash
# The whole test suite: lint, format, strict types, layer contracts, then pytest.
# This is the README's test command and exactly what .ci/run runs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
ruff check
ruff format --check
mypy
lint-imports
bash scripts/services.sh
bash scripts/pgvector.sh
bash scripts/mcp-clients.sh
# Two workers (pytest-xdist): much of the suite waits on subprocesses, servers and
# sockets, so two halve its time on a 2-core machine. `-n 0` runs it in one process.
pytest -n 2 "$@"

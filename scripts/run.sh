#!/usr/bin/env bash
# The main job on the embedded default: `plugyard serve` — the REST API (and /mcp) on
# http://127.0.0.1:8000 over SQLite in the data folder ($PLUGYARD_HOME, else
# ~/.local/share/plugyard; it prints where), the bundled plugins and offline search;
# nothing else to install. The first start prints an admin API key once.
# Arguments go to `plugyard serve` (e.g. --port 9000, --host 0.0.0.0, --db URL).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
exec plugyard serve "$@"

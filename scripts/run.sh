#!/usr/bin/env bash
# The main job on the embedded default (SQLite in ./.plugyard, nothing to install): load
# the bundled plugins of all four dialects into the store, list them as the OLO palette
# groups them, and call one through the executor.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
plugyard plugins list
plugyard call calculator --param expression="sqrt(2) * (3 + 4)^2"

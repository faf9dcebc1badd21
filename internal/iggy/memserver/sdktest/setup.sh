#!/usr/bin/env bash
# Installs the official Iggy Python SDK (pinned in e2e/python/requirements.txt, the project's
# single list of Python test clients) into <repo>/.cache/venv, where TestOfficialPythonSDK
# looks for it.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../../.." && pwd)"
venv="$root/.cache/venv"
if [ ! -x "$venv/bin/python3" ]; then
	python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/e2e/python/requirements.txt"

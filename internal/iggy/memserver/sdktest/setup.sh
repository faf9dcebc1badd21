#!/usr/bin/env bash
# Installs the official Iggy Python SDK into <repo>/.cache/pyiggy for TestOfficialPythonSDK.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
venv="$root/.cache/pyiggy"
if [ ! -x "$venv/bin/python3" ]; then
	python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"

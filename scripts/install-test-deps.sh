#!/usr/bin/env bash
# Installs the real Kafka clients the end-to-end tests (internal/e2e) run, each from its own
# registry at the version pinned in this repository:
#   Java   Apache Kafka tools + clients (e2e/java/pom.xml, Maven Central) -> e2e/java/lib
#          Kafka Streams (e2e/streams/pom.xml, Maven Central) -> e2e/streams/lib
#          Kafka Connect, MirrorMaker 2 (e2e/connect/pom.xml)     -> e2e/connect/lib
#   kcat   Debian package                                                -> PATH
#   Python confluent-kafka, kafka-python, apache-iggy (e2e/python/requirements.txt) -> .cache/venv
#          aiokafka, quixstreams (e2e/python/frameworks-requirements.txt) -> .cache/venv-frameworks
#   Node   kafkajs (e2e/node/package.json + package-lock.json, npm ci)   -> e2e/node/node_modules
#   Go     franz-go, sarama, kafka-go (go.mod, internal/e2e/go.mod)      -> Go module cache
#   promtool  Debian package prometheus, unpacked, not installed        -> .cache/prometheus
# Idempotent: a step whose pinned inputs did not change since it last succeeded is skipped.
# Downloads are cached in the usual places (~/.m2, ~/.cache/pip, ~/.npm, the Go module cache).
#
# Afterwards put the virtualenv first in PATH so tests that run `python3` get the pinned
# packages:   export PATH="$PWD/.cache/venv/bin:$PATH"
# (`make test` and .ci/run do this.)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi

now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs_since() { local ms=$(($(now_ms) - $1)); printf '%d.%ds' $((ms / 1000)) $((ms % 1000 / 100)); }
step_start=0
step() { step_start=$(now_ms); printf '==> %s\n' "$*"; }
done_step() { printf '    done in %s%s\n' "$(secs_since "$step_start")" "${1:+ ($1)}"; }

apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then
    $sudo apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# need CMD DEBIAN-PACKAGE: install the package when the command is missing.
need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "    $1 not found: installing Debian package $2"
    apt_install "$2"
  fi
}

# stamp_ok DIR INPUT...: whether DIR/.iggygw-stamp records the current hash of the inputs.
stamp_of() { cat "$@" | sha256sum | cut -d' ' -f1; }
stamp_ok() { local dir=$1; shift; [ -f "$dir/.iggygw-stamp" ] && [ "$(cat "$dir/.iggygw-stamp")" = "$(stamp_of "$@")" ]; }
stamp_write() { local dir=$1; shift; stamp_of "$@" >"$dir/.iggygw-stamp"; }

total_start=$(now_ms)

# maven_libs POM LIB JAR-GLOB: copies the runtime dependencies of the Maven project POM into
# LIB; skipped when POM did not change since and a jar matching JAR-GLOB is there.
maven_libs() {
  local pom=$1 lib=$2 jar=$3 log
  if stamp_ok "$lib" "$pom" && compgen -G "$lib/$jar" >/dev/null; then
    done_step "up to date"
    return
  fi
  rm -rf "$lib"
  log=$(mktemp)
  if ! mvn -B -Dstyle.color=never -f "$pom" dependency:copy-dependencies \
    -DoutputDirectory="$repo/$lib" -DincludeScope=runtime >"$log" 2>&1; then
    cat "$log"
    exit 1
  fi
  rm -f "$log"
  stamp_write "$lib" "$pom"
  done_step "$(ls "$lib" | grep -c '\.jar$') jars"
}

step "Java: Kafka tools and clients from Maven Central (e2e/java/pom.xml)"
need java openjdk-17-jre-headless
need mvn maven
maven_libs e2e/java/pom.xml e2e/java/lib 'kafka-tools-*.jar'

step "Java: Kafka Streams from Maven Central (e2e/streams/pom.xml)"
maven_libs e2e/streams/pom.xml e2e/streams/lib 'kafka-streams-*.jar'

step "Java: Kafka Connect and MirrorMaker 2 from Maven Central (e2e/connect/pom.xml)"
maven_libs e2e/connect/pom.xml e2e/connect/lib 'connect-mirror-*.jar'

step "kcat (Debian)"
need kcat kcat
# The TLS scenarios make their Java key stores with openssl and the JDK's keytool.
need openssl openssl
done_step "$(kcat -V 2>&1 | grep -o 'Version [^ ]*' | head -1)"

step "Python: virtualenv .cache/venv (e2e/python/requirements.txt)"
need python3 python3
venv=.cache/venv
if stamp_ok "$venv" e2e/python/requirements.txt && [ -x "$venv/bin/python" ]; then
  done_step "up to date"
else
  rm -rf "$venv"
  mkdir -p .cache
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check --only-binary=:all: -r e2e/python/requirements.txt
  stamp_write "$venv" e2e/python/requirements.txt
  done_step "$("$venv/bin/pip" freeze --disable-pip-version-check | tr '\n' ' ')"
fi

step "Python: frameworks virtualenv .cache/venv-frameworks (e2e/python/frameworks-requirements.txt)"
venv=.cache/venv-frameworks
if stamp_ok "$venv" e2e/python/frameworks-requirements.txt && [ -x "$venv/bin/python" ]; then
  done_step "up to date"
else
  rm -rf "$venv"
  mkdir -p .cache
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check --only-binary=:all: -r e2e/python/frameworks-requirements.txt
  stamp_write "$venv" e2e/python/frameworks-requirements.txt
  done_step "$("$venv/bin/pip" freeze --disable-pip-version-check | grep -iE '^(aiokafka|quixstreams|confluent-kafka)=' | tr '\n' ' ')"
fi

step "Node: kafkajs (npm ci in e2e/node)"
need node nodejs
need npm npm
modules=e2e/node/node_modules
if stamp_ok "$modules" e2e/node/package-lock.json; then
  done_step "up to date"
else
  (cd e2e/node && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  stamp_write "$modules" e2e/node/package-lock.json
  done_step "kafkajs $(node -p 'require("./e2e/node/node_modules/kafkajs/package.json").version')"
fi

step "Go: modules (go.mod, and internal/e2e/go.mod of the end-to-end tests)"
go mod download
go -C internal/e2e mod download
done_step

# internal/metrics checks deploy/prometheus/alerts.yaml with promtool. Debian ships promtool
# only in the prometheus package, whose installation sets up and starts a Prometheus server
# (its init script): the package is unpacked instead, and the test finds promtool there.
step "promtool: Debian package prometheus, unpacked into .cache/prometheus"
prom=.cache/prometheus
if [ -x "$prom/usr/bin/promtool" ] && "$prom/usr/bin/promtool" --version >/dev/null 2>&1; then
  done_step "up to date"
else
  if ! apt-cache policy prometheus 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    $sudo apt-get update -qq
  fi
  rm -rf "$prom"
  mkdir -p "$prom"
  debs=$(mktemp -d)
  (cd "$debs" && apt-get download -qq prometheus)
  dpkg-deb -x "$debs"/prometheus_*.deb "$prom"
  rm -rf "$debs"
  done_step "$("$prom/usr/bin/promtool" --version 2>&1 | head -1)"
fi

echo "==> all test dependencies installed in $(secs_since "$total_start")"

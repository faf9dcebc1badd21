#!/usr/bin/env bash
# Runs a Kafka tool main class the way the Kafka distribution's bin/kafka-run-class.sh does,
# but with the classpath that scripts/install-test-deps.sh copied from Maven Central into
# e2e/java/lib (Kafka version pinned in e2e/java/pom.xml).
# Honours the distribution's variables: JAVA_HOME, KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS,
# KAFKA_OPTS, and CLASSPATH (entries put before the Kafka jars, e.g. a login callback handler). Logging: slf4j-simple at WARN on stderr, like the distribution's tools log config.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 main.class [options]" >&2
  exit 1
fi

base_dir=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
lib_dir="$base_dir/java/lib"
if ! compgen -G "$lib_dir/kafka-tools-*.jar" >/dev/null; then
  echo "$0: no Kafka tools in $lib_dir; run scripts/install-test-deps.sh" >&2
  exit 127
fi

if [ -n "${JAVA_HOME:-}" ]; then
  java="$JAVA_HOME/bin/java"
else
  java=java
fi

heap_opts=${KAFKA_HEAP_OPTS:--Xmx256M}
perf_opts=${KAFKA_JVM_PERFORMANCE_OPTS:--server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true}
log_opts="-Dorg.slf4j.simpleLogger.defaultLogLevel=${KAFKA_TOOLS_LOG_LEVEL:-warn} -Dorg.slf4j.simpleLogger.logFile=System.err"

# Word splitting of the option variables is intended, as in kafka-run-class.sh.
# shellcheck disable=SC2086
classpath="$lib_dir/*"
if [ -n "${CLASSPATH:-}" ]; then
  classpath="$CLASSPATH:$classpath"
fi
exec "$java" $heap_opts $perf_opts $log_opts -cp "$classpath" ${KAFKA_OPTS:-} "$@"

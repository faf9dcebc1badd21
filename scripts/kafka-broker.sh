#!/usr/bin/env bash
# A one-node Apache Kafka broker (KRaft, combined broker and controller) from the jars of
# e2e/kafka-broker/pom.xml, for the load tool's Kafka legs (docs/PERFORMANCE.md):
#
#   scripts/kafka-broker.sh install            # Maven Central → .cache/kafka-broker/lib
#   scripts/kafka-broker.sh start [PORT] [DIR] # formats DIR and runs the broker in the foreground
#
# PORT (default 19092) is the PLAINTEXT listener on 127.0.0.1, PORT+1 the controller's. DIR
# (default a new temporary directory) holds the configuration and the log. The broker keeps
# Kafka's defaults otherwise (one replica, flush left to the OS), as a development broker.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
lib="$repo/.cache/kafka-broker/lib"

case "${1:-}" in
install)
  mvn -B -q -Dstyle.color=never -f "$repo/e2e/kafka-broker/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$lib" -DincludeScope=runtime
  echo "$(ls "$lib" | grep -c '\.jar$') jars in $lib"
  ;;
start)
  port=${2:-19092}
  dir=${3:-$(mktemp -d -t kafka-broker-XXXXXX)}
  [[ -d "$lib" ]] || { echo "no $lib: run $0 install first" >&2; exit 1; }
  mkdir -p "$dir/data"
  cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$((port + 1))
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$((port + 1))
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/data
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
  cp="$lib/*"
  if [[ ! -f "$dir/data/meta.properties" ]]; then
    java -cp "$cp" kafka.tools.StorageTool format -t "$(java -cp "$cp" kafka.tools.StorageTool random-uuid)" \
      -c "$dir/server.properties" >&2
  fi
  echo "Kafka broker on 127.0.0.1:$port, data in $dir" >&2
  exec java -Xms1g -Xmx1g -XX:+UseG1GC -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$cp" kafka.Kafka "$dir/server.properties"
  ;;
*)
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
  ;;
esac

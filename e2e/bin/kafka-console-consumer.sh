#!/usr/bin/env bash
# Same main class as the Kafka 4.4 distribution's bin/kafka-console-consumer.sh.
if [ -z "${KAFKA_HEAP_OPTS:-}" ]; then
  export KAFKA_HEAP_OPTS="-Xmx512M"
fi
exec "$(dirname "$(readlink -f "$0")")/kafka-run-class.sh" org.apache.kafka.tools.consumer.ConsoleConsumer "$@"

#!/usr/bin/env bash
# Same main class as the Kafka 4.4 distribution's bin/kafka-delete-records.sh.
exec "$(dirname "$(readlink -f "$0")")/kafka-run-class.sh" org.apache.kafka.tools.DeleteRecordsCommand "$@"

"""The command line both client scripts share (kafka_client.py, kafka_python_client.py): the
commands and options the Go scenarios pass, and the JSON document each command prints."""

import argparse
import json
import sys


def main(handlers):
    """Runs the command named on the command line with handlers[command] and prints its result
    as one JSON document."""
    p = argparse.ArgumentParser()
    p.add_argument("command", choices=sorted(handlers))
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic")
    p.add_argument("--topics", nargs="*", default=[])
    p.add_argument("--codec", default="none")
    p.add_argument("--group")
    p.add_argument("--partitions", type=int, default=1)
    p.add_argument("--group-protocol", default="classic")  # "consumer": KIP-848 (librdkafka only)
    a = p.parse_args()
    json.dump(handlers[a.command](a), sys.stdout)
    sys.stdout.write("\n")

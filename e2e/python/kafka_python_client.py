"""kafka-python (pure Python) client for the end-to-end suite (internal/e2e).

The same commands and JSON output as kafka_client.py (confluent-kafka), so the Go scenarios
run unchanged against both: each command performs client operations against --bootstrap and
prints what the client saw as one JSON document on stdout. Errors raise (non-zero exit).
"""

import json
import sys
import time

import client_cli

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, NewPartitions, NewTopic
from kafka.errors import TopicAlreadyExistsError

TIMEOUT = 30.0
CODECS = {"none": None, "gzip": "gzip", "snappy": "snappy", "lz4": "lz4", "zstd": "zstd"}


def text(b):
    return None if b is None else b.decode("utf-8")


def record_json(msg):
    return {
        "partition": msg.partition,
        "offset": msg.offset,
        "key": text(msg.key),
        "value": text(msg.value),
        "headers": [[k, text(v)] for k, v in (msg.headers or [])],
        "timestamp": msg.timestamp,
    }


def produce(bootstrap, topic, records, codec):
    """Produces records (Rec JSON objects) and returns the offsets the broker assigned."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, compression_type=CODECS[codec],
                             enable_idempotence=True, acks="all", linger_ms=20)
    futures = []
    for r in records:
        futures.append(producer.send(
            topic, partition=r.get("partition", 0),
            key=None if r["key"] is None else r["key"].encode(),
            value=None if r["value"] is None else r["value"].encode(),
            headers=[(k, v.encode()) for k, v in (r.get("headers") or [])],
            timestamp_ms=r.get("timestamp") or None))
    producer.flush(TIMEOUT)
    offsets = [f.get(timeout=TIMEOUT).offset for f in futures]
    producer.close(TIMEOUT)
    return offsets


def consume(consumer, count):
    out, deadline = [], time.time() + TIMEOUT
    while len(out) < count and time.time() < deadline:
        for msgs in consumer.poll(timeout_ms=1000).values():
            out.extend(record_json(m) for m in msgs)
    return out


def cmd_metadata(a):
    admin = KafkaAdminClient(bootstrap_servers=a.bootstrap)
    cluster = admin.describe_cluster()
    topics = admin.describe_topics(a.topics)
    admin.close()
    return {
        "brokers": [{"id": b["broker_id"], "host": b["host"], "port": b["port"]} for b in cluster["brokers"]],
        "topics": {t["name"]: [{"partition": p["partition_index"], "leader": p["leader_id"],
                                "error": None if p["error_code"] == 0 else str(p["error_code"])}
                               for p in sorted(t["partitions"], key=lambda p: p["partition_index"])]
                   for t in topics if t["error_code"] == 0},
    }


def cmd_produce_consume(a):
    records = json.load(sys.stdin)
    offsets = produce(a.bootstrap, a.topic, records, a.codec)
    consumer = KafkaConsumer(bootstrap_servers=a.bootstrap, enable_auto_commit=False)
    tp = TopicPartition(a.topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    got = consume(consumer, len(records))
    consumer.close()
    return {"produced_offsets": offsets, "records": got}


def cmd_group(a):
    records = json.load(sys.stdin)
    produce(a.bootstrap, a.topic, records, "none")
    conf = {"bootstrap_servers": a.bootstrap, "group_id": a.group, "auto_offset_reset": "earliest",
            "enable_auto_commit": False}
    first = KafkaConsumer(a.topic, **conf)
    got = consume(first, len(records))
    first.commit()
    committed = {str(p): first.committed(TopicPartition(a.topic, p)) for p in range(a.partitions)}
    first.close()
    # A second member of the group resumes from the commits: nothing is left to read.
    second = KafkaConsumer(a.topic, **conf)
    again, deadline = [], time.time() + 6
    while time.time() < deadline:
        for msgs in second.poll(timeout_ms=500).values():
            again.extend(record_json(m) for m in msgs)
    assignment = sorted(tp.partition for tp in second.assignment())
    second.close()
    return {"records": got, "committed": committed, "reread": again, "second_assignment": assignment}


def partition_count(admin, topic):
    return len(admin.describe_topics([topic])[0]["partitions"])


def retention_ms(admin, topic):
    configs = admin.describe_configs([ConfigResource("TOPIC", topic)], config_filter="all")
    return configs["topic"][topic]["retention.ms"]["value"]


def cmd_admin(a):
    admin = KafkaAdminClient(bootstrap_servers=a.bootstrap)
    out = {}
    admin.create_topics([NewTopic(a.topic, 2, 1, topic_configs={"retention.ms": "86400000"})])
    out["partitions_after_create"] = partition_count(admin, a.topic)
    try:
        admin.create_topics([NewTopic(a.topic, 2, 1)])
        out["duplicate_create_error"] = None
    except TopicAlreadyExistsError:
        out["duplicate_create_error"] = "TOPIC_ALREADY_EXISTS"
    admin.create_partitions({a.topic: NewPartitions(4)})
    out["partitions_after_create_partitions"] = partition_count(admin, a.topic)
    out["retention_ms_at_create"] = retention_ms(admin, a.topic)
    admin.alter_configs([ConfigResource("TOPIC", a.topic, configs={"retention.ms": "3600000"})])
    out["retention_ms_after_alter"] = retention_ms(admin, a.topic)
    admin.delete_topics([a.topic])
    deadline = time.time() + 20
    while a.topic in admin.list_topics() and time.time() < deadline:
        time.sleep(0.5)
    out["listed_after_delete"] = a.topic in admin.list_topics()
    admin.close()
    return out


if __name__ == "__main__":
    client_cli.main({"metadata": cmd_metadata, "produce-consume": cmd_produce_consume,
                     "group": cmd_group, "admin": cmd_admin})

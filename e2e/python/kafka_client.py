"""confluent-kafka (librdkafka) client for the end-to-end suite (internal/e2e).

Each command performs client operations against --bootstrap and prints what the client saw as
one JSON document on stdout; the Go test asserts it. Errors raise (non-zero exit).
"""

import json
import sys
import time

import client_cli

from confluent_kafka import (OFFSET_BEGINNING, Consumer, KafkaException, Producer,
                             TopicPartition)
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry,
                                   ConfigResource, NewPartitions, NewTopic)

TIMEOUT = 30.0


def text(b):
    return None if b is None else b.decode("utf-8")


def record_json(msg):
    _, ts = msg.timestamp()
    return {
        "partition": msg.partition(),
        "offset": msg.offset(),
        "key": text(msg.key()),
        "value": text(msg.value()),
        "headers": [[k, text(v)] for k, v in (msg.headers() or [])],
        "timestamp": ts,
    }


def produce(bootstrap, topic, records, codec):
    """Produces records (Rec JSON objects) and returns the offsets the broker assigned."""
    producer = Producer({"bootstrap.servers": bootstrap, "compression.type": codec,
                         "enable.idempotence": True, "linger.ms": 20})
    offsets, errors = [None] * len(records), []

    def report(i):
        def cb(err, msg):
            if err is not None:
                errors.append(str(err))
            else:
                offsets[i] = msg.offset()
        return cb

    for i, r in enumerate(records):
        kwargs = {}
        if r.get("timestamp"):
            kwargs["timestamp"] = r["timestamp"]
        producer.produce(topic, partition=r.get("partition", 0),
                         key=None if r["key"] is None else r["key"].encode(),
                         value=None if r["value"] is None else r["value"].encode(),
                         headers=[(k, v.encode()) for k, v in (r.get("headers") or [])],
                         on_delivery=report(i), **kwargs)
    if producer.flush(TIMEOUT) != 0:
        raise RuntimeError("produce: messages still in flight after %ss" % TIMEOUT)
    if errors:
        raise RuntimeError("produce: %s" % errors)
    return offsets


def consume(consumer, count):
    out, deadline = [], time.time() + TIMEOUT
    while len(out) < count and time.time() < deadline:
        msg = consumer.poll(1.0)
        if msg is None:
            continue
        if msg.error():
            raise KafkaException(msg.error())
        out.append(record_json(msg))
    return out


def cmd_metadata(a):
    md = AdminClient({"bootstrap.servers": a.bootstrap}).list_topics(timeout=TIMEOUT)
    return {
        "brokers": [{"id": b.id, "host": b.host, "port": b.port} for b in md.brokers.values()],
        "topics": {name: [{"partition": p.id, "leader": p.leader, "error": str(p.error) if p.error else None}
                          for p in sorted(t.partitions.values(), key=lambda p: p.id)]
                   for name, t in md.topics.items() if name in a.topics},
    }


def cmd_produce_consume(a):
    records = json.load(sys.stdin)
    offsets = produce(a.bootstrap, a.topic, records, a.codec)
    consumer = Consumer({"bootstrap.servers": a.bootstrap, "group.id": "unused-" + a.topic,
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(a.topic, 0, OFFSET_BEGINNING)])
    got = consume(consumer, len(records))
    consumer.close()
    return {"produced_offsets": offsets, "records": got}


def cmd_group(a):
    records = json.load(sys.stdin)
    produce(a.bootstrap, a.topic, records, "none")
    conf = {"bootstrap.servers": a.bootstrap, "group.id": a.group, "auto.offset.reset": "earliest",
            "enable.auto.commit": False}
    if a.group_protocol != "classic":
        conf["group.protocol"] = a.group_protocol
    first = Consumer(conf)
    first.subscribe([a.topic])
    got = consume(first, len(records))
    first.commit(asynchronous=False)
    parts = [TopicPartition(a.topic, p) for p in range(a.partitions)]
    committed = {str(tp.partition): tp.offset for tp in first.committed(parts, timeout=TIMEOUT)}
    first.close()
    # A second member of the group resumes from the commits: nothing is left to read.
    second = Consumer(conf)
    second.subscribe([a.topic])
    again, deadline = [], time.time() + 6
    while time.time() < deadline:
        msg = second.poll(0.5)
        if msg is not None and not msg.error():
            again.append(record_json(msg))
    assignment = sorted(tp.partition for tp in second.assignment())
    second.close()
    return {"records": got, "committed": committed, "reread": again, "second_assignment": assignment}


def wait(futures):
    for f in futures.values():
        f.result(TIMEOUT)


def partition_count(admin, topic):
    return len(admin.list_topics(topic, timeout=TIMEOUT).topics[topic].partitions)


def cmd_admin(a):
    admin = AdminClient({"bootstrap.servers": a.bootstrap})
    out = {}
    wait(admin.create_topics([NewTopic(a.topic, 2, 1, config={"retention.ms": "86400000"})],
                             operation_timeout=TIMEOUT))
    out["partitions_after_create"] = partition_count(admin, a.topic)
    try:
        wait(admin.create_topics([NewTopic(a.topic, 2, 1)], operation_timeout=TIMEOUT))
        out["duplicate_create_error"] = None
    except KafkaException as e:
        out["duplicate_create_error"] = e.args[0].name()
    wait(admin.create_partitions([NewPartitions(a.topic, 4)], operation_timeout=TIMEOUT))
    out["partitions_after_create_partitions"] = partition_count(admin, a.topic)
    resource = ConfigResource(ConfigResource.Type.TOPIC, a.topic)
    configs = admin.describe_configs([resource])[resource].result(TIMEOUT)
    out["retention_ms_at_create"] = configs["retention.ms"].value
    change = ConfigResource(ConfigResource.Type.TOPIC, a.topic, incremental_configs=[
        ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([change])[change].result(TIMEOUT)
    configs = admin.describe_configs([resource])[resource].result(TIMEOUT)
    out["retention_ms_after_alter"] = configs["retention.ms"].value
    wait(admin.delete_topics([a.topic], operation_timeout=TIMEOUT))
    deadline = time.time() + 20
    while a.topic in admin.list_topics(timeout=TIMEOUT).topics and time.time() < deadline:
        time.sleep(0.5)
    out["listed_after_delete"] = a.topic in admin.list_topics(timeout=TIMEOUT).topics
    return out


if __name__ == "__main__":
    client_cli.main({"metadata": cmd_metadata, "produce-consume": cmd_produce_consume,
                     "group": cmd_group, "admin": cmd_admin})

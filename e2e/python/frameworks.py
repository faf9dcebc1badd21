"""Python frameworks for the end-to-end suite (internal/e2e/pyframeworks_test.go), run with the
virtualenv .cache/venv-frameworks (frameworks-requirements.txt).

Each command drives a framework against --bootstrap and prints what it saw as one JSON
document on stdout; the Go test asserts it. Errors raise (non-zero exit).

  aiokafka     an asyncio producer, then two consumers of one group in turn: the second
               starts from the offsets the first committed.
  quix-count   a quixstreams application counting words: a stateful (RocksDB) count per
               word, re-keyed through a repartition topic, its state in a changelog topic.
"""

import argparse
import asyncio
import json
import logging
import sys

TIMEOUT = 60.0


async def aiokafka_scenario(bootstrap, topic, group, first, second):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
    await producer.start()
    produced = []

    async def send(prefix, n):
        for i in range(n):
            md = await producer.send_and_wait(topic, key=f"{prefix}-k{i}".encode(),
                                              value=f"{prefix}-v{i}".encode(), partition=i % 2)
            produced.append([md.partition, md.offset])

    async def consume(n):
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                    auto_offset_reset="earliest", enable_auto_commit=False)
        await consumer.start()
        seen = []
        try:
            while len(seen) < n:
                batches = await asyncio.wait_for(consumer.getmany(timeout_ms=500), TIMEOUT)
                for msgs in batches.values():
                    seen.extend({"partition": m.partition, "offset": m.offset,
                                 "key": m.key.decode(), "value": m.value.decode()} for m in msgs)
            await consumer.commit()
            committed = {p: await consumer.committed(TopicPartition(topic, p)) for p in (0, 1)}
        finally:
            await consumer.stop()
        return seen, committed

    try:
        await send("first", first)
        first_seen, first_committed = await asyncio.wait_for(consume(first), TIMEOUT)
        await send("second", second)
        second_seen, second_committed = await asyncio.wait_for(consume(second), TIMEOUT)
    finally:
        await producer.stop()
    return {"produced": produced, "first": first_seen, "first_committed": first_committed,
            "second": second_seen, "second_committed": second_committed}


def quix_count(bootstrap, group, input_topic, output_topic, state_dir, outputs):
    from quixstreams import Application

    app = Application(broker_address=bootstrap, consumer_group=group, state_dir=state_dir,
                      auto_offset_reset="earliest", commit_interval=0.5, loglevel="WARNING")
    lines = app.topic(input_topic, value_deserializer="str")
    counts = app.topic(output_topic, value_serializer="json")

    def count(word, state):
        n = state.get("count", 0) + 1
        state.set("count", n)
        return {"word": word, "count": n}

    sdf = app.dataframe(lines)
    sdf = sdf.apply(lambda line: line.lower().split(), expand=True)
    sdf = sdf.group_by(lambda word: word, name="word")
    sdf = sdf.apply(count, stateful=True)
    sdf.to_topic(counts)
    out = app.run(count=outputs, timeout=TIMEOUT)
    return {"outputs": out}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["aiokafka", "quix-count"])
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic")
    ap.add_argument("--output")
    ap.add_argument("--group", required=True)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--second", type=int, default=0)
    ap.add_argument("--state-dir")
    ap.add_argument("--outputs", type=int, default=0)
    a = ap.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    if a.command == "aiokafka":
        result = asyncio.run(aiokafka_scenario(a.bootstrap, a.topic, a.group, a.first, a.second))
    else:
        result = quix_count(a.bootstrap, a.group, a.topic, a.output, a.state_dir, a.outputs)
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()

"""Drives confluent-kafka (librdkafka) against a broker for confluent_test.go.

Usage: confluent.py ADDR COMMAND ARGS...; each command prints one JSON
object on stdout and exits non-zero on any client error.

  create TOPIC PARTITIONS [NAME=VALUE...]  AdminClient.create_topics
  delete TOPIC...                          AdminClient.delete_topics
  produce TOPIC CODEC COUNT BASE_MS        idempotent, murmur2_random, keyed
  consume TOPIC OFFSET TIME_MS             assign() from OFFSET, then from
                                           offsets_for_times(TIME_MS)
  metadata                                 list_topics
"""

import json
import sys

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

TIMEOUT = 10.0


def admin_results(futures):
    out = {}
    for name, fut in futures.items():
        try:
            fut.result(timeout=TIMEOUT)
            out[name] = None
        except KafkaException as e:
            out[name] = e.args[0].name()
    return out


def create(addr, topic, partitions, *configs):
    admin = AdminClient({"bootstrap.servers": addr})
    config = dict(c.split("=", 1) for c in configs)
    nt = NewTopic(topic, num_partitions=int(partitions), replication_factor=1, config=config)
    return {"errors": admin_results(admin.create_topics([nt], operation_timeout=TIMEOUT))}


def delete(addr, *topics):
    admin = AdminClient({"bootstrap.servers": addr})
    return {"errors": admin_results(admin.delete_topics(list(topics), operation_timeout=TIMEOUT))}


def produce(addr, topic, codec, count, base_ms):
    p = Producer({
        "bootstrap.servers": addr,
        "enable.idempotence": True,
        "compression.codec": codec,
        "partitioner": "murmur2_random",
        "linger.ms": 20,
    })
    delivered, errors = [], []

    def report(err, msg):
        if err is not None:
            errors.append(str(err))
            return
        delivered.append({"p": msg.partition(), "o": msg.offset(), "k": msg.key().decode()})

    for i in range(int(count)):
        p.produce(topic, key="key-%d" % (i % 13), value="value %d of %s" % (i, codec),
                  timestamp=int(base_ms) + i, on_delivery=report)
        p.poll(0)
    left = p.flush(TIMEOUT)
    if errors or left:
        raise SystemExit("produce: %d not delivered, errors %s" % (left, errors[:3]))
    return {"delivered": delivered}


def read_to_end(c, tps):
    """Assigns tps and returns their records up to each one's end (EOF)."""
    c.assign(tps)
    waiting = {tp.partition for tp in tps}
    records = []
    while waiting:
        msg = c.poll(TIMEOUT)
        if msg is None:
            raise SystemExit("consume: no message or EOF within %ss, waiting for %s" % (TIMEOUT, sorted(waiting)))
        if msg.error():
            if msg.error().code() == KafkaError._PARTITION_EOF:
                waiting.discard(msg.partition())
                continue
            raise KafkaException(msg.error())
        records.append({"p": msg.partition(), "o": msg.offset(), "k": msg.key().decode(),
                        "v": msg.value().decode(), "ts": msg.timestamp()[1]})
    c.unassign()
    return records


def consume(addr, topic, offset, time_ms):
    c = Consumer({
        "bootstrap.servers": addr,
        "group.id": "confluent-test",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        # The end of a partition is reported after a fetch at its end
        # comes back empty: after the broker's long poll of this long.
        "fetch.wait.max.ms": 50,
    })
    try:
        parts = sorted(c.list_topics(topic, timeout=TIMEOUT).topics[topic].partitions)
        from_offset = read_to_end(c, [TopicPartition(topic, p, int(offset)) for p in parts])
        found = c.offsets_for_times([TopicPartition(topic, p, int(time_ms)) for p in parts], timeout=TIMEOUT)
        for tp in found:
            if tp.error is not None:
                raise KafkaException(tp.error)
        from_time = read_to_end(c, found)
        return {
            "from_offset": from_offset,
            "time_offsets": {str(tp.partition): tp.offset for tp in found},
            "from_time": from_time,
        }
    finally:
        c.close()


def metadata(addr):
    c = Consumer({"bootstrap.servers": addr, "group.id": "confluent-test"})
    try:
        md = c.list_topics(timeout=TIMEOUT)
    finally:
        c.close()
    return {
        "brokers": {str(b.id): "%s:%d" % (b.host, b.port) for b in md.brokers.values()},
        "controller": md.controller_id,
        "topics": {
            name: {
                "error": t.error.name() if t.error is not None else None,
                "partitions": {
                    str(p.id): {"leader": p.leader, "replicas": p.replicas, "isrs": p.isrs}
                    for p in t.partitions.values()
                },
            }
            for name, t in md.topics.items()
        },
    }


COMMANDS = {"create": create, "delete": delete, "produce": produce, "consume": consume, "metadata": metadata}

if __name__ == "__main__":
    addr, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    json.dump(COMMANDS[command](addr, *args), sys.stdout)
    sys.stdout.write("\n")

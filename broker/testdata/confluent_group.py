"""A member of a balanced consumer group (librdkafka) for confluent_test.go.

Usage: confluent_group.py ADDR GROUP TOPIC

Subscribes to TOPIC in GROUP, from the earliest offset, and prints one JSON
object a line on stdout: {"assigned": [partitions]} and {"revoked":
[partitions]} when the group rebalances, {"p", "o", "v"} for each message,
which it commits (synchronously) before it takes the next. When its stdin
closes it closes the consumer (leaving the group) and prints {"closed":
true}. It exits non-zero on a client error.
"""

import json
import sys
import threading

from confluent_kafka import Consumer, KafkaError, KafkaException


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main(addr, group, topic):
    stop = threading.Event()

    def watch_stdin():
        sys.stdin.read()
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    c = Consumer({
        "bootstrap.servers": addr,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 100,
        "partition.assignment.strategy": "range",
    })

    def on_assign(consumer, parts):
        say({"assigned": sorted(p.partition for p in parts)})

    def on_revoke(consumer, parts):
        say({"revoked": sorted(p.partition for p in parts)})

    c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
    while not stop.is_set():
        msg = c.poll(0.1)
        if msg is None:
            continue
        if msg.error():
            if msg.error().code() == KafkaError._PARTITION_EOF:
                continue
            raise KafkaException(msg.error())
        say({"p": msg.partition(), "o": msg.offset(), "v": msg.value().decode()})
        c.commit(message=msg, asynchronous=False)
    c.close()
    say({"closed": True})


if __name__ == "__main__":
    main(*sys.argv[1:])

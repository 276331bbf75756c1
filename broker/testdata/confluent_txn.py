"""Drives confluent-kafka (librdkafka) transactions against a broker for
confluent_txn_test.go.

Usage: confluent_txn.py ADDR COMMAND ARGS...; each command prints one JSON
object on stdout and exits non-zero on any client error.

  txns TOPIC ID COUNT     COUNT transactions of transactional id ID, three
                          keyed records each (murmur2_random), the even
                          ones committed, the odd ones sent and aborted
  read TOPIC ISOLATION    every record of TOPIC to its end, with
                          isolation.level ISOLATION
"""

import json
import sys

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

TIMEOUT = 10.0


def txns(addr, topic, txn_id, count):
    p = Producer({
        "bootstrap.servers": addr,
        "transactional.id": txn_id,
        "partitioner": "murmur2_random",
        "linger.ms": 5,
    })
    p.init_transactions(TIMEOUT)
    committed, aborted = [], []
    for i in range(int(count)):
        p.begin_transaction()
        values = ["%s-t%d-r%d" % (txn_id, i, j) for j in range(3)]
        for v in values:
            p.produce(topic, key=v, value=v)
        if i % 2 == 0:
            p.commit_transaction(TIMEOUT)
            committed += values
        else:
            # Sent first: abort_transaction drops what is still queued.
            left = p.flush(TIMEOUT)
            if left:
                raise SystemExit("txns: %d records not sent" % left)
            p.abort_transaction(TIMEOUT)
            aborted += values
    return {"committed": committed, "aborted": aborted}


def read(addr, topic, isolation):
    c = Consumer({
        "bootstrap.servers": addr,
        "group.id": "confluent-txn-test",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "isolation.level": isolation,
        "fetch.wait.max.ms": 50,
    })
    try:
        parts = sorted(c.list_topics(topic, timeout=TIMEOUT).topics[topic].partitions)
        c.assign([TopicPartition(topic, p, 0) for p in parts])
        waiting = set(parts)
        values = []
        while waiting:
            msg = c.poll(TIMEOUT)
            if msg is None:
                raise SystemExit("read: no message or EOF within %ss, waiting for %s" % (TIMEOUT, sorted(waiting)))
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    waiting.discard(msg.partition())
                    continue
                raise KafkaException(msg.error())
            values.append(msg.value().decode())
        return {"values": values}
    finally:
        c.close()


COMMANDS = {"txns": txns, "read": read}

if __name__ == "__main__":
    addr, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    json.dump(COMMANDS[command](addr, *args), sys.stdout)
    sys.stdout.write("\n")

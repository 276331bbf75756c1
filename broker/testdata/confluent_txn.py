"""Drives confluent-kafka (librdkafka) transactions against a broker for
confluent_txn_test.go.

Usage: confluent_txn.py ADDR COMMAND ARGS...; each command prints one JSON
object on stdout and exits non-zero on any client error.

  txns TOPIC ID COUNT     COUNT transactions of transactional id ID, three
                          keyed records each (murmur2_random), the even
                          ones committed, the odd ones sent and aborted
  read TOPIC ISOLATION    every record of TOPIC to its end, with
                          isolation.level ISOLATION
  eos SRC DST GROUP ID LIMIT
                          consume-transform-produce: a read_committed
                          consumer of group GROUP subscribed to SRC, each
                          batch it polls produced to DST (value + ":out")
                          in a transaction of transactional id ID with the
                          consumer's offsets (send_offsets_to_transaction);
                          every third transaction aborted and its records
                          read again from the group's committed offsets;
                          until LIMIT records are committed (0: until every
                          partition is at its end)
"""

import json
import sys

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition

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


def eos(addr, src, dst, group, txn_id, limit):
    limit = int(limit)
    c = Consumer({
        "bootstrap.servers": addr,
        "group.id": group,
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "isolation.level": "read_committed",
        "auto.offset.reset": "earliest",
        "fetch.wait.max.ms": 50,
    })
    p = Producer({
        "bootstrap.servers": addr,
        "transactional.id": txn_id,
        "linger.ms": 5,
    })
    p.init_transactions(TIMEOUT)
    c.subscribe([src])
    committed, txns, at_end = [], 0, set()
    try:
        while not limit or len(committed) < limit:
            msgs = c.consume(num_messages=7, timeout=TIMEOUT)
            records = []
            for m in msgs:
                if not m.error():
                    records.append(m)
                    at_end.discard(m.partition())
                elif m.error().code() == KafkaError._PARTITION_EOF:
                    at_end.add(m.partition())
                else:
                    raise KafkaException(m.error())
            assigned = {tp.partition for tp in c.assignment()}
            if not records:
                if assigned and assigned <= at_end:
                    break
                if not msgs:
                    raise SystemExit("eos: nothing within %ss, at the end of %s of %s" % (TIMEOUT, sorted(at_end), sorted(assigned)))
                continue
            next_offsets = {}
            p.begin_transaction()
            for m in records:
                p.produce(dst, key=m.key(), value=m.value() + b":out")
                next_offsets[m.partition()] = m.offset() + 1
            offsets = [TopicPartition(src, part, off) for part, off in sorted(next_offsets.items())]
            p.send_offsets_to_transaction(offsets, c.consumer_group_metadata(), TIMEOUT)
            if txns % 3 == 2:
                left = p.flush(TIMEOUT)
                if left:
                    raise SystemExit("eos: %d records not sent" % left)
                p.abort_transaction(TIMEOUT)
                for tp in c.committed(c.assignment(), TIMEOUT):
                    tp.offset = tp.offset if tp.offset >= 0 else OFFSET_BEGINNING
                    c.seek(tp)
                at_end.clear()
            else:
                p.commit_transaction(TIMEOUT)
                committed += [m.value().decode() for m in records]
            txns += 1
    finally:
        c.close()
    return {"committed": committed, "transactions": txns}


COMMANDS = {"txns": txns, "read": read, "eos": eos}

if __name__ == "__main__":
    addr, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    json.dump(COMMANDS[command](addr, *args), sys.stdout)
    sys.stdout.write("\n")

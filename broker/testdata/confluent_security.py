"""Drives confluent-kafka (librdkafka) with security settings for
confluent_security_test.go.

Usage: confluent_security.py ADDR CONFIG_JSON COMMAND ARGS...; CONFIG_JSON
is merged into every client's configuration (security.protocol,
sasl.mechanisms, ...). Each command prints one JSON object on stdout.

  produce TOPIC COUNT   idempotent producer of COUNT values to partition 0
  consume TOPIC COUNT   assign() partition 0 from the start, COUNT values
  metadata              list_topics: {"error": null} or the error's name,
                        and "reported", the errors error_cb got
"""

import json
import sys

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition, OFFSET_BEGINNING

TIMEOUT = 10.0


def produce(conf, topic, count):
    p = Producer(dict(conf, **{"enable.idempotence": True, "linger.ms": 5}))
    errors = []

    def report(err, msg):
        if err is not None:
            errors.append(str(err))

    for i in range(int(count)):
        p.produce(topic, value="secure value %d" % i, partition=0, on_delivery=report)
        p.poll(0)
    left = p.flush(TIMEOUT)
    if errors or left:
        raise SystemExit("produce: %d not delivered, errors %s" % (left, errors[:3]))
    return {"delivered": int(count)}


def consume(conf, topic, count):
    c = Consumer(dict(conf, **{"group.id": "unused", "enable.auto.commit": False}))
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    values = []
    while len(values) < int(count):
        msg = c.poll(TIMEOUT)
        if msg is None:
            raise SystemExit("consume: nothing within %ss after %d values" % (TIMEOUT, len(values)))
        if msg.error():
            raise SystemExit("consume: %s" % msg.error())
        values.append(msg.value().decode())
    c.close()
    return {"values": values}


def metadata(conf):
    errors = []
    p = Producer(dict(conf, error_cb=lambda err: errors.append(err.name())))
    try:
        p.list_topics(timeout=2.0)
        return {"error": None, "reported": errors}
    except KafkaException as e:
        p.poll(1.0)  # serves error_cb
        return {"error": e.args[0].name(), "reported": errors}


def main():
    addr, conf = sys.argv[1], json.loads(sys.argv[2])
    conf["bootstrap.servers"] = addr
    cmd, args = sys.argv[3], sys.argv[4:]
    out = {"produce": produce, "consume": consume, "metadata": metadata}[cmd](conf, *args)
    print(json.dumps(out))


if __name__ == "__main__":
    main()

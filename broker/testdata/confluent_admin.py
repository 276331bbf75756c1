"""Drives confluent-kafka's AdminClient (librdkafka) partition and config
calls against a broker for confluent_admin_test.go.

Usage: confluent_admin.py ADDR COMMAND ARGS...; each command prints one
JSON object on stdout.

  partitions TOPIC TOTAL          create_partitions (errors by topic)
  alter TOPIC [NAME=VALUE...]     alter_configs (errors by topic)
  describe TYPE NAME              describe_configs of a topic or broker
"""

import json
import sys

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewPartitions

TIMEOUT = 10.0


def error_name(fut):
    try:
        fut.result(timeout=TIMEOUT)
        return None
    except KafkaException as e:
        return e.args[0].name()


def partitions(addr, topic, total):
    admin = AdminClient({"bootstrap.servers": addr})
    futs = admin.create_partitions([NewPartitions(topic, int(total))], operation_timeout=TIMEOUT)
    return {"errors": {name: error_name(f) for name, f in futs.items()}}


def alter(addr, topic, *configs):
    admin = AdminClient({"bootstrap.servers": addr})
    res = ConfigResource("topic", topic, set_config=dict(c.split("=", 1) for c in configs))
    futs = admin.alter_configs([res], request_timeout=TIMEOUT)
    return {"errors": {r.name: error_name(f) for r, f in futs.items()}}


def describe(addr, restype, name):
    admin = AdminClient({"bootstrap.servers": addr})
    futs = admin.describe_configs([ConfigResource(restype, name)], request_timeout=TIMEOUT)
    out = {}
    for _, f in futs.items():
        for key, e in f.result(timeout=TIMEOUT).items():
            out[key] = {
                "value": e.value,
                "source": ConfigSource(e.source).name,
                "read_only": e.is_read_only,
                "default": e.is_default,
                "synonyms": sorted(e.synonyms.keys()),
            }
    return {"configs": out}


COMMANDS = {"partitions": partitions, "alter": alter, "describe": describe}

if __name__ == "__main__":
    addr, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    json.dump(COMMANDS[command](addr, *args), sys.stdout)
    sys.stdout.write("\n")

#!/usr/bin/env python3
"""End-to-end scenario of group configs and KIP-430 authorized operations with the
real admin clients against group-server: confluent-kafka 2.16.1 (librdkafka 2.16.0)
alters a group's configs with IncrementalAlterConfigs and reads them back with
DescribeConfigs, a value out of the node's bounds is refused with Kafka's code and
words, kafka-python 3.0.12 reads them and alters another, which confluent-kafka
reads, ListConfigResources lists the group, and its configs are still there after the
server is killed (SIGKILL) and started again on the same data directory. kafka-python's
DescribeGroups with include_authorized_operations answers every operation a group
supports (the node has no ACL file: everything is allowed).

`group_configs.py run --server BIN --workdir DIR` prints one PASS or FAIL line and a
summary.
"""

import os

from consumer_protocol import run_one
from worker_io import ServerProcess, check

GROUP = "configured"
HEARTBEAT = "consumer.heartbeat.interval.ms"


class Server(ServerProcess):
    def __init__(self, binary, workdir):
        super().__init__(binary, workdir)
        self.data_dir = os.path.join(workdir, "group-configs.data")

    def start(self):
        args = ["--topic", "orders:2", "--data-dir", self.data_dir, "--exit-on-stdin-close"]
        self.launch(args, "group-configs.stderr", rust_log="info,sled=warn")


def confluent_alter(bootstrap, name, value):
    """IncrementalAlterConfigs SET of one config of GROUP, by confluent-kafka: None, or
    the error's (code, message)."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": bootstrap})
    entry = ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.GROUP, GROUP, incremental_configs=[entry])
    for future in admin.incremental_alter_configs([resource]).values():
        try:
            future.result(timeout=20)
        except Exception as e:
            error = e.args[0]
            return error.code(), error.str()
    return None


def confluent_describe(bootstrap):
    """DescribeConfigs of GROUP by confluent-kafka: name -> (value, source code)."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.describe_configs([ConfigResource(ResourceType.GROUP, GROUP)]).values():
        return {n: (c.value, int(c.source)) for n, c in future.result(timeout=20).items()}
    return {}


def kafka_python_describe(bootstrap):
    """DescribeConfigs of GROUP's heartbeat interval by kafka-python: its entry."""
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        resource = ConfigResource(ConfigResourceType.GROUP, GROUP, configs=[HEARTBEAT])
        return admin.describe_configs([resource])["group"][GROUP][HEARTBEAT]
    finally:
        admin.close()


def kafka_python_alter(bootstrap, name, value):
    """IncrementalAlterConfigs SET of one config of GROUP, by kafka-python: its answer."""
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        resource = ConfigResource(ConfigResourceType.GROUP, GROUP, configs={name: value})
        return admin.alter_configs([resource])["group"][GROUP]
    finally:
        admin.close()


def kafka_python_listed_groups(bootstrap):
    """ListConfigResources of GROUP resources, by kafka-python: the names."""
    from kafka.admin import ConfigResourceType, KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return admin.list_config_resources([ConfigResourceType.GROUP])
    finally:
        admin.close()


def kafka_python_authorized_operations(bootstrap):
    """DescribeGroups of GROUP with include_authorized_operations, by kafka-python."""
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        described = admin.describe_groups([GROUP], include_authorized_operations=True)
        return described[GROUP].get("authorized_operations")
    finally:
        admin.close()


def scenario(binary, workdir):
    server = Server(binary, workdir)
    server.start()
    try:
        check(confluent_alter(server.bootstrap, HEARTBEAT, "6000") is None, "the alter is accepted")
        configs = confluent_describe(server.bootstrap)
        check(configs.get(HEARTBEAT, (None,))[0] == "6000", f"the group's value: {configs.get(HEARTBEAT)}")
        # GROUP_CONFIG (8): the group's own; DEFAULT_CONFIG (5): Kafka's default.
        check(configs[HEARTBEAT][1] == 8, f"its source is the group's: {configs[HEARTBEAT]}")
        session = configs.get("consumer.session.timeout.ms")
        check(session == ("45000", 5), f"the broker's value elsewhere: {session}")

        refused = confluent_alter(server.bootstrap, HEARTBEAT, "1")
        words = "consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive."
        check(refused is not None and refused[1] == words, f"a value out of bounds is refused: {refused}")
        check(str(refused[0]).endswith("INVALID_CONFIG") or refused[0] == 40, f"as INVALID_CONFIG: {refused}")

        entry = kafka_python_describe(server.bootstrap)
        check(entry["value"] == "6000" and entry["config_source"] == "DYNAMIC_GROUP_CONFIG", f"kafka-python: {entry}")
        answer = kafka_python_alter(server.bootstrap, "consumer.session.timeout.ms", "50000")
        check(answer == "OK", f"kafka-python's alter is accepted: {answer}")
        session = confluent_describe(server.bootstrap).get("consumer.session.timeout.ms")
        check(session == ("50000", 8), f"and described by confluent-kafka: {session}")

        listed = kafka_python_listed_groups(server.bootstrap)
        check(listed == {"group": [GROUP]}, f"ListConfigResources lists the group: {listed}")

        ops = kafka_python_authorized_operations(server.bootstrap)
        names = sorted(str(op).rsplit(".", 1)[-1] for op in (ops or []))
        expected = ["ALTER_CONFIGS", "DELETE", "DESCRIBE", "DESCRIBE_CONFIGS", "READ"]
        check(names == expected, f"every operation a group supports: {names}")

        server.kill()
        server.start()
        entry = kafka_python_describe(server.bootstrap)
        check(entry["value"] == "6000", f"kept across a kill -9: {entry}")
        return "altered, refused out of bounds, read by both clients, listed, kept across a kill -9; 5 authorized operations"
    finally:
        server.kill()


def main():
    run_one("group-configs", scenario)


if __name__ == "__main__":
    main()

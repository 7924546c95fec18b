#!/usr/bin/env python3
"""Real Kafka clients against a secured group-server: kafka-python 3.0.12 ("kp") and
confluent-kafka 2.16.1 / librdkafka 2.16.0 ("ck").

`security.py run --config FILE` reads a JSON file naming the servers the Rust test
started (SASL_SSL, SSL with client certificates, SASL_PLAINTEXT), the CA and client
certificate, and the user's name and password, then runs the scenarios, three at a time,
each client in its own worker process (`security.py worker '<json>'`) with a wall-clock
limit, killed by its own pid when it overstays:

- good logins (SASL_SSL with SCRAM-SHA-512 and with PLAIN, SSL with a client
  certificate, SASL_PLAINTEXT with SCRAM-SHA-512): the client joins a group, is
  assigned all partitions of t1, commits offsets and reads them back;
- bad logins (a wrong password, an unknown user): the client reports an
  authentication error and never gets an assignment;
- ACLs (SASL_PLAINTEXT with SCRAM-SHA-512 and an ACL file): the user joins and commits
  in a group a literal ACL allows and in one a prefixed ACL allows; in a group a deny
  rule covers (deny wins over the prefixed allow) and in one no rule names, the client
  reports a group authorization error and never gets an assignment.

It prints one line per scenario and `security: N/N scenarios passed` at the end.
"""

import json
import logging
import subprocess
import sys
import threading
import time
import traceback

from worker_io import emit

TOPIC = "t1"
PARTITIONS = 3
WORKER_LIMIT_S = 45.0
# Workers at once: all twelve together starve each other on a 2-core machine.
PARALLEL = 3
GOOD_DEADLINE_S = 30.0
# How long a refused client is watched for its authentication error.
BAD_DEADLINE_S = 20.0


# --------------------------------------------------------------------------- worker side


def kp_settings(cfg):
    s = {"bootstrap_servers": cfg["bootstrap"], "security_protocol": cfg["protocol"]}
    if cfg["protocol"] in ("SSL", "SASL_SSL"):
        s["ssl_cafile"] = cfg["ca"]
        s["ssl_check_hostname"] = True
    if cfg.get("client_cert"):
        s["ssl_certfile"] = cfg["client_cert"]
        s["ssl_keyfile"] = cfg["client_key"]
    if cfg.get("mechanism"):
        s["sasl_mechanism"] = cfg["mechanism"]
        s["sasl_plain_username"] = cfg["user"]
        s["sasl_plain_password"] = cfg["password"]
    return s


def ck_settings(cfg):
    s = {"bootstrap.servers": cfg["bootstrap"], "security.protocol": cfg["protocol"]}
    if cfg["protocol"] in ("SSL", "SASL_SSL"):
        s["ssl.ca.location"] = cfg["ca"]
    if cfg.get("client_cert"):
        s["ssl.certificate.location"] = cfg["client_cert"]
        s["ssl.key.location"] = cfg["client_key"]
    if cfg.get("mechanism"):
        s["sasl.mechanism"] = cfg["mechanism"]
        s["sasl.username"] = cfg["user"]
        s["sasl.password"] = cfg["password"]
    return s


class AuthErrors(logging.Handler):
    """Collects the authentication errors kafka-python logs."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.seen = []

    def emit(self, record):
        text = record.getMessage()
        # Not the warning every SASL_PLAINTEXT login logs ("Exchanging credentials in
        # the clear during Sasl Authentication"): only a refusal counts.
        if "AuthenticationFailed" in text or "Authentication failed" in text:
            self.seen.append(text)


def run_kp(cfg):
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    errors = AuthErrors()
    # The root logger: kafka-python reports a refused login from its transport module.
    logging.getLogger().addHandler(errors)
    logging.getLogger().setLevel(logging.INFO)
    deadline = time.time() + (GOOD_DEADLINE_S if cfg["expect"] == "ok" else BAD_DEADLINE_S)
    consumer = None
    try:
        consumer = KafkaConsumer(
            client_id=cfg["client_id"],
            group_id=cfg["group"],
            enable_auto_commit=False,
            session_timeout_ms=6000,
            heartbeat_interval_ms=500,
            request_timeout_ms=30500,
            retry_backoff_ms=100,
            reconnect_backoff_ms=100,
            reconnect_backoff_max_ms=500,
            # A refused client logs its authentication error at once, then keeps trying
            # until this bootstrap deadline before it raises.
            bootstrap_timeout_ms=30000 if cfg["expect"] == "ok" else 12000,
            **kp_settings(cfg),
        )
        consumer.subscribe([TOPIC])
        # real-clients.md gotcha 15: without the topic's metadata before the first join,
        # kafka-python's leader assigns nothing, rejoins when the metadata arrives, and
        # now and then stays "rebalancing" for good (its commit then fails with
        # RebalanceInProgressError on the client side, never sent).
        consumer.topics()
        while time.time() < deadline:
            consumer.poll(timeout_ms=100)
            if len(consumer.assignment()) == PARTITIONS:
                break
            if cfg["expect"] != "ok" and errors.seen:
                return {"auth_error": errors.seen[0]}
        assigned = sorted(tp.partition for tp in consumer.assignment())
        if cfg["expect"] != "ok":
            return {"assigned": assigned, "auth_error": errors.seen[0] if errors.seen else None}
        offsets = {TopicPartition(TOPIC, p): OffsetAndMetadata(10 + p, "", -1) for p in range(PARTITIONS)}
        consumer.commit(offsets)
        committed = [consumer.committed(TopicPartition(TOPIC, p)) for p in range(PARTITIONS)]
        return {"assigned": assigned, "committed": committed}
    except Exception as e:  # an authentication failure may surface as an exception
        return {"exception": "%s: %s" % (type(e).__name__, e), "auth_error": errors.seen[0] if errors.seen else None}
    finally:
        if consumer is not None:
            consumer.close()


def run_ck(cfg):
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    auth_errors = []

    def on_error(err):
        if err.code() == KafkaError._AUTHENTICATION or "Authentication" in err.str():
            auth_errors.append(err.str())
        if err.code() == KafkaError.GROUP_AUTHORIZATION_FAILED:
            # librdkafka's text for it can be empty ("FindCoordinator response error: ").
            auth_errors.append("%s: %s" % (err.name(), err.str()))

    deadline = time.time() + (GOOD_DEADLINE_S if cfg["expect"] == "ok" else BAD_DEADLINE_S)
    consumer = Consumer(
        {
            "client.id": cfg["client_id"],
            "group.id": cfg["group"],
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
            "reconnect.backoff.ms": 100,
            "reconnect.backoff.max.ms": 500,
            "error_cb": on_error,
            **ck_settings(cfg),
        }
    )
    try:
        consumer.subscribe([TOPIC])
        while time.time() < deadline:
            msg = consumer.poll(0.1)
            if msg is not None and msg.error():
                on_error(msg.error())
            if len(consumer.assignment()) == PARTITIONS:
                break
            if cfg["expect"] != "ok" and auth_errors:
                return {"auth_error": auth_errors[0]}
        assigned = sorted(tp.partition for tp in consumer.assignment())
        if cfg["expect"] != "ok":
            return {"assigned": assigned, "auth_error": auth_errors[0] if auth_errors else None}
        consumer.commit(offsets=[TopicPartition(TOPIC, p, 10 + p) for p in range(PARTITIONS)], asynchronous=False)
        got = consumer.committed([TopicPartition(TOPIC, p) for p in range(PARTITIONS)], timeout=10)
        return {"assigned": assigned, "committed": [tp.offset for tp in got]}
    finally:
        consumer.close()


def worker(cfg):
    try:
        result = (run_kp if cfg["client"] == "kp" else run_ck)(cfg)
    except Exception:
        result = {"exception": traceback.format_exc()}
    emit({"result": result})


# --------------------------------------------------------------------------- driver side


def scenarios(conf):
    servers = conf["servers"]
    common = {"ca": conf["ca"], "user": conf["user"], "password": conf["password"]}
    cert = {"client_cert": conf["client_cert"], "client_key": conf["client_key"]}
    good = [
        ("sasl_ssl-scram-sha-512", servers["sasl_ssl"], "SASL_SSL", "SCRAM-SHA-512", {}),
        ("sasl_ssl-plain", servers["sasl_ssl"], "SASL_SSL", "PLAIN", {}),
        ("ssl-client-certificate", servers["ssl"], "SSL", None, cert),
        ("sasl_plaintext-scram-sha-512", servers["sasl_plaintext"], "SASL_PLAINTEXT", "SCRAM-SHA-512", {}),
    ]
    bad = [
        ("sasl_ssl-wrong-password", servers["sasl_ssl"], "SASL_SSL", "SCRAM-SHA-512", {"password": "wrong"}),
        ("sasl_plaintext-unknown-user", servers["sasl_plaintext"], "SASL_PLAINTEXT", "PLAIN", {"user": "mallory"}),
    ]
    # Each client gets its own group, named `<group>-<client>`. The ACL file (written
    # by the Rust test) allows `allowed-kp` and `allowed-ck` literally and every group
    # starting `team-`, denies every group starting `team-secret`, and names no other.
    acl = servers["acl"]
    allowed = [
        ("acl-literal-allow", acl, "SASL_PLAINTEXT", "SCRAM-SHA-512", {"group": "allowed"}),
        ("acl-prefixed-allow", acl, "SASL_PLAINTEXT", "SCRAM-SHA-512", {"group": "team-blue"}),
    ]
    denied = [
        ("acl-deny-wins", acl, "SASL_PLAINTEXT", "SCRAM-SHA-512", {"group": "team-secret"}),
        ("acl-no-rule", acl, "SASL_PLAINTEXT", "SCRAM-SHA-512", {"group": "elsewhere"}),
    ]
    out = []
    for expect, table in (("ok", good), ("refused", bad), ("ok", allowed), ("denied", denied)):
        for name, bootstrap, protocol, mechanism, extra in table:
            for client in ("kp", "ck"):
                cfg = {**common, **extra, "bootstrap": bootstrap, "protocol": protocol, "mechanism": mechanism}
                cfg.update(client=client, expect=expect, client_id="%s-%s" % (client, name))
                if "group" in extra:
                    # One group per client: both clients in one group would share it.
                    cfg["group"] = "%s-%s" % (extra["group"], client)
                else:
                    cfg["group"] = "g-%s-%s" % (name, client)
                out.append(("%s/%s" % (name, client), cfg))
    return out


def judge(cfg, result):
    if cfg["expect"] == "ok":
        if result.get("assigned") != list(range(PARTITIONS)):
            return "not assigned all of %s: %r" % (TOPIC, result)
        if result.get("committed") != [10 + p for p in range(PARTITIONS)]:
            return "committed offsets read back wrong: %r" % (result,)
        return None
    if result.get("assigned"):
        return "a refused client was assigned %r" % (result["assigned"],)
    reported = " ".join(str(result.get(k) or "") for k in ("auth_error", "exception"))
    # Authentication errors for bad logins, group authorization errors for ACL denials.
    # Case-insensitive: librdkafka may report only the code (GROUP_AUTHORIZATION_FAILED).
    kind = "authentication" if cfg["expect"] == "refused" else "authorization"
    if kind not in reported.lower():
        return "no %s error reported: %r" % (kind, result)
    return None


def run_one(name, cfg, results, slots):
    with slots:
        run_worker(name, cfg, results)


def run_worker(name, cfg, results):
    proc = subprocess.Popen(
        [sys.executable, __file__, "worker", json.dumps(cfg)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=WORKER_LIMIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()  # this worker's own pid only
        out, err = proc.communicate()
        results[name] = "timed out after %.0f s; stderr tail: %s" % (WORKER_LIMIT_S, err[-2000:])
        return
    lines = [l for l in out.splitlines() if l.startswith("{")]
    if not lines:
        results[name] = "no result (exit %s); stderr tail: %s" % (proc.returncode, err[-2000:])
        return
    result = json.loads(lines[-1])["result"]
    verdict = judge(cfg, result)
    results[name] = verdict if verdict else "ok: %s" % json.dumps(result)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "worker":
        worker(json.loads(sys.argv[2]))
        return 0
    if len(sys.argv) != 4 or sys.argv[1] != "run" or sys.argv[2] != "--config":
        print("usage: security.py run --config FILE | security.py worker JSON", file=sys.stderr)
        return 2
    with open(sys.argv[3]) as f:
        conf = json.load(f)
    todo = scenarios(conf)
    results = {}
    slots = threading.BoundedSemaphore(PARALLEL)
    # The refused clients first: they mostly wait (kafka-python until its bootstrap
    # deadline), so the busy good logins overlap with them.
    order = sorted(todo, key=lambda item: item[1]["expect"] == "ok")
    threads = [threading.Thread(target=run_one, args=(name, cfg, results, slots)) for name, cfg in order]
    started = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    passed = 0
    for name, _ in todo:
        verdict = results.get(name, "no verdict")
        ok = verdict.startswith("ok")
        passed += ok
        print("%s %s: %s" % ("PASS" if ok else "FAIL", name, verdict))
    print("security: %d/%d scenarios passed in %.1f s" % (passed, len(todo), time.time() - started))
    return 0 if passed == len(todo) else 1


if __name__ == "__main__":
    sys.exit(main())

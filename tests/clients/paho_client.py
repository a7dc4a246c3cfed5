#!/usr/bin/python3
"""A small command line around paho-mqtt 1.6, driven by Saito's conformance tests.

    paho_client.py pub --host H --port P [--version 311|5] -t TOPIC -m MSG [-m MSG ...]
    paho_client.py sub --host H --port P [--version 311|5] -t FILTER [-t FILTER ...] --count N

stdout carries one JSON object per line, nothing else:
    {"event":"connected","session_present":false,"reason_code":0}
    {"event":"subscribed","granted":[1]}                 (once the SUBACK arrived)
    {"event":"message","topic":...,"payload_b64":...,"payload":text|null,"size":...,
     "sha256":...,"qos":...,"retain":...,"dup":...,"properties":{...}}
    {"event":"published","topic":...,"mid":...,"qos":...,"size":...,"sha256":...}
    {"event":"dropped"}                                   (--disconnect-without-close)
Errors go to stderr as "paho_client: error: ..." with a non-zero exit code:
1 connection or protocol failure, 2 bad arguments, 3 CONNACK refused, 4 SUBACK refused,
5 timed out. Runs with Debian's /usr/bin/python3 and its python3-paho-mqtt package.
"""

import argparse
import base64
import hashlib
import json
import os
import socket
import sys
import time

try:
    import paho.mqtt.client as mqtt
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties
    from paho.mqtt.subscribeoptions import SubscribeOptions
except ImportError as exc:  # pragma: no cover - depends on the machine
    sys.stderr.write(
        "paho_client: error: paho-mqtt is not importable by %s (%s). "
        "Install python3-paho-mqtt and run this with /usr/bin/python3.\n" % (sys.executable, exc))
    sys.exit(1)

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_CONNACK = 3
EXIT_SUBACK = 4
EXIT_TIMEOUT = 5


class ClientError(Exception):
    def __init__(self, message, code=EXIT_FAILURE):
        super().__init__(message)
        self.code = code


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n")
    sys.stdout.flush()


def describe_payload(payload):
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return {
        "payload_b64": base64.b64encode(payload).decode("ascii"),
        "payload": text,
        "size": len(payload),
        "sha256": hashlib.sha256(payload).hexdigest(),
    }


def describe_properties(props):
    """The v5 PUBLISH properties a test may look at, with stable snake_case names."""
    if props is None:
        return {}
    out = {}
    if hasattr(props, "UserProperty"):
        out["user_properties"] = [[k, v] for (k, v) in props.UserProperty]
    if hasattr(props, "ContentType"):
        out["content_type"] = props.ContentType
    if hasattr(props, "PayloadFormatIndicator"):
        out["payload_format_indicator"] = props.PayloadFormatIndicator
    if hasattr(props, "MessageExpiryInterval"):
        out["message_expiry_interval"] = props.MessageExpiryInterval
    if hasattr(props, "ResponseTopic"):
        out["response_topic"] = props.ResponseTopic
    if hasattr(props, "CorrelationData"):
        out["correlation_data_b64"] = base64.b64encode(props.CorrelationData).decode("ascii")
    if hasattr(props, "SubscriptionIdentifier"):
        ids = props.SubscriptionIdentifier
        out["subscription_identifiers"] = ids if isinstance(ids, list) else [ids]
    return out


def parse_args(argv):
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--host", default="127.0.0.1")
    common.add_argument("--port", type=int, default=None, help="default 1883, or 8883 with --tls")
    common.add_argument("--tls", action="store_true", help="connect over TLS")
    common.add_argument("--cafile", help="PEM file of the CA that signed the broker's certificate")
    common.add_argument("--version", choices=["311", "5"], default="311", help="MQTT protocol version")
    common.add_argument("-i", "--id", dest="client_id", default="", help="client identifier")
    common.add_argument("--no-clean", action="store_true",
                        help="clean session off (3.1.1) / clean start off (5.0)")
    common.add_argument("--session-expiry", type=int, default=None,
                        help="session expiry interval in seconds (5.0 only)")
    common.add_argument("-k", "--keepalive", type=int, default=60)
    common.add_argument("-q", "--qos", type=int, choices=[0, 1, 2], default=0)
    common.add_argument("--will-topic")
    common.add_argument("--will-payload", default="")
    common.add_argument("--will-qos", type=int, choices=[0, 1, 2], default=0)
    common.add_argument("--will-retain", action="store_true")
    common.add_argument("--disconnect-without-close", action="store_true",
                        help="at the end, drop the TCP connection without sending DISCONNECT (fires the will)")
    common.add_argument("--timeout", type=float, default=None,
                        help="seconds for the whole run (default 30); a sub without --count leaves cleanly when it ends")

    parser = argparse.ArgumentParser(prog="paho_client.py", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    pub = commands.add_parser("pub", parents=[common], help="connect, publish, disconnect")
    pub.add_argument("-t", "--topic", action="append", default=[],
                     help="topic; repeat to pair the n-th topic with the n-th message")
    pub.add_argument("-m", "--message", action="append", default=[], help="UTF-8 payload; repeatable")
    pub.add_argument("-n", "--null-message", action="store_true", help="publish one empty payload")
    pub.add_argument("-f", "--payload-file", help="publish the bytes of this file")
    pub.add_argument("--payload-size", type=int, help="publish N random bytes (see the sha256 it prints)")
    pub.add_argument("-r", "--retain", action="store_true")
    pub.add_argument("--user-property", action="append", default=[], metavar="KEY=VALUE",
                     help="v5 user property on each PUBLISH; repeatable")
    pub.add_argument("--content-type", help="v5 content type on each PUBLISH")

    sub = commands.add_parser("sub", parents=[common], help="subscribe and print messages")
    sub.add_argument("-t", "--topic", action="append", default=[],
                     help="topic filter; repeatable; may be left out to resume a persistent session")
    sub.add_argument("-C", "--count", type=int, default=None,
                     help="exit after N messages (0: exit once subscribed)")

    args = parser.parse_args(argv)
    if args.port is None:
        args.port = 8883 if args.tls else 1883
    if args.cafile and not args.tls:
        parser.error("--cafile needs --tls")
    if args.session_expiry is not None and args.version != "5":
        parser.error("--session-expiry is an MQTT 5.0 property (use --version 5)")
    if args.timeout is None:
        args.timeout = 30.0
    if args.command == "pub":
        sources = sum(1 for s in (args.message, args.null_message, args.payload_file,
                                  args.payload_size is not None) if s)
        if sources > 1:
            parser.error("give only one of -m, -n, --payload-file, --payload-size")
        if (args.user_property or args.content_type) and args.version != "5":
            parser.error("--user-property and --content-type need --version 5")
    else:
        if not args.topic and not args.no_clean:
            parser.error("sub needs -t, unless it resumes a session with --no-clean")
    return args


def outgoing_messages(args):
    """(topic, payload) pairs in publishing order."""
    if args.message:
        payloads = [m.encode("utf-8") for m in args.message]
    elif args.null_message:
        payloads = [b""]
    elif args.payload_file:
        with open(args.payload_file, "rb") as f:
            payloads = [f.read()]
    elif args.payload_size is not None:
        payloads = [os.urandom(args.payload_size)]
    else:
        payloads = []
    topics = args.topic
    if not payloads:
        return []
    if not topics:
        raise ClientError("pub needs -t", EXIT_USAGE)
    if len(topics) == 1:
        return [(topics[0], p) for p in payloads]
    if len(payloads) == 1:
        return [(t, payloads[0]) for t in topics]
    if len(topics) == len(payloads):
        return list(zip(topics, payloads))
    raise ClientError("give one topic, one message, or as many topics as messages", EXIT_USAGE)


class Session:
    """One connection, driven by client.loop() on this thread (no background thread, no auto-reconnect)."""

    def __init__(self, args):
        self.args = args
        self.v5 = args.version == "5"
        self.connected = False
        self.connack_error = None
        self.subscribed = False
        self.suback_error = None
        self.disconnected = False
        self.received = 0
        self.deadline = None if args.timeout is None else time.monotonic() + args.timeout

        if self.v5:
            self.client = mqtt.Client(client_id=args.client_id, protocol=mqtt.MQTTv5)
        else:
            self.client = mqtt.Client(client_id=args.client_id, clean_session=not args.no_clean,
                                      protocol=mqtt.MQTTv311)
        self.client.enable_logger(None)
        self.client.on_connect = self.on_connect
        self.client.on_subscribe = self.on_subscribe
        self.client.on_message = self.on_message
        self.client.on_disconnect = self.on_disconnect
        if args.tls:
            self.client.tls_set(ca_certs=args.cafile)
        if args.will_topic:
            self.client.will_set(args.will_topic, args.will_payload.encode("utf-8"),
                                 qos=args.will_qos, retain=args.will_retain)

    # --- callbacks (the v5 ones get reason codes and properties) ---
    def on_connect(self, client, userdata, flags, rc, properties=None):
        code = rc.value if hasattr(rc, "value") else rc
        if code != 0:
            reason = str(rc) if self.v5 else mqtt.connack_string(rc)
            self.connack_error = "CONNACK refused the connection: %s (%d)" % (reason, code)
            return
        self.connected = True
        emit({"event": "connected", "session_present": bool(flags.get("session present")), "reason_code": code})

    def on_subscribe(self, client, userdata, mid, granted, properties=None):
        codes = [g.value if hasattr(g, "value") else g for g in granted]
        failed = [c for c in codes if c >= 0x80]
        if failed:
            self.suback_error = "SUBACK refused a subscription: reason codes %s" % codes
            return
        self.subscribed = True
        emit({"event": "subscribed", "granted": codes})

    def on_message(self, client, userdata, msg):
        self.received += 1
        record = {"event": "message", "topic": msg.topic}
        record.update(describe_payload(msg.payload))
        record.update({"qos": msg.qos, "retain": bool(msg.retain), "dup": bool(msg.dup)})
        record["properties"] = describe_properties(getattr(msg, "properties", None)) if self.v5 else {}
        emit(record)

    def on_disconnect(self, client, userdata, rc, properties=None):
        self.disconnected = True

    # --- driving the connection ---
    def connect(self):
        args = self.args
        kwargs = {}
        if self.v5:
            kwargs["clean_start"] = not args.no_clean
            if args.session_expiry is not None:
                props = Properties(PacketTypes.CONNECT)
                props.SessionExpiryInterval = args.session_expiry
                kwargs["properties"] = props
        try:
            self.client.connect(args.host, args.port, keepalive=args.keepalive, **kwargs)
        except (OSError, ValueError) as exc:
            raise ClientError("cannot connect to %s:%d: %s" % (args.host, args.port, exc)) from exc
        self.loop_until(lambda: self.connected or self.connack_error, "the CONNACK")
        if self.connack_error:
            raise ClientError(self.connack_error, EXIT_CONNACK)

    def loop_until(self, condition, what, deadline=None, soft=False):
        """Runs the network loop until condition() holds; past the deadline it raises (or, if soft, returns)."""
        deadline = deadline if deadline is not None else self.deadline
        while not condition():
            if deadline is not None and time.monotonic() > deadline:
                if soft:
                    return
                raise ClientError("timed out after %.1f s waiting for %s" % (self.args.timeout or 0, what), EXIT_TIMEOUT)
            rc = self.client.loop(timeout=0.05)
            if rc != mqtt.MQTT_ERR_SUCCESS and not condition():
                if self.connack_error or self.suback_error:
                    return
                raise ClientError("connection lost while waiting for %s: %s" % (what, mqtt.error_string(rc)))

    def finish(self):
        """Ends the connection: a clean DISCONNECT, or a dropped socket that makes the broker send the will."""
        if self.args.disconnect_without_close:
            # Everything queued (PUBACKs, PUBLISHes) has been written by loop(); now cut the wire.
            self.loop_until(lambda: not self.client._out_packet, "outgoing packets to be written",
                            deadline=time.monotonic() + 5, soft=True)
            sock = self.client.socket()
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
            emit({"event": "dropped"})
            sys.stdout.flush()
            os._exit(0)  # no atexit, no DISCONNECT
        self.client.disconnect()
        self.loop_until(lambda: self.disconnected, "the DISCONNECT to be sent", deadline=time.monotonic() + 5, soft=True)


def run_pub(args):
    messages = outgoing_messages(args)
    session = Session(args)
    session.connect()
    props = None
    if session.v5 and (args.user_property or args.content_type):
        props = Properties(PacketTypes.PUBLISH)
        if args.content_type:
            props.ContentType = args.content_type
        if args.user_property:
            pairs = []
            for item in args.user_property:
                key, sep, value = item.partition("=")
                if not sep:
                    raise ClientError("--user-property wants KEY=VALUE, got %r" % item, EXIT_USAGE)
                pairs.append((key, value))
            props.UserProperty = pairs
    for topic, payload in messages:
        info = session.client.publish(topic, payload, qos=args.qos, retain=args.retain, properties=props)
        if info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_AGAIN):
            raise ClientError("publish to %r failed: %s" % (topic, mqtt.error_string(info.rc)))
        # Completed means written (QoS 0), PUBACK (QoS 1) or PUBCOMP (QoS 2) received.
        session.loop_until(info.is_published, "the broker to acknowledge the publish to %r" % topic)
        record = {"event": "published", "topic": topic, "mid": info.mid, "qos": args.qos}
        record.update({k: v for k, v in describe_payload(payload).items() if k in ("size", "sha256")})
        emit(record)
    session.finish()


def run_sub(args):
    session = Session(args)
    session.connect()
    if args.topic:
        if session.v5:
            topics = [(t, SubscribeOptions(qos=args.qos)) for t in args.topic]
        else:
            topics = [(t, args.qos) for t in args.topic]
        rc, _ = session.client.subscribe(topics)
        if rc != mqtt.MQTT_ERR_SUCCESS:
            raise ClientError("subscribe failed: %s" % mqtt.error_string(rc))
        session.loop_until(lambda: session.subscribed or session.suback_error, "the SUBACK")
        if session.suback_error:
            raise ClientError(session.suback_error, EXIT_SUBACK)

    if args.count is None:
        # Collect until the timeout, then leave cleanly: the caller decides what was enough.
        try:
            session.loop_until(lambda: False, "messages")
        except ClientError as exc:
            if exc.code != EXIT_TIMEOUT:
                raise
    elif args.count > 0:
        try:
            session.loop_until(lambda: session.received >= args.count, "%d message(s)" % args.count)
        except ClientError as exc:
            if exc.code == EXIT_TIMEOUT:
                raise ClientError("timed out after %.1f s with %d of %d message(s)"
                                  % (args.timeout, session.received, args.count), EXIT_TIMEOUT) from exc
            raise
    # Let the acknowledgements of what we received (PUBACK, PUBREC/PUBCOMP) go out before leaving.
    session.loop_until(lambda: not session.client._in_messages and not session.client._out_packet,
                       "acknowledgements to be sent", deadline=time.monotonic() + 2, soft=True)
    session.finish()


def main(argv):
    args = parse_args(argv)
    try:
        if args.command == "pub":
            run_pub(args)
        else:
            run_sub(args)
    except ClientError as exc:
        sys.stdout.flush()
        sys.stderr.write("paho_client: error: %s\n" % exc)
        return exc.code
    except (ValueError, OSError) as exc:
        # paho validates topics and filters itself (ValueError); sockets fail with OSError.
        sys.stdout.flush()
        sys.stderr.write("paho_client: error: %s: %s\n" % (type(exc).__name__, exc))
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

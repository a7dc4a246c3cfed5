#!/usr/bin/env python3
"""Time for external mode to resume after the broker restarts (MQTTnet's client; the comparison with Saito's own
client, since deleted, is in docs/mqtt.md).

Mosquitto (persistence on) on a free loopback port; Saito.Server in external mode with its default shared
subscription, storing into SQLite. A publisher sends one biosensor reading every 50 ms (mosquitto_pub, QoS 1, each
reading a unique timestamp). Mosquitto is stopped (SIGTERM) and started again at once. Mosquitto 2.0 restores
Saito's session without its shared subscription, so what is published before Saito has subscribed again is dropped by
the broker: the first reading published after the restart and stored says when Saito resumed (and its received_at
when the first message reached Saito), the missing ones what was lost.

  python3 benchmarks/external-client/reconnect.py --runs 3
"""
import argparse, json, os, sqlite3, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drain import clean_up, free_port, start_saito, wait_for  # noqa: E402


def stored(db):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
        return dict(c.execute("select ts, received_at from reading_biosensor"))


def run(client, version):
    work = tempfile.mkdtemp(prefix="saito-reconnect-")
    os.chmod(work, 0o777)
    port = free_port()
    conf = os.path.join(work, "mosquitto.conf")
    with open(conf, "w") as f:
        f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\n"
                f"persistence true\npersistence_location {work}/\n")
    mosquitto = subprocess.Popen(["/usr/sbin/mosquitto", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    saito = None
    try:
        time.sleep(0.5)
        log_path = os.path.join(work, "saito.log")
        log = open(log_path, "w")
        saito = start_saito(work, port, client, version, log, shared_group="saito")
        wait_for(log_path, "Subscribed to")
        base = int(time.time() * 1000) - 3600 * 1000
        sent = []  # (i, wall time sent)
        restart_at = None
        i = 0
        started = time.time()
        while time.time() - started < 12:
            if restart_at is None and time.time() - started >= 2:
                mosquitto.terminate()
                mosquitto.wait(10)
                mosquitto = subprocess.Popen(["/usr/sbin/mosquitto", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                restart_at = time.time()
                time.sleep(0.2)  # listening again
            payload = json.dumps({"ts": base + i, "hr": 70})
            rc = subprocess.run(["/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-q", "1",
                                 "-t", "saito/hub-1/wrist-r/biosensor", "-m", payload], capture_output=True).returncode
            if rc == 0:
                sent.append((i, time.time()))
            i += 1
            time.sleep(0.05)
        time.sleep(3)
        db = next(os.path.join(r, f) for r, _, fs in os.walk(os.path.join(work, "hot")) for f in fs if f.endswith(".db"))
        rows = stored(db)
        have = sorted(rows)
        # Readings 0 and 1 went out before the restart: their stored ts give the origin and the unit of a millisecond.
        unit = have[1] - have[0]
        stored_ids = {(t - have[0]) // unit for t in have}
        after = [(k, t) for k, t in sent if t >= restart_at]
        lost = {k for k, _ in sent if k not in stored_ids}
        first_stored_after = next((t for k, t in after if k in stored_ids), None)
        # received_at is stored like ts: back to wall-clock seconds through the same origin and unit.
        received = [base / 1000 + (r - have[0]) / unit / 1000 for r in rows.values()]
        first_received_after = min((r for r in received if r >= restart_at), default=None)
        return {"client": client, "mqtt": version, "sent": len(sent), "stored": len(stored_ids), "lost": len(lost),
                "lost_before_restart": sum(1 for k, t in sent if k in lost and t < restart_at),
                "first_published_and_stored_s": round(first_stored_after - restart_at, 2) if first_stored_after else None,
                "first_received_s": round(first_received_after - restart_at, 2) if first_received_after else None,
                "reconnect_log": [l.strip()[:120] for l in open(log_path) if "econnect" in l][-2:]}
    finally:
        clean_up(saito, mosquitto, work)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--mqtt", default="5.0")
    a = ap.parse_args()
    for _ in range(a.runs):
        print(json.dumps(run("mqttnet", a.mqtt)), flush=True)


if __name__ == "__main__":
    sys.exit(main())

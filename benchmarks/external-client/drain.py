#!/usr/bin/env python3
"""Durable-ack throughput of external mode (MQTTnet's client; the comparison with Saito's own client, since
deleted, is in docs/mqtt.md).

A Mosquitto on a free loopback port holds a backlog for Saito's persistent session (Saito subscribes once and
stops; the backlog is then published with mosquitto_pub); Saito.Server starts again with the same client id and
drains it into a fresh SQLite database, acknowledging each message only once committed. The rate is committed
readings per second between 10 % and 90 % of the backlog (polled from the database every 0.2 s), so start-up is
left out, and from the first reading committed to the last (start-up left out, head and tail in).

  python3 benchmarks/external-client/drain.py --runs 4 --messages 10000 --readings 100
"""
import argparse, json, os, shutil, socket, sqlite3, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DLL = os.path.join(ROOT, "src/Saito.Server/bin/Release/net10.0/Saito.Server.dll")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_saito(work, port, client, version, log, shared_group=""):
    args = ["dotnet", DLL, f"--urls=http://127.0.0.1:{free_port()}", "--Mqtt:Mode=external",
            "--Mqtt:External:Host=127.0.0.1", f"--Mqtt:External:Port={port}", "--Mqtt:External:ClientId=saito-drain",
            f"--Mqtt:External:ProtocolVersion={version}", f"--Mqtt:External:SharedGroup={shared_group}",
            f"--Storage:HotPath={work}/hot", f"--Storage:ArchivePath={work}/archive",
            "--Logging:LogLevel:Default=Information", "--Logging:LogLevel:Microsoft=Warning"]
    return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=os.path.dirname(DLL))


def wait_for(path, text, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(path, errors="replace") as f:
            if text in f.read():
                return
        time.sleep(0.1)
    raise SystemExit(f"'{text}' not in {path} after {timeout} s")


def count(db):
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
            return c.execute("select count(*) from reading_biosensor").fetchone()[0]
    except sqlite3.Error:
        return 0


def run(client, version, messages, readings, devices):
    work = tempfile.mkdtemp(prefix="saito-drain-")
    port = free_port()
    conf = os.path.join(work, "mosquitto.conf")
    with open(conf, "w") as f:
        f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\npersistence false\n")
    mosquitto = subprocess.Popen(["/usr/sbin/mosquitto", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    saito = None
    try:
        time.sleep(0.5)
        log_path = os.path.join(work, "saito-1.log")
        with open(log_path, "w") as log:
            saito = start_saito(work, port, client, version, log)
            wait_for(log_path, "Subscribed to")
            saito.terminate()
            saito.wait(30)

        # The backlog: one mosquitto_pub per device, each message an array of `readings` biosensor readings.
        base = int(time.time() * 1000) - 12 * 3600 * 1000
        pubs = []
        per_device = messages // devices
        for d in range(devices):
            lines = []
            for m in range(per_device):
                ts0 = base + m * readings
                lines.append(json.dumps([{"ts": ts0 + k, "hr": 60 + (k % 40)} for k in range(readings)], separators=(",", ":")))
            path = os.path.join(work, f"d{d}.txt")
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            pubs.append(subprocess.Popen(["/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-q", "1",
                                          "-t", f"saito/hub-{d // 20}/wrist-{d:03d}/biosensor", "-l"], stdin=open(path)))
        for p in pubs:
            if p.wait(600) != 0:
                raise SystemExit("mosquitto_pub failed")
        total = per_device * devices * readings

        db = None
        log_path = os.path.join(work, "saito-2.log")
        with open(log_path, "w") as log:
            started = time.time()
            saito = start_saito(work, port, client, version, log)
            t0 = t10 = t90 = None
            n = 0
            while n < total and time.time() - started < 600:
                time.sleep(0.2)
                if db is None:
                    found = [os.path.join(r, f) for r, _, fs in os.walk(os.path.join(work, "hot")) for f in fs if f.endswith(".db")]
                    db = found[0] if found else None
                    continue
                n = count(db)
                now = time.time()
                if os.environ.get("DRAIN_TRACE"):
                    print(f"  {client} t={now - started:5.1f} s stored={n}", file=sys.stderr, flush=True)
                if t0 is None and n > 0:
                    t0 = now
                if t10 is None and n >= total * 0.1:
                    t10 = (now, n)
                if t90 is None and n >= total * 0.9:
                    t90 = (now, n)
            done = time.time()
            saito.terminate()
            saito.wait(30)
        stored = count(db)
        rate = (t90[1] - t10[1]) / (t90[0] - t10[0]) if t10 and t90 and t90[0] > t10[0] else float("nan")
        return {"client": client, "mqtt": version, "readings": total, "stored": stored, "readings_per_s_10_90": round(rate),
                "readings_per_s_first_to_all": round(total / (done - t0)) if t0 and done > t0 else None,
                "seconds_to_all": round(done - started, 1)}
    finally:
        clean_up(saito, mosquitto, work)


def clean_up(saito, mosquitto, work):
    if saito and saito.poll() is None:
        saito.terminate()
        try:
            saito.wait(30)
        except subprocess.TimeoutExpired:
            saito.kill()
    mosquitto.terminate()
    mosquitto.wait(10)
    shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--mqtt", default="5.0")
    ap.add_argument("--messages", type=int, default=10000)
    ap.add_argument("--readings", type=int, default=100)
    ap.add_argument("--devices", type=int, default=32)
    a = ap.parse_args()
    for _ in range(a.runs):
        print(json.dumps(run("mqttnet", a.mqtt, a.messages, a.readings, a.devices)), flush=True)


if __name__ == "__main__":
    sys.exit(main())

import sqlite3, time, sys, os
path = sys.argv[1]; devices=int(sys.argv[2]); per=int(sys.argv[3]); sync=sys.argv[4]; pagesize=int(sys.argv[5]) if len(sys.argv)>5 else 4096
for f in (path, path+'-wal', path+'-shm'):
    try: os.remove(f)
    except FileNotFoundError: pass
c = sqlite3.connect(path, isolation_level=None)
c.execute(f"PRAGMA page_size={pagesize}")
c.execute("PRAGMA journal_mode=WAL"); c.execute(f"PRAGMA synchronous={sync}"); c.execute("PRAGMA wal_autocheckpoint=20000"); c.execute("PRAGMA cache_size=-65536")
c.execute("""CREATE TABLE reading_biosensor (device_id INTEGER NOT NULL, channel INTEGER NOT NULL, ts INTEGER NOT NULL,
 heart_rate REAL, systolic REAL, diastolic REAL, skin_temp REAL, received_at INTEGER NOT NULL, PRIMARY KEY (device_id, channel, ts)) WITHOUT ROWID, STRICT""")
NB=int(os.environ.get("B","300"))-50
ts = 1_700_000_000_000_000
tins=tcom=0; n=0
t0=time.perf_counter()
for b in range(int(os.environ.get("B","300"))):
    rows=[]
    for i in range(per):
        ts += 1000
        for d in range(devices):
            rows.append((d+1,0,ts,70.0,120.0,80.0,36.6,ts))
    a=time.perf_counter()
    c.execute("BEGIN IMMEDIATE")
    c.executemany("INSERT OR IGNORE INTO reading_biosensor VALUES (?,?,?,?,?,?,?,?)", sorted(rows))
    m=time.perf_counter()
    c.execute("COMMIT")
    e=time.perf_counter()
    if b>=50: tins+=m-a; tcom+=e-m; n+=len(rows)
print(f"devices={devices} batch={devices*per} sync={sync} page={pagesize}: insert {tins/n*1e6:.2f} us/row, commit {tcom/n*1e6:.2f} us/row, total {(tins+tcom)/n*1e6:.2f} us/row => {n/(tins+tcom):,.0f} rows/s; per commit {tcom/NB*1e3:.1f} ms")

import sqlite3, os, random, sys
pages = int(sys.argv[1])
db = sqlite3.connect('w.db', isolation_level=None)
db.execute('PRAGMA journal_mode=WAL'); db.execute('PRAGMA wal_autocheckpoint=0'); db.execute('PRAGMA synchronous=NORMAL')
db.execute('CREATE TABLE IF NOT EXISTS r (d INTEGER, c INTEGER, ts INTEGER, v REAL, PRIMARY KEY (d, c, ts)) WITHOUT ROWID')
ts = 0
while os.path.getsize('w.db-wal') < pages * 4120 if os.path.exists('w.db-wal') else True:
    db.execute('BEGIN')
    db.executemany('INSERT INTO r VALUES (?,?,?,?)', [(d, 0, ts + i, random.random()) for d in range(320) for i in range(10)])
    db.execute('COMMIT'); ts += 10
print('wal bytes', os.path.getsize('w.db-wal'), 'db bytes', os.path.getsize('w.db'))
os._exit(0)  # no checkpoint on close, as after kill -9

"""python-mysql-replication (is_mariadb=True) against onelogd: rebuild a table from the
binlog stream alone and compare it with the server's own SELECT.

Usage: cdc.py PORT USER PASSWORD DB TABLE MINIMAL_TABLE

1. From the start of the binlog (file dump, non-blocking): every committed row change of
   DB.TABLE applied strictly (an insert of an existing key, or an update/delete whose
   before image differs from the rebuilt row, fails). The rebuilt rows must equal
   `SELECT * FROM DB.TABLE` value for value (types included), and the TABLE_MAP events
   must carry the column names, the primary key and the signedness (binlog_row_metadata
   FULL). DB.MINIMAL_TABLE was written once with FULL, then with MINIMAL metadata: the
   MINIMAL TABLE_MAP has signedness but neither names nor primary key.
2. From a GTID position in the middle (@slave_connect_state): starting from the rows as
   they were after that transaction, the rest of the stream gives the same table again.
3. Live (blocking, from the last GTID): writes made after the dump started arrive and
   give the new table.
Prints "OK cdc ..." on success; raises otherwise.
"""

import decimal
import sys
import time

import pymysql
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import MariadbGtidEvent, XidEvent, QueryEvent
from pymysqlreplication.row_event import (
    DeleteRowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)

port, user, password, db, table, minimal_table = sys.argv[1:7]
port = int(port)
settings = {"host": "127.0.0.1", "port": port, "user": user, "passwd": password}
EVENTS = [
    MariadbGtidEvent,
    XidEvent,
    QueryEvent,
    TableMapEvent,
    WriteRowsEvent,
    UpdateRowsEvent,
    DeleteRowsEvent,
]


def fail(msg):
    raise SystemExit("FAIL: " + msg)


def select_rows():
    c = pymysql.connect(host="127.0.0.1", port=port, user=user, password=password)
    try:
        cur = c.cursor()
        cur.execute(f"SELECT * FROM `{db}`.`{table}` ORDER BY 1")
        names = [d[0] for d in cur.description]
        rows = {r[0]: dict(zip(names, r)) for r in cur.fetchall()}
        return names, rows
    finally:
        c.close()


def canon(v):
    # Decimal('1.50') and Decimal('1.5') compare equal; the scale must match too.
    if isinstance(v, decimal.Decimal):
        return ("decimal", str(v))
    return (type(v).__name__, v)


def same_row(a, b):
    return a.keys() == b.keys() and all(canon(a[k]) == canon(b[k]) for k in a)


class Rebuild:
    """Applies the stream's committed row changes of DB.TABLE to a dict keyed by id."""

    def __init__(self, rows=None):
        self.rows = dict(rows or {})
        self.pending = []
        self.gtid = None
        self.commits = []  # (gtid, rows after it) per transaction that touched the table
        self.maps = []
        self.other_maps = []

    def feed(self, ev):
        if isinstance(ev, MariadbGtidEvent):
            if self.pending:
                fail(f"group {self.gtid} did not end before {ev.gtid}")
            self.gtid = ev.gtid
        elif isinstance(ev, TableMapEvent):
            if ev.schema == db and ev.table == table:
                self.maps.append(ev)
            elif ev.schema == db and ev.table == minimal_table:
                self.other_maps.append(ev)
        elif isinstance(ev, (WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent)):
            if ev.schema == db and ev.table == table:
                self.pending.append(ev)
        elif isinstance(ev, XidEvent):
            for rev in self.pending:
                self.apply(rev)
            if self.pending:
                self.commits.append((self.gtid, dict(self.rows)))
            self.pending = []

    def apply(self, ev):
        for r in ev.rows:
            if isinstance(ev, WriteRowsEvent):
                v = r["values"]
                if v["id"] in self.rows:
                    fail(f"{self.gtid}: insert of existing id {v['id']}")
                self.rows[v["id"]] = v
            else:
                before = r["values"] if isinstance(ev, DeleteRowsEvent) else r["before_values"]
                have = self.rows.get(before["id"])
                if have is None or not same_row(have, before):
                    fail(f"{self.gtid}: before image {before} does not match {have}")
                del self.rows[before["id"]]
                if isinstance(ev, UpdateRowsEvent):
                    after = r["after_values"]
                    if after["id"] in self.rows:
                        fail(f"{self.gtid}: update onto existing id {after['id']}")
                    self.rows[after["id"]] = after


def compare(what, rebuilt, names):
    _, want = select_rows()
    if rebuilt.keys() != want.keys():
        fail(f"{what}: ids {sorted(rebuilt)} != {sorted(want)}")
    for k in want:
        if list(rebuilt[k].keys()) != names:
            fail(f"{what}: columns {list(rebuilt[k].keys())} != {names}")
        if not same_row(rebuilt[k], want[k]):
            fail(f"{what}: row {k}: {rebuilt[k]} != {want[k]}")


def read_all(**kw):
    stream = BinLogStreamReader(
        connection_settings=settings,
        server_id=901,
        is_mariadb=True,
        blocking=False,
        only_events=EVENTS,
        **kw,
    )
    events = list(stream)
    stream.close()
    return events


names, want = select_rows()

# 1. From the start.
full = Rebuild()
for ev in read_all():
    full.feed(ev)
if full.pending:
    fail("stream ended inside a group")
compare("from the start", full.rows, names)
if len(full.commits) < 4:
    fail(f"only {len(full.commits)} transactions touched the table")
for m in full.maps:
    md = m.optional_metadata
    if md.column_name_list != names:
        fail(f"TABLE_MAP column names {md.column_name_list} != {names}")
    if md.simple_primary_key_list != [0]:
        fail(f"TABLE_MAP primary key {md.simple_primary_key_list}")
    if not any(md.unsigned_column_list):
        fail("TABLE_MAP signedness: no unsigned column")

metas = [
    (m.optional_metadata.column_name_list, m.optional_metadata.simple_primary_key_list,
     m.optional_metadata.unsigned_column_list)
    for m in full.other_maps
]
if metas != [(["id", "v"], [0], [True, False]), ([], [], [True, False])]:
    fail(f"TABLE_MAP metadata of {minimal_table} (FULL, then MINIMAL): {metas}")

# 2. From a GTID in the middle: the rows after it, then the rest of the stream.
mid_gtid, mid_rows = full.commits[len(full.commits) // 2]
resumed = Rebuild(mid_rows)
seen = []
for ev in read_all(auto_position=mid_gtid):
    if isinstance(ev, MariadbGtidEvent):
        seen.append(ev.gtid)
    resumed.feed(ev)
if mid_gtid in seen:
    fail(f"resuming after {mid_gtid} sent it again")
compare(f"from GTID {mid_gtid}", resumed.rows, names)
last_gtid = full.gtid

# 3. Live: a blocking dump from the last GTID sees new commits.
stream = BinLogStreamReader(
    connection_settings=settings,
    server_id=902,
    is_mariadb=True,
    blocking=True,
    slave_heartbeat=1,
    auto_position=last_gtid,
    only_events=EVENTS,
)
live = Rebuild(full.rows)
c = pymysql.connect(host="127.0.0.1", port=port, user=user, password=password, database=db)
cur = c.cursor()
new_id = max(full.rows) + 1000
cur.execute(f"INSERT INTO `{table}` (id, name) VALUES ({new_id}, 'live ✓')")
c.commit()
cur.execute(f"UPDATE `{table}` SET name = 'live 2' WHERE id = {new_id}")
cur.execute(f"DELETE FROM `{table}` WHERE id = {min(full.rows)}")
c.commit()
c.close()
deadline = time.time() + 30
for ev in stream:
    live.feed(ev)
    if len(live.commits) >= 2 or time.time() > deadline:
        break
stream.close()
if len(live.commits) < 2:
    fail(f"live stream delivered {len(live.commits)} of 2 transactions")
compare("live", live.rows, names)

print(
    f"OK cdc rows={len(want)} transactions={len(full.commits)} "
    f"resumed_from={mid_gtid} live_from={last_gtid}"
)

"""SQLAlchemy 2 ORM against a MariaDB-compatible server, with default dialect options.

Usage: orm.py DRIVER ACCOUNT@HOST:PORT DBNAME
DRIVER is mysqldb or pymysql. Exits non-zero (with a traceback) on any mismatch;
prints "OK orm DRIVER" at the end.
"""
import datetime
import decimal
import enum
import sys

from sqlalchemy import (
    JSON, Boolean, DateTime, Enum, ForeignKey, Index, Integer, Numeric, String, Text,
    UniqueConstraint, create_engine, delete, exc, func, insert, inspect, select, text,
    update,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

driver, where, dbname = sys.argv[1], sys.argv[2], sys.argv[3]
server = create_engine("mysql+%s://%s/" % (driver, where))
with server.begin() as c:
    c.execute(text("DROP DATABASE IF EXISTS %s" % dbname))
    c.execute(text("CREATE DATABASE %s CHARACTER SET utf8mb4" % dbname))
engine = create_engine("mysql+%s://%s/%s?charset=utf8mb4" % (driver, where, dbname))


class Base(DeclarativeBase):
    pass


class Status(enum.Enum):
    active = "active"
    suspended = "suspended"
    closed = "closed"


class Customer(Base):
    __tablename__ = "customer"
    __table_args__ = (UniqueConstraint("email", name="uq_customer_email"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(100), nullable=False)
    email: Mapped[str] = mapped_column(String(200), nullable=False)
    notes: Mapped[str | None] = mapped_column(Text)
    balance: Mapped[decimal.Decimal] = mapped_column(Numeric(12, 2), default=0)
    vip: Mapped[bool] = mapped_column(Boolean, default=False)
    status: Mapped[Status] = mapped_column(Enum(Status), default=Status.active)
    prefs: Mapped[dict | None] = mapped_column(JSON)
    created: Mapped[datetime.datetime] = mapped_column(DateTime, server_default=func.now())
    orders: Mapped[list["Order"]] = relationship(
        back_populates="customer", cascade="all, delete-orphan", order_by="Order.id"
    )


class Order(Base):
    __tablename__ = "orders"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    customer_id: Mapped[int] = mapped_column(ForeignKey("customer.id"), nullable=False)
    item: Mapped[str] = mapped_column(String(50))
    qty: Mapped[int] = mapped_column(Integer)
    price: Mapped[decimal.Decimal] = mapped_column(Numeric(10, 2))
    customer: Mapped[Customer] = relationship(back_populates="orders")
    __table_args__ = (Index("ix_orders_item_qty", "item", "qty"),)


Base.metadata.create_all(engine)

# --- add, flush, commit; server defaults, autoincrement keys ---------------------------
with Session(engine) as s:
    alice = Customer(name="Alice", email="alice@example.com", notes="first \u00e9 \U0001F600",
                     balance=decimal.Decimal("10.50"), vip=True, prefs={"lang": "fr", "n": [1, 2]})
    bob = Customer(name="Bob", email="bob@example.com", status=Status.suspended)
    alice.orders = [Order(item="pen", qty=3, price=decimal.Decimal("1.25")),
                    Order(item="ink", qty=1, price=decimal.Decimal("7.00"))]
    bob.orders = [Order(item="pad", qty=2, price=decimal.Decimal("3.10"))]
    s.add_all([alice, bob])
    s.flush()
    assert alice.id is not None and bob.id == alice.id + 1, (alice.id, bob.id)
    assert all(o.id is not None for o in alice.orders + bob.orders)
    s.commit()
    aid, bid = alice.id, bob.id

with Session(engine) as s:
    a = s.get(Customer, aid)
    assert a.name == "Alice" and a.notes == "first \u00e9 \U0001F600", a.notes
    assert a.balance == decimal.Decimal("10.50") and a.vip is True, (a.balance, a.vip)
    assert a.status is Status.active and a.prefs == {"lang": "fr", "n": [1, 2]}, a.prefs
    assert isinstance(a.created, datetime.datetime), a.created
    assert abs((datetime.datetime.now() - a.created).total_seconds()) < 3600, a.created
    assert [o.item for o in a.orders] == ["pen", "ink"]
    b = s.get(Customer, bid)
    assert b.vip is False and b.status is Status.suspended and b.prefs is None
    assert b.balance == 0

# --- bulk insert (executemany) --------------------------------------------------------
with Session(engine) as s:
    rows = [{"name": "C%03d" % i, "email": "c%03d@example.com" % i,
             "balance": decimal.Decimal(i) / 4, "vip": i % 3 == 0,
             "status": Status.closed if i % 5 == 0 else Status.active} for i in range(50)]
    s.execute(insert(Customer), rows)
    ids = s.scalars(select(Customer.id).where(Customer.name.like("C%"))).all()
    s.execute(insert(Order), [{"customer_id": cid, "item": "bulk%d" % (k % 4), "qty": k,
                               "price": decimal.Decimal("0.99")} for k, cid in enumerate(ids)])
    s.commit()

# --- queries: joins, filters, order_by, limit/offset, aggregates ----------------------
with Session(engine) as s:
    n = s.scalar(select(func.count()).select_from(Customer))
    assert n == 52, n
    page = s.scalars(select(Customer.name).where(Customer.name.like("C%"))
                     .order_by(Customer.name.desc()).limit(5).offset(10)).all()
    assert page == ["C039", "C038", "C037", "C036", "C035"], page
    joined = s.execute(
        select(Customer.name, Order.item, Order.qty * Order.price)
        .join(Order, Customer.orders).where(Customer.vip.is_(True))
        .where(Customer.name == "Alice").order_by(Order.id)
    ).all()
    assert [(r[0], r[1], r[2]) for r in joined] == [
        ("Alice", "pen", decimal.Decimal("3.75")), ("Alice", "ink", decimal.Decimal("7.00"))
    ], joined
    by_item = s.execute(
        select(Order.item, func.count(Order.id), func.sum(Order.qty))
        .group_by(Order.item).having(func.count(Order.id) > 1).order_by(Order.item)
    ).all()
    assert [(r[0], r[1], int(r[2])) for r in by_item] == [
        ("bulk0", 13, sum(range(0, 50, 4))), ("bulk1", 13, sum(range(1, 50, 4))),
        ("bulk2", 12, sum(range(2, 50, 4))), ("bulk3", 12, sum(range(3, 50, 4)))
    ], by_item
    by_status = dict(s.execute(select(Customer.status, func.count()).group_by(Customer.status)).all())
    assert by_status == {Status.active: 41, Status.suspended: 1, Status.closed: 10}, by_status
    vips = s.scalar(select(func.count()).where(Customer.vip))
    assert vips == 18, vips
    total = s.scalar(select(func.sum(Customer.balance)))
    assert total == decimal.Decimal("10.50") + sum(decimal.Decimal(i) / 4 for i in range(50)), total
    sub = select(Order.customer_id).where(Order.qty > 45).scalar_subquery()
    names = s.scalars(select(Customer.name).where(Customer.id.in_(sub)).order_by(Customer.id)).all()
    assert names == ["C046", "C047", "C048", "C049"], names
    json_lang = s.scalar(select(Customer.prefs["lang"].as_string()).where(Customer.id == aid))
    assert json_lang == "fr", json_lang
    case = s.scalars(select(func.coalesce(Customer.notes, Customer.name)).order_by(Customer.id).limit(2)).all()
    assert case == ["first \u00e9 \U0001F600", "Bob"], case

# --- updates: attributes (unit of work) and UPDATE statements -------------------------
with Session(engine) as s:
    a = s.get(Customer, aid)
    a.balance += decimal.Decimal("1.25")
    a.prefs = {"lang": "de"}
    a.orders[0].qty = 30
    s.commit()
    r = s.execute(update(Customer).where(Customer.name.like("C00%")).values(vip=True))
    assert r.rowcount == 10, r.rowcount
    # Matched rows (CLIENT_FOUND_ROWS): C000, C003, C006, C009 already had vip=1
    r = s.execute(update(Customer).where(Customer.name.like("C00%")).values(vip=True))
    assert r.rowcount == 10, r.rowcount
    s.commit()
    a = s.get(Customer, aid)
    s.refresh(a)
    assert a.balance == decimal.Decimal("11.75") and a.prefs == {"lang": "de"}
    assert a.orders[0].qty == 30
    a.notes = "changed"
    s.commit()

# --- rollback of a failed transaction, then the session still works -------------------
with Session(engine) as s:
    s.add(Customer(name="Dup", email="alice@example.com"))
    try:
        s.commit()
        raise SystemExit("expected an IntegrityError on the unique email")
    except exc.IntegrityError as e:
        assert e.orig.args[0] == 1062, e.orig.args
        s.rollback()
    s.add(Customer(name="Dana", email="dana@example.com"))
    s.commit()
    assert s.scalar(select(func.count()).where(Customer.email == "alice@example.com")) == 1
    # a foreign key violation
    s.add(Order(customer_id=999999, item="x", qty=1, price=1))
    try:
        s.flush()
        raise SystemExit("expected an IntegrityError on the foreign key")
    except exc.IntegrityError as e:
        assert e.orig.args[0] == 1452, e.orig.args
        s.rollback()
    assert s.scalar(select(func.count()).select_from(Customer)) == 53

# --- delete with cascade (delete-orphan) ----------------------------------------------
with Session(engine) as s:
    a = s.get(Customer, aid)
    a.orders.pop(0)  # orphan: deleted at flush
    s.commit()
    assert s.scalar(select(func.count()).where(Order.customer_id == aid)) == 1
    s.delete(s.get(Customer, aid))
    s.commit()
    assert s.scalar(select(func.count()).where(Order.customer_id == aid)) == 0
    assert s.get(Customer, aid) is None
    r = s.execute(delete(Order).where(Order.item == "bulk0"))
    assert r.rowcount == 13, r.rowcount
    s.commit()

# --- reflection compared to the models -------------------------------------------------
insp = inspect(engine)
assert sorted(insp.get_table_names()) == ["customer", "orders"], insp.get_table_names()
cols = {c["name"]: c for c in insp.get_columns("customer")}
assert list(cols) == ["id", "name", "email", "notes", "balance", "vip", "status", "prefs",
                      "created"], list(cols)
tn = {k: type(v["type"]).__name__ for k, v in cols.items()}
assert tn == {"id": "INTEGER", "name": "VARCHAR", "email": "VARCHAR", "notes": "TEXT",
              "balance": "DECIMAL", "vip": "TINYINT", "status": "ENUM",
              "prefs": "LONGTEXT",
              "created": "DATETIME"}, tn
assert cols["vip"]["type"].display_width == 1, cols["vip"]["type"].display_width
assert cols["name"]["type"].length == 100 and cols["name"]["nullable"] is False
assert cols["notes"]["nullable"] is True
assert (cols["balance"]["type"].precision, cols["balance"]["type"].scale) == (12, 2)
assert list(cols["status"]["type"].enums) == ["active", "suspended", "closed"]
assert cols["id"]["autoincrement"] is True, cols["id"]
assert str(cols["created"]["default"]).lower() in ("current_timestamp()", "current_timestamp"), cols["created"]
assert insp.get_pk_constraint("customer")["constrained_columns"] == ["id"]
uq = insp.get_unique_constraints("customer")
assert [(u["name"], u["column_names"]) for u in uq] == [("uq_customer_email", ["email"])], uq
fks = insp.get_foreign_keys("orders")
assert len(fks) == 1 and fks[0]["referred_table"] == "customer", fks
assert fks[0]["constrained_columns"] == ["customer_id"] and fks[0]["referred_columns"] == ["id"]
idx = {i["name"]: i for i in insp.get_indexes("orders")}
assert idx["ix_orders_item_qty"]["column_names"] == ["item", "qty"], idx
assert idx["ix_orders_item_qty"]["unique"] is False
m = __import__("sqlalchemy").MetaData()
m.reflect(engine)
assert set(m.tables) == {"customer", "orders"}
for t in Base.metadata.sorted_tables:
    rt = m.tables[t.name]
    assert [c.name for c in rt.columns] == [c.name for c in t.columns], t.name
    assert [c.name for c in rt.primary_key] == [c.name for c in t.primary_key], t.name
# the reflected types read back what the models wrote
with engine.connect() as c:
    row = c.execute(select(m.tables["customer"]).where(m.tables["customer"].c.name == "Bob")).one()
    assert row.vip in (0, False) and row.status == "suspended", row

Base.metadata.drop_all(engine)
assert inspect(engine).get_table_names() == []
with server.begin() as c:
    c.execute(text("DROP DATABASE %s" % dbname))
print("OK orm", driver)

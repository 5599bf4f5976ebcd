"""Alembic migrations against a MariaDB-compatible server, with default dialect options.

Usage: migrations.py DRIVER ACCOUNT@HOST:PORT DBNAME WORKDIR
Runs the `alembic` command line (python -m alembic) in WORKDIR: init, hand-written
revisions (create_table, add_column, alter_column: type, nullable, server_default and
rename, create_index, create_foreign_key, drop_column), upgrade/downgrade, autogenerate
against changed models and `alembic check`. Exits non-zero on any mismatch; prints
"OK migrations DRIVER" at the end.
"""
import os
import subprocess
import sys
import textwrap

from sqlalchemy import create_engine, inspect, text

driver, where, dbname, work = sys.argv[1:5]
url = "mysql+%s://%s/%s?charset=utf8mb4" % (driver, where, dbname)
server = create_engine("mysql+%s://%s/" % (driver, where))
with server.begin() as c:
    c.execute(text("DROP DATABASE IF EXISTS %s" % dbname))
    c.execute(text("CREATE DATABASE %s CHARACTER SET utf8mb4" % dbname))
engine = create_engine(url)
os.makedirs(work, exist_ok=True)


def alembic(*args):
    r = subprocess.run([sys.executable, "-m", "alembic", *args], cwd=work,
                       capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    print("$ alembic", " ".join(args), "\n" + out, flush=True)
    return r.returncode, out


def must(*args):
    rc, out = alembic(*args)
    assert rc == 0, "alembic %s failed" % " ".join(args)
    return out


def write(name, body):
    with open(os.path.join(work, name), "w") as f:
        f.write(textwrap.dedent(body).lstrip())


must("init", "migrations")
ini = os.path.join(work, "alembic.ini")
with open(ini) as f:
    conf = f.read()
conf = conf.replace("sqlalchemy.url = driver://user:pass@localhost/dbname",
                    "sqlalchemy.url = " + url)
assert url in conf, "alembic.ini has no sqlalchemy.url to set"
with open(ini, "w") as f:
    f.write(conf)
env_py = os.path.join(work, "migrations", "env.py")
with open(env_py) as f:
    env = f.read()
assert "target_metadata = None" in env
env = env.replace("target_metadata = None", textwrap.dedent("""
    import os, sys
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from models import Base
    target_metadata = Base.metadata"""))
with open(env_py, "w") as f:
    f.write(env)

HEAD = """
from sqlalchemy import (BigInteger, Boolean, Column, DateTime, ForeignKey, Index, Integer,
                        Numeric, String, Text, func, text)
from sqlalchemy.orm import DeclarativeBase


class Base(DeclarativeBase):
    pass


class Account(Base):
    __tablename__ = "account"
    id = Column(Integer, primary_key=True, autoincrement=True)
    name = Column(String(50), nullable=True)
    age = Column(BigInteger)
    email = Column(String(100), index=False)
    active = Column(Boolean, nullable=False, server_default=text("1"))
    created = Column(DateTime, server_default=func.now())
    __table_args__ = (Index("ix_account_email", "email", unique=True),)


class Post(Base):
    __tablename__ = "post"
    id = Column(Integer, primary_key=True, autoincrement=True)
    account_id = Column(Integer, ForeignKey("account.id", name="fk_post_account"))
    headline = Column(String(100), server_default="untitled")
    amount = Column(Numeric(10, 2))
"""
write("models.py", HEAD)
versions = os.path.join(work, "migrations", "versions")
write("migrations/versions/r1_tables.py", '''
    """tables"""
    import sqlalchemy as sa
    from alembic import op

    revision = "r1"
    down_revision = None
    branch_labels = None
    depends_on = None


    def upgrade():
        op.create_table(
            "account",
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("name", sa.String(50), nullable=False),
            sa.Column("age", sa.Integer),
            sa.Column("active", sa.Boolean, nullable=False, server_default=sa.text("1")),
            sa.Column("created", sa.DateTime, server_default=sa.func.now()),
        )
        op.create_table(
            "post",
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("account_id", sa.Integer),
            sa.Column("title", sa.String(100)),
            sa.Column("amount", sa.Numeric(10, 2)),
        )
        op.execute("INSERT INTO account (name, age) VALUES ('ann', 31), ('ben', 42)")
        op.execute("INSERT INTO post (account_id, title, amount) VALUES (1, 'hello', 9.5)")


    def downgrade():
        op.drop_table("post")
        op.drop_table("account")
''')
write("migrations/versions/r2_email_fk.py", '''
    """email, index, foreign key"""
    import sqlalchemy as sa
    from alembic import op

    revision = "r2"
    down_revision = "r1"
    branch_labels = None
    depends_on = None


    def upgrade():
        op.add_column("account", sa.Column("email", sa.String(100)))
        op.execute("UPDATE account SET email = CONCAT(name, '@example.com')")
        op.create_index("ix_account_email", "account", ["email"], unique=True)
        op.create_foreign_key("fk_post_account", "post", "account", ["account_id"], ["id"])


    def downgrade():
        op.drop_constraint("fk_post_account", "post", type_="foreignkey")
        op.drop_index("ix_account_email", table_name="account")
        op.drop_column("account", "email")
''')
write("migrations/versions/r3_alter.py", '''
    """alter columns"""
    import sqlalchemy as sa
    from alembic import op

    revision = "r3"
    down_revision = "r2"
    branch_labels = None
    depends_on = None


    def upgrade():
        op.alter_column("account", "age", type_=sa.BigInteger, existing_type=sa.Integer)
        op.alter_column("account", "name", nullable=True, existing_type=sa.String(50))
        op.alter_column("post", "title", server_default="untitled",
                        existing_type=sa.String(100))
        op.alter_column("post", "title", new_column_name="headline",
                        existing_type=sa.String(100), existing_server_default="untitled")
        op.add_column("post", sa.Column("scratch", sa.Text))


    def downgrade():
        op.drop_column("post", "scratch")
        op.alter_column("post", "headline", new_column_name="title",
                        existing_type=sa.String(100), existing_server_default="untitled")
        op.alter_column("post", "title", server_default=None, existing_type=sa.String(100))
        op.alter_column("account", "name", nullable=False, existing_type=sa.String(50))
        op.alter_column("account", "age", type_=sa.Integer, existing_type=sa.BigInteger)
''')
write("migrations/versions/r4_drop.py", '''
    """drop the scratch column"""
    import sqlalchemy as sa
    from alembic import op

    revision = "r4"
    down_revision = "r3"
    branch_labels = None
    depends_on = None


    def upgrade():
        op.drop_column("post", "scratch")


    def downgrade():
        op.add_column("post", sa.Column("scratch", sa.Text))
''')


def check_head():
    insp = inspect(engine)
    assert sorted(insp.get_table_names()) == ["account", "alembic_version", "post"]
    acc = {c["name"]: c for c in insp.get_columns("account")}
    assert list(acc) == ["id", "name", "age", "active", "created", "email"], list(acc)
    assert type(acc["age"]["type"]).__name__ == "BIGINT", acc["age"]
    assert acc["name"]["nullable"] is True
    post = {c["name"]: c for c in insp.get_columns("post")}
    assert list(post) == ["id", "account_id", "headline", "amount"], list(post)
    assert post["headline"]["default"] == "'untitled'", post["headline"]
    ix = {i["name"]: i for i in insp.get_indexes("account")}
    assert ix["ix_account_email"]["column_names"] == ["email"]
    assert ix["ix_account_email"]["unique"] in (True, 1), ix
    fks = insp.get_foreign_keys("post")
    assert [(f["name"], f["constrained_columns"], f["referred_table"]) for f in fks] == [
        ("fk_post_account", ["account_id"], "account")], fks
    with engine.connect() as c:
        rows = c.execute(text("SELECT name, age, email, active FROM account ORDER BY id")).all()
        assert [tuple(r) for r in rows] == [("ann", 31, "ann@example.com", 1),
                                           ("ben", 42, "ben@example.com", 1)], rows
        p = c.execute(text("SELECT account_id, headline, amount FROM post")).all()
        assert [tuple(r) for r in p] == [(1, "hello", __import__("decimal").Decimal("9.50"))], p


def check_base():
    assert inspect(engine).get_table_names() == ["alembic_version"], \
        inspect(engine).get_table_names()


must("upgrade", "head")
check_head()
out = must("check")
assert "No new upgrade operations detected" in out, out
must("downgrade", "base")
check_base()
must("upgrade", "r2")
must("downgrade", "r1")
must("upgrade", "head")
check_head()
assert "r4 (head)" in must("current")

# autogenerate against changed models
write("models.py", HEAD.replace(
    '    amount = Column(Numeric(10, 2))\n',
    '    amount = Column(Numeric(10, 2))\n'
    '    body = Column(Text, nullable=True)\n'
    '    __table_args__ = (Index("ix_post_headline", "headline"),)\n'
) + """

class Tag(Base):
    __tablename__ = "tag"
    id = Column(Integer, primary_key=True)
    post_id = Column(Integer, ForeignKey("post.id", ondelete="CASCADE"), nullable=False)
    label = Column(String(30), nullable=False, unique=True)
""")
rc, out = alembic("check")
assert rc != 0 and "New upgrade operations detected" in out, out
must("revision", "--autogenerate", "-m", "auto", "--rev-id", "r5")
gen = [f for f in os.listdir(versions) if f.startswith("r5")]
assert len(gen) == 1, os.listdir(versions)
with open(os.path.join(versions, gen[0])) as f:
    src = f.read()
upgrade_src = src[src.index("def upgrade"):src.index("def downgrade")]
for want in ["op.create_table('tag'", "sa.ForeignKeyConstraint(['post_id'], ['post.id'], "
             "ondelete='CASCADE')", "sa.UniqueConstraint('label')",
             "op.add_column('post', sa.Column('body', sa.Text(), nullable=True))",
             "op.create_index('ix_post_headline', 'post', ['headline'], unique=False)"]:
    assert want in upgrade_src, (want, upgrade_src)
ops = [line.strip() for line in upgrade_src.splitlines() if line.strip().startswith("op.")]
assert len(ops) == 3, ops
must("upgrade", "head")
out = must("check")
assert "No new upgrade operations detected" in out, out
assert sorted(inspect(engine).get_table_names()) == ["account", "alembic_version", "post", "tag"]
must("downgrade", "base")
check_base()
must("upgrade", "head")
out = must("check")
assert "No new upgrade operations detected" in out, out
with engine.begin() as c:
    c.execute(text("INSERT INTO tag (post_id, label) VALUES (1, 'x')"))
    c.execute(text("DELETE FROM post"))
    assert c.execute(text("SELECT COUNT(*) FROM tag")).scalar() == 0
must("downgrade", "base")
check_base()
with server.begin() as c:
    c.execute(text("DROP DATABASE %s" % dbname))
print("OK migrations", driver)

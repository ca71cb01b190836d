#!/usr/bin/env python3
"""pg_server.py — a throwaway PostgreSQL server for one test run, and a wrapper that runs a command with it.

PgServer() runs Debian's initdb into a new temporary folder and starts the server on a unix
socket in that folder (no TCP port, so runs never collide), with a password login for user
`parley` (scram-sha-256, the password is random per run). As root it runs the server as an
unprivileged user (PARLEY_PG_USER, default `nobody`), as PostgreSQL requires. stop() ends it
and removes the folder; start()/stop_server() stop and start the same cluster again, for
fault tests. Missing PostgreSQL binaries raise Unavailable (a test then exits 77).

As a program: `pg_server.py CMD ARGS...` runs CMD with PARLEY_TEST_PG set to
postgresql://parley:PASSWORD@/{db}?host=SOCKET_DIR (tests/dialog/tmp_store.h fills in {db})
and PARLEY_TEST_PG_DIR to the folder, and exits with CMD's status (77 when PostgreSQL is
missing).
"""
import glob
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile


class Unavailable(Exception):
    pass


def bin_dir():
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2]))
    for d in reversed(dirs):
        if os.path.exists(os.path.join(d, "initdb")) and os.path.exists(os.path.join(d, "pg_ctl")):
            return d
    raise Unavailable("no PostgreSQL server binaries (apt-get install postgresql)")


class PgServer:
    def __init__(self, port=5432):
        self.bin = bin_dir()
        self.dir = tempfile.mkdtemp(prefix="parley-pg-")
        self.data = os.path.join(self.dir, "data")
        self.port = port
        self.password = secrets.token_hex(12)
        self.as_user = None
        if os.geteuid() == 0:
            self.as_user = os.environ.get("PARLEY_PG_USER", "nobody")
            pw = pwd.getpwnam(self.as_user)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        os.chmod(self.dir, 0o700)
        pwfile = os.path.join(self.dir, "pw")
        with open(pwfile, "w") as f:
            f.write(self.password + "\n")
        if self.as_user:
            os.chown(pwfile, pwd.getpwnam(self.as_user).pw_uid, -1)
        self._run([os.path.join(self.bin, "initdb"), "-D", self.data, "-U", "parley",
                   "--pwfile", pwfile, "-A", "scram-sha-256", "-E", "UTF8", "--locale=C"])
        os.unlink(pwfile)
        self.start()

    def _run(self, argv):
        if self.as_user:
            argv = ["runuser", "-u", self.as_user, "--"] + argv
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           cwd=self.dir)
        if r.returncode != 0:
            raise RuntimeError("%s failed:\n%s" % (" ".join(argv), r.stdout))

    def start(self):
        # fsync off: a test server need not survive a power loss, and the disk is shared.
        opts = "-k %s -c listen_addresses='' -p %d -c fsync=off -c max_connections=200" % (
            self.dir, self.port)
        self._run([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-o", opts, "-w",
                   "-l", os.path.join(self.dir, "log"), "start"])

    def stop_server(self, mode="fast"):
        self._run([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", mode, "-w", "stop"])

    def uri(self, db="{db}"):
        return "postgresql://parley:%s@/%s?host=%s&port=%d" % (self.password, db, self.dir,
                                                               self.port)

    def psql(self, sql, db="postgres"):
        """Runs sql with psql and returns its unaligned output."""
        r = subprocess.run([os.path.join(self.bin, "psql"), "-XAtq", "-d", self.uri(db), "-c", sql],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise RuntimeError("psql %s: %s" % (sql, r.stderr))
        return r.stdout

    def stop(self):
        try:
            self.stop_server("immediate")
        except RuntimeError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


def with_server(fn):
    """fn(server) on a new server, stopped afterwards; fn's result, or 77 (a skip) when
    PostgreSQL is missing."""
    try:
        srv = PgServer()
    except Unavailable as e:
        print("skip:", e)
        return 77
    try:
        return fn(srv)
    finally:
        srv.stop()


def main(argv):
    if len(argv) < 2:
        print("usage: pg_server.py CMD [ARGS...]", file=sys.stderr)
        return 2
    return with_server(lambda srv: subprocess.run(argv[1:], env=dict(
        os.environ, PARLEY_TEST_PG=srv.uri(), PARLEY_TEST_PG_DIR=srv.dir)).returncode)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

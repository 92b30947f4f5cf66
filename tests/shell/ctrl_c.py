#!/usr/bin/env python3
"""Ctrl-C in the interactive shell, typed on a real pseudo-terminal.

`hoodie --warehouse DIR` runs on a pty that is its controlling terminal, as in a terminal
emulator: while a statement runs, the terminal turns the byte 0x03 into SIGINT; at the prompt,
rustyline reads it as a key. The script types what a user would and checks what
docs/getting-started.md ("Stopping a statement") promises:

1. Ctrl-C during a write: a long INSERT (millions of generated rows), followed on the same
   line by a small INSERT, gets Ctrl-C once its instant is pending on the timeline. The shell
   prints `rolled back the cancelled write T of LOCATION` (T the pending instant, LOCATION the
   table) and `Cancelled.`, runs nothing else of that line, gives its prompt back and keeps
   running.
2. The table as before: the same shell reads the same content (row count, sums of id and ts,
   least and greatest v), no instant is left pending on the timeline, the cancelled instant's
   files are gone, a completed rollback names it, nothing else was added to the timeline, and
   the data files are the ones from before.
3. Ctrl-C at the prompt: it discards the line being typed (the next statement runs alone) and
   prints `(Ctrl-C again to quit, or \\q)`, and the shell stays; at the empty prompt the same,
   and a second Ctrl-C in a row exits, with status 0.
4. A new process (`hoodie -c`) reads the table as before.

Waits are for events (output on the pty, files on the timeline), each with a generous
timeout; no duration is asserted. A check that fails is reported (`FAIL ...`, with the tail of
the terminal's output) and the next ones still run while the shell is at its prompt. The last
line is `shell ctrl-c: 4 checks passed`, or `shell ctrl-c: N checks passed, M failed` with exit
status 1. Python's standard library only.

Usage: ctrl_c.py --hoodie PATH [--rows N] [--term TERM] [--keep DIR]
"""

import argparse
import fcntl
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

TIMEOUT = 60.0
# the cancelled write is rolled back once its writer task stops, which can take as long as the
# write itself (a loaded machine, a debug build)
CANCEL_TIMEOUT = 300.0
PROMPT = "hoodie> "
HINT = "(Ctrl-C again to quit, or \\q)"
# escape sequences a terminal interprets (rustyline's and the spinner's), removed before matching
ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
                  r"|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
# the spinner a statement shows after a second ("⠋ running… 3s")
SPINNER = re.compile(r"[\u2800-\u28ff] running\u2026 [0-9a-z ]*?s *")
# the table's content in one token: row count, sums of id and ts, least and greatest v (the echo
# of the typed statement, with its quotes, cannot match it)
STATE_SQL = ("SELECT concat('state:', count(*), ':', coalesce(sum(id), 0), ':', "
             "coalesce(sum(ts), 0), ':', coalesce(min(v), '-'), coalesce(max(v), '-')) AS s "
             "FROM t;")
STATE = re.compile(r"state:\d+:\d+:\d+:[A-Za-z-]+")
# `T.action[.state]`; a completed instant of versions 8 and 9 is `T_C.action`
INSTANT_FILE = re.compile(r"^(\d{14,17})(?:_\d{14,17})?\.([a-z_]+(?:\.[a-z_]+)*)$")
COMPLETED = {"commit", "deltacommit", "replacecommit", "rollback", "clean", "restore",
             "savepoint", "indexing", "compaction.commit"}


class Failure(Exception):
    pass


class Shell:
    """A process on a pseudo-terminal, read until expected output appears."""

    def __init__(self, argv, env):
        self.raw = bytearray()
        self.pos = 0  # in self.text: where the next expect starts looking
        self.eof = False
        self.status = None
        pid, fd = pty.fork()
        if pid == 0:  # the child: a session leader whose controlling terminal is the pty
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 250, 0, 0))
                os.execvpe(argv[0], argv, env)
            except BaseException as e:  # noqa: BLE001
                os.write(2, f"cannot run {argv[0]}: {e}\n".encode())
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd

    @property
    def text(self):
        return ANSI.sub("", self.raw.decode("utf-8", "replace")).replace("\r", "")

    def pump(self, timeout):
        """Reads what the process wrote within `timeout` seconds (returns at the first chunk)."""
        if self.eof:
            time.sleep(min(timeout, 0.05))
            return
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # EIO: the slave side is closed, the process is gone
            chunk = b""
        if chunk:
            self.raw += chunk
        else:
            self.eof = True

    def send(self, data):
        os.write(self.fd, data)

    def alive(self):
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
        return self.status is None

    def fail(self, message):
        # the end of the terminal's text, escape sequences and spinner frames left out
        tail = SPINNER.sub("", self.text)[-800:]
        raise Failure(f"{message}\n  --- the end of the terminal's output (repr) ---\n  "
                      f"{tail!r}")

    def expect(self, pattern, what, timeout=TIMEOUT):
        """Waits until `pattern` appears after what earlier expects consumed; consumes it.
        An `Error: ...` line of the shell, its exit or the timeout fail."""
        regex = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern, re.S)
        deadline = time.monotonic() + timeout
        while True:
            text = self.text
            match = regex.search(text, self.pos)
            if match:
                self.pos = match.end()
                return match
            error = re.search(r"^Error: .*", text[self.pos:], re.M)
            if error:
                self.fail(f"the shell printed {error.group(0)!r} while waiting for {what}")
            if self.eof and not self.alive():
                self.fail(f"the shell exited (status {self.status}) before {what}")
            if time.monotonic() > deadline:
                self.fail(f"no {what} within {timeout:.0f} s")
            self.pump(0.2)

    def wait_for_prompt(self, timeout):
        """Waits until the output ends with the prompt; whether it did."""
        deadline = time.monotonic() + timeout
        while not self.text.rstrip(" ").endswith(PROMPT.rstrip(" ")):
            if time.monotonic() > deadline or (self.eof and not self.alive()):
                return False
            self.pump(0.2)
        self.skip_output()
        return True

    def skip_output(self):
        """Marks everything read so far as consumed."""
        self.pos = len(self.text)

    def drain(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.pump(0.1)

    def wait_exit(self, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() > deadline:
                self.fail(f"the shell did not exit within {timeout:.0f} s")
            self.pump(0.1)
        while not self.eof:  # the rest of its output
            self.pump(0.1)
        return self.status

    def kill(self):
        if self.alive():
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.status = -signal.SIGKILL
        os.close(self.fd)


def timeline_dir(table):
    """The timeline folder: `.hoodie/timeline` on versions 8 and 9, `.hoodie` on 6."""
    layout2 = table / ".hoodie" / "timeline"
    return layout2 if layout2.is_dir() else table / ".hoodie"


def completed_file(table, instant, action):
    """The completed file of `instant` as `action` (`T.action` or `T_C.action`)."""
    for entry in timeline_dir(table).iterdir():
        m = INSTANT_FILE.match(entry.name)
        if m and m.group(1) == instant and m.group(2) == action:
            return entry
    raise FileNotFoundError(f"{instant}.{action}")


def timeline(table):
    """{instant: set of states} of the instant files at the top of the timeline folder."""
    out = {}
    for entry in timeline_dir(table).iterdir():
        m = INSTANT_FILE.match(entry.name)
        if m and entry.is_file():
            out.setdefault(m.group(1), set()).add(m.group(2))
    return out


def pending(instants):
    """The instants with requested/inflight files and no completed one."""
    return sorted(t for t, states in instants.items() if not states & COMPLETED)


def data_files(table):
    return sorted(str(p.relative_to(table)) for p in table.rglob("*")
                  if p.is_file() and ".hoodie" not in p.relative_to(table).parts)


class Run:
    """The shell and the table the checks share."""

    def __init__(self, hoodie, rows, term, work):
        self.hoodie = hoodie
        self.rows = rows
        self.warehouse = work / "warehouse"
        self.table = self.warehouse / "t"
        home = work / "home"  # rustyline's history file goes here, not to the user's
        home.mkdir()
        self.env = dict(os.environ, HOME=str(home), TERM=term)
        self.env.pop("HOODIE_WAREHOUSE", None)
        self.shell = None
        self.instant = None  # the cancelled write's instant, once seen

    def state(self):
        """The table's content, read in the shell."""
        shell = self.shell
        shell.skip_output()
        shell.send(STATE_SQL.encode() + b"\r")
        state = shell.expect(STATE, "answer to the state query").group(0)
        shell.expect(re.escape(PROMPT), "prompt after the state query")
        return state

    def setup(self):
        self.shell = shell = Shell([self.hoodie, "--warehouse", str(self.warehouse)], self.env)
        shell.expect(re.escape(PROMPT), "first prompt")
        shell.send(b"CREATE TABLE t (id INT, v STRING, ts INT) USING hudi "
                   b"TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts');\r")
        shell.expect(r"\nOK\b", "result of CREATE TABLE")
        shell.expect(re.escape(PROMPT), "prompt after CREATE TABLE")
        shell.send(b"INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 1), (3, 'c', 1);\r")
        shell.expect(r"\n3 rows? affected", "result of the first INSERT")
        shell.expect(re.escape(PROMPT), "prompt after the first INSERT")
        self.before = self.state()
        if self.before != "state:3:6:3:ac":
            shell.fail(f"the table holds {self.before}, expected state:3:6:3:ac")
        self.timeline_before = timeline(self.table)
        self.files_before = data_files(self.table)

    def cancel_write(self):
        shell, table = self.shell, self.table
        shell.skip_output()
        shell.send(f"INSERT INTO t SELECT CAST(value AS INT), 'x', 2 FROM generate_series(10, "
                   f"{self.rows}); INSERT INTO t VALUES (4, 'd', 1);\r".encode())
        # the line as the terminal shows it once Enter was read: what follows is the shell's
        shell.expect(re.escape("(4, 'd', 1);") + r"[ \t]*\n", "echo of the long INSERT")
        deadline = time.monotonic() + 2 * TIMEOUT
        while self.instant is None:
            new = [t for t in pending(timeline(table)) if t not in self.timeline_before]
            if new:
                self.instant = new[0]
            elif PROMPT in shell.text[shell.pos:] or time.monotonic() > deadline:
                shell.fail("the long INSERT ended, or put no instant on the timeline, before it "
                           f"could be cancelled (pending: {pending(timeline(table))})")
            else:
                shell.pump(0.05)
        shell.drain(1.0)  # let it write for a while
        states = timeline(table).get(self.instant, set())
        if states & COMPLETED or PROMPT in shell.text[shell.pos:]:
            shell.fail(f"the long INSERT (instant {self.instant}: {sorted(states)}) ended within "
                       f"a second of starting; raise --rows (now {self.rows})")
        shell.send(b"\x03")
        start = shell.pos
        m = shell.expect(r"rolled back the cancelled write (\d+) of (\S+)|\n(\d+) rows? affected",
                         "rollback message after Ctrl-C during the INSERT", CANCEL_TIMEOUT)
        if m.group(3):
            shell.expect(re.escape(PROMPT), "prompt after the INSERT", CANCEL_TIMEOUT)
            ran = re.findall(r"\d+ rows? affected", shell.text[start:shell.pos])
            shell.fail(f"Ctrl-C (sent while instant {self.instant} was pending) did not cancel "
                       f"the INSERT: the shell answered {ran} and gave its prompt back, no "
                       "'rolled back the cancelled write', no 'Cancelled.'")
        if m.group(1) != self.instant:
            shell.fail(f"the rollback names instant {m.group(1)}, the pending one was "
                       f"{self.instant}")
        if Path(m.group(2)).resolve() != table.resolve():
            shell.fail(f"the rollback names table {m.group(2)}, expected {table}")
        shell.expect(r"Cancelled\.", "'Cancelled.' after the rollback message")
        prompt = shell.expect(re.escape(PROMPT), "prompt after the cancelled INSERT")
        if re.search(r"rows? affected", shell.text[start:prompt.start()]):
            shell.fail("a statement of the cancelled line ran")
        shell.drain(0.3)
        if not shell.alive():
            shell.fail(f"the shell exited (status {shell.status}) after the cancelled INSERT")
        return (f"'rolled back the cancelled write {self.instant}', 'Cancelled.', prompt back, "
                "shell alive")

    def table_as_before(self):
        shell, table = self.shell, self.table
        after = self.state()
        if after != self.before:
            shell.fail(f"after the cancelled INSERT the table holds {after}; before it held "
                       f"{self.before} (the INSERT after it on the line must not run either)")
        instants = timeline(table)
        new = {t: sorted(s) for t, s in instants.items() if t not in self.timeline_before}
        left = pending(instants)
        if left:
            shell.fail(f"instants left pending on the timeline: "
                       f"{ {t: sorted(instants[t]) for t in left} }")
        if self.instant is None:
            shell.fail("the cancelled write's instant was never seen")
        if self.instant in instants:
            shell.fail(f"the cancelled instant {self.instant} is still on the timeline: "
                       f"{sorted(instants[self.instant])}")
        rollbacks = [t for t, s in new.items() if "rollback" in s and self.instant.encode()
                     in completed_file(table, t, "rollback").read_bytes()]
        if len(rollbacks) != 1 or len(new) != 1:
            shell.fail(f"expected one new instant on the timeline, a completed rollback of "
                       f"{self.instant}; new instants: {new}")
        files_after = data_files(table)
        if files_after != self.files_before:
            shell.fail(f"data files before: {self.files_before}\n  after: {files_after}")
        return (f"{after} in the same shell, nothing pending, rollback {rollbacks[0]} of "
                f"{self.instant} completed, the same data files")

    def ctrl_c_at_prompt(self):
        shell = self.shell
        shell.skip_output()
        shell.send(b"SELECT 'typed-")  # a line being typed, Enter not pressed
        shell.expect(r"typed-", "echo of the line being typed")
        shell.send(b"\x03")
        shell.expect(re.escape(HINT), "hint after Ctrl-C on a line being typed")
        shell.expect(re.escape(PROMPT), "prompt after Ctrl-C on a line being typed")
        shell.send(b"SELECT concat('after-', 'ctrl-c') AS s;\r")
        shell.expect(r"after-ctrl-c", "answer of the statement typed after the discarded line")
        shell.expect(re.escape(PROMPT), "prompt after that statement")
        if not shell.alive():
            shell.fail(f"the shell exited (status {shell.status}) after Ctrl-C at the prompt")
        shell.send(b"\x03")
        shell.expect(re.escape(HINT), "hint after the first Ctrl-C at the empty prompt")
        shell.expect(re.escape(PROMPT), "prompt after the first Ctrl-C at the empty prompt")
        shell.drain(0.3)
        if not shell.alive():
            shell.fail(f"the shell exited (status {shell.status}) after one Ctrl-C at the "
                       "empty prompt")
        shell.send(b"\x03")
        status = shell.wait_exit()
        if status != 0:
            shell.fail(f"after a second Ctrl-C at the prompt the shell exited with status "
                       f"{status}, expected 0")
        return ("the typed line discarded, the hint shown, shell alive; a second Ctrl-C in a row "
                "exits with status 0")

    def new_process(self):
        proc = subprocess.run([self.hoodie, "--warehouse", str(self.warehouse), "-c", STATE_SQL],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=TIMEOUT, env=self.env)
        m = STATE.search(proc.stdout)
        if proc.returncode != 0 or not m or m.group(0) != self.before:
            raise Failure(f"a new process reads {m.group(0) if m else None} (status "
                          f"{proc.returncode}), expected {self.before}\n  stdout: "
                          f"{proc.stdout[-1000:]}\n  stderr: {proc.stderr[-1000:]}")
        return f"reads {self.before}"


def run(hoodie, rows, term, work):
    """Runs the checks; returns (passed, failed)."""
    r = Run(hoodie, rows, term, work)
    checks = [
        ("Ctrl-C during a write", r.cancel_write, True),
        ("the table as before", r.table_as_before, True),
        ("Ctrl-C at the prompt", r.ctrl_c_at_prompt, True),
        ("a new process", r.new_process, False),
    ]
    passed = failed = 0
    try:
        try:
            r.setup()
        except Failure as e:
            print(f"FAIL setup: {e}", file=sys.stderr)
            return 0, len(checks)
        for name, check, in_shell in checks:
            if in_shell and not r.shell.alive():
                print(f"FAIL {name}: not run, the shell exited (status {r.shell.status})",
                      file=sys.stderr)
                failed += 1
                continue
            if not in_shell and r.shell.alive():
                r.shell.kill()
            try:
                print(f"ok   {name}: {check()}", flush=True)
                passed += 1
            except Failure as e:
                print(f"FAIL {name}: {e}", file=sys.stderr, flush=True)
                failed += 1
                if in_shell and r.shell.alive():
                    # carry on from a prompt, if the shell gets back to one
                    if not r.shell.wait_for_prompt(CANCEL_TIMEOUT):
                        r.shell.kill()
    finally:
        if r.shell is not None and r.shell.status is None:
            r.shell.kill()
    return passed, failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hoodie", required=True, help="the hoodie binary")
    parser.add_argument("--rows", type=int, default=4_000_000,
                        help="rows of the INSERT that is cancelled; it must run well over a "
                             "second (default 4000000)")
    parser.add_argument("--term", default="xterm-256color",
                        help="the TERM the shell sees (default xterm-256color)")
    parser.add_argument("--keep", help="work in this new directory and keep it")
    args = parser.parse_args()
    hoodie = shutil.which(args.hoodie) or args.hoodie
    if os.path.exists(hoodie):
        hoodie = os.path.abspath(hoodie)
    if args.keep:
        work = Path(args.keep)
        work.mkdir(parents=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="hoodie-ctrl-c-"))
    try:
        passed, failed = run(hoodie, args.rows, args.term, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if failed:
        print(f"shell ctrl-c: {passed} checks passed, {failed} failed")
        sys.exit(1)
    print(f"shell ctrl-c: {passed} checks passed")


if __name__ == "__main__":
    main()

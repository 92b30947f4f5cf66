"""A client of tests/spark/server.py: one connection is one Spark session.

    from client import Spark
    spark = Spark.from_env()          # the port from $HOODIE_SPARK (host:port)
    table = spark.sql("select 1 as x")  # a pyarrow Table, or None for a statement without rows
    spark.sql("bad sql")               # raises SparkError with Spark's message
"""
import json
import os
import socket
import struct

import pyarrow as pa


class SparkError(Exception):
    """A statement Spark refused; the message is Spark's (exception class: message, causes)."""


class Spark:
    def __init__(self, address):
        host, _, port = address.rpartition(":")
        self.sock = socket.create_connection((host or "127.0.0.1", int(port)))
        self.file = self.sock.makefile("rwb")

    @classmethod
    def from_env(cls):
        address = os.environ.get("HOODIE_SPARK")
        if not address:
            raise SystemExit("HOODIE_SPARK is not set: start Spark with tests/spark/start.sh (tests/spark/README.md)")
        return cls(address)

    def _frame(self):
        head = self.file.read(4)
        if len(head) < 4:
            raise SparkError("the Spark server closed the connection")
        (n,) = struct.unpack(">I", head)
        return self.file.read(n)

    def sql(self, text):
        data = json.dumps({"sql": text}).encode()
        self.file.write(struct.pack(">I", len(data)) + data)
        self.file.flush()
        head = json.loads(self._frame())
        if not head["ok"]:
            raise SparkError(head["error"])
        if not head["has_result"]:
            return None
        return pa.ipc.open_stream(self._frame()).read_all()

    def close(self):
        self.file.close()
        self.sock.close()

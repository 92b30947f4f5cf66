"""One long-lived Spark session with Hudi, serving SQL to the tests over a local socket.

The JVM's start and Hudi's class loading cost seconds, so a test run starts this server once
(tests/spark/run.sh) and every Spark test sends it statements: hoodie-slt's Spark engine
(Rust), the read and turn-taking checks and the fuzzer (Python, through client.py).

Protocol (docs in tests/spark/README.md): each message is a frame, a 4-byte big-endian length
and that many bytes. A request is one JSON frame {"sql": "..."}; the answer is a JSON frame
{"ok": true, "rows": n} followed, when the statement has result columns, by one frame holding
the result as an Arrow IPC stream; or {"ok": false, "error": "..."}. Each connection is its own
Spark session (`SparkSession.newSession`: its own SET values, current database and temporary
views; the catalog of databases and tables is shared).

Usage: server.py --jar HUDI_BUNDLE --port-file FILE [--memory 3g]
Writes the port it listens on to FILE once Spark is up, then serves until killed.
"""
import argparse
import json
import os
import re
import socket
import socketserver
import struct
import sys
import threading
import time
import traceback

os.environ["TZ"] = "UTC"

import pyarrow as pa  # noqa: E402

# Settings of every session: no metadata table (hoodie keeps none; a Spark write with it on
# would create one that hoodie's later writes do not maintain, hudi-v9.md §2.5).
SESSION_DEFAULTS = {
    "hoodie.metadata.enable": "false",
}


def start_spark(jar, memory):
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("hoodie-spark-oracle")
        .config("spark.jars", jar)
        .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
        .config("spark.kryo.registrator", "org.apache.spark.HoodieSparkKryoRegistrar")
        .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC -XX:+UseParallelGC -XX:-OmitStackTraceInFastThrow")
        .config("spark.driver.memory", memory)
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.warehouse.dir", os.path.abspath(os.environ.get("SPARK_WAREHOUSE", "spark-warehouse")))
    )
    for k, v in SESSION_DEFAULTS.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# Lines of a Java message that are not the message: stack frames, and the logical plan Spark
# appends to an analysis error.
NOISE = re.compile(r"^\s*(at |\.\.\. \d+ more|Driver stacktrace:|\+-|:\s*[+:]-|'|\(\d+\) )")


def clean(text):
    lines = [line.rstrip() for line in str(text).splitlines() if not NOISE.match(line)]
    return "\n".join(line for line in lines if line).strip()


def java_message(e):
    """The message of a Spark or Java exception and of its causes, without stack frames:
    one line a cause, `class: message`."""
    # a Py4JJavaError holds the Java exception in `java_exception`; the exceptions pyspark
    # converts (AnalysisException, ...) in `_origin`, with only the top message in str(e)
    java = getattr(e, "java_exception", None) or getattr(e, "_origin", None)
    if java is None:
        return clean(e)
    parts = []
    while java is not None and len(parts) < 8:
        text = clean(f"{java.getClass().getName()}: {java.getMessage()}")
        if text not in parts:
            parts.append(text)
        java = java.getCause()
    return "\n".join(parts)


def result_frame(df):
    """The result of a query as Arrow IPC stream bytes, or None for a statement without
    result columns."""
    if not df.schema.fields:
        return None, 0
    try:
        from pyspark.sql.pandas.types import to_arrow_schema

        batches = df._collect_as_arrow()
        schema = batches[0].schema if batches else to_arrow_schema(df.schema)
    except Exception:  # a type Spark's Arrow conversion lacks: go through Python values
        batches = None
    if batches is None:
        rows = df.collect()
        names = df.columns
        cols = {f"c{i}": [r[i] for r in rows] for i in range(len(names))}
        table = pa.table(cols) if rows else pa.table({f"c{i}": pa.array([], pa.string()) for i in range(len(names))})
        batches, schema = table.to_batches(), table.schema
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema) as writer:
        for b in batches:
            writer.write_batch(b)
    return sink.getvalue().to_pybytes(), sum(b.num_rows for b in batches)


def read_frame(f):
    head = f.read(4)
    if len(head) < 4:
        return None
    (n,) = struct.unpack(">I", head)
    return f.read(n)


def write_frame(f, data):
    f.write(struct.pack(">I", len(data)))
    f.write(data)


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        session = self.server.spark.newSession()
        for k, v in SESSION_DEFAULTS.items():
            session.conf.set(k, v)
        while True:
            frame = read_frame(self.rfile)
            if frame is None:
                return
            request = json.loads(frame)
            sql = request["sql"]
            started = time.monotonic()
            try:
                body, n = result_frame(session.sql(sql))
                write_frame(self.wfile, json.dumps({"ok": True, "rows": n, "has_result": body is not None}).encode())
                if body is not None:
                    write_frame(self.wfile, body)
            except Exception as e:  # the statement's error goes back to the test
                message = java_message(e)
                if not message:
                    message = traceback.format_exc()
                write_frame(self.wfile, json.dumps({"ok": False, "error": message}).encode())
            self.wfile.flush()
            if self.server.timings:
                first = " ".join(sql.split())[:100]
                print(f"{time.monotonic() - started:7.3f}s {first}", file=self.server.timings, flush=True)


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jar", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--memory", default="3g")
    ap.add_argument("--timings", help="append each statement's time and text to this file")
    args = ap.parse_args()
    spark = start_spark(args.jar, args.memory)
    server = Server(("127.0.0.1", 0), Handler)
    server.spark = spark
    server.timings = open(args.timings, "a") if args.timings else None
    port = server.server_address[1]
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(port))
    os.replace(tmp, args.port_file)
    print(f"spark server: listening on 127.0.0.1:{port}", file=sys.stderr, flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

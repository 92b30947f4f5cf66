"""Azurite checks. `probe`: creates the test container and checks that the server refuses a
second create-if-absent (hoodie's commits rely on it). `read WORK`: hudi-rs reads the tables
hoodie wrote with the rows hoodie reads, meta columns included, and the rows are the ones the
statements leave."""
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq

CONN = ("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="
        + os.environ["AZURE_STORAGE_ACCOUNT_KEY"] + ";BlobEndpoint="
        + os.environ["AZURITE_BLOB_STORAGE_URL"] + "/devstoreaccount1;")


def probe():
    from azure.core.exceptions import ResourceExistsError
    from azure.storage.blob import BlobServiceClient
    svc = BlobServiceClient.from_connection_string(CONN)
    svc.create_container("hoodie")
    blob = svc.get_blob_client("hoodie", "probe")
    blob.upload_blob(b"one")
    try:
        blob.upload_blob(b"two", overwrite=False)
    except ResourceExistsError:
        print("ok   Azurite refuses a second create-if-absent")
        return
    raise SystemExit("FAIL Azurite does not refuse a second create-if-absent")


def rows(table, cols):
    return sorted((tuple(r[c] for c in cols) for r in table.to_pylist()), key=repr)


def read(work):
    from hudi import HudiTableBuilder
    options = {"azure_storage_use_emulator": "true",
               "azure_storage_account_name": "devstoreaccount1",
               "azure_storage_account_key": os.environ["AZURE_STORAGE_ACCOUNT_KEY"]}
    failed = False
    for name, want, cols in [
        ("azc", [(1, "a", 10.0, "x"), (2, "b", 20.0, "y"), (5, "e", None, "z")], ["id", "userName", "price", "dt"]),
        ("azm", [(2, "b")], ["id", "v"]),
    ]:
        ours = pq.read_table(os.path.join(work, name + ".parquet"))
        table = HudiTableBuilder.from_base_uri(f"az://hoodie/warehouse/{name}").with_storage_options(options).build()
        batches = table.read()
        theirs = pa.Table.from_batches(batches) if batches else pa.table({})
        every = ours.schema.names
        for what, got, exp in [
            (f"{name}: hudi-rs reads hoodie's rows and meta columns", rows(theirs, every), rows(ours, every)),
            (f"{name}: the rows the statements leave", rows(ours, cols), sorted(want, key=repr)),
        ]:
            if got == exp:
                print(f"ok   {what}")
            else:
                failed = True
                print(f"FAIL {what}: got {got}, want {exp}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    probe() if sys.argv[1] == "probe" else read(sys.argv[2])

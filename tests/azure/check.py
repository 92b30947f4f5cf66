"""Azurite checks. `probe`: creates the test container and checks that the server refuses a
second create-if-absent (hoodie's commits rely on it). `read WORK`: hudi-rs reads the tables
hoodie wrote with the rows hoodie reads, meta columns included, and the rows are the ones the
statements leave."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "stores"))
from hudi_read import check_tables  # noqa: E402

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


def read(work):
    options = {"azure_storage_use_emulator": "true",
               "azure_storage_account_name": "devstoreaccount1",
               "azure_storage_account_key": os.environ["AZURE_STORAGE_ACCOUNT_KEY"]}
    cases = [
        ("azc", [(1, "a", 10.0, "x"), (2, "b", 20.0, "y"), (5, "e", None, "z")], ["id", "userName", "price", "dt"]),
        ("azm", [(2, "b")], ["id", "v"]),
    ]
    sys.exit(0 if check_tables("az://hoodie/warehouse", options, work, cases) else 1)


if __name__ == "__main__":
    probe() if sys.argv[1] == "probe" else read(sys.argv[2])

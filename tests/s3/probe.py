"""Creates the test bucket on the S3 server and checks that the server refuses a second
create-if-absent (PUT with If-None-Match: *), which hoodie's commits rely on."""
import sys

import boto3
import botocore

s3 = boto3.client("s3", endpoint_url=sys.argv[1], aws_access_key_id="test",
                  aws_secret_access_key="test", region_name="us-east-1")
s3.create_bucket(Bucket="hoodie")
s3.put_object(Bucket="hoodie", Key="probe", Body=b"one", IfNoneMatch="*")
try:
    s3.put_object(Bucket="hoodie", Key="probe", Body=b"two", IfNoneMatch="*")
except botocore.exceptions.ClientError as e:
    if e.response["ResponseMetadata"]["HTTPStatusCode"] == 412:
        print("ok   the S3 server refuses a second create-if-absent")
        sys.exit(0)
    raise
print("FAIL the S3 server does not refuse a second create-if-absent")
sys.exit(1)

-- a table on the S3 server: every kind of DML, then reads (run.sh compares hudi-rs's read)
CREATE TABLE s3t (id INT, name STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi
  PARTITIONED BY (dt) LOCATION 's3://hoodie/warehouse/s3t'
  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts');
INSERT INTO s3t VALUES (1, 'a', 1.5, 1, 'x'), (2, NULL, 2.5, 1, 'y'), (3, 'c', NULL, 1, 'x');
UPDATE s3t SET price = 10 WHERE id = 1;
DELETE FROM s3t WHERE id = 3;
MERGE INTO s3t t USING (SELECT 2 AS id, 'b' AS name, 20.0 AS price, 2 AS ts, 'y' AS dt
                        UNION ALL SELECT 4, 'd', 4.0, 1, 'z') s ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
CREATE TABLE s3m (id INT, v STRING) USING hudi LOCATION 's3://hoodie/warehouse/s3m'
  TBLPROPERTIES (type = 'mor', primaryKey = 'id', 'hoodie.compact.inline' = 'false');
INSERT INTO s3m VALUES (1, 'a'), (2, NULL);
UPDATE s3m SET v = 'b' WHERE id = 2;
DELETE FROM s3m WHERE id = 1;
SELECT id, name, price, dt FROM s3t ORDER BY id;
SELECT id, v FROM s3m ORDER BY id;

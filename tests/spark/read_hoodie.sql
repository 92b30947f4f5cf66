-- Tables hoodie writes for tests/spark/read_hoodie.py, which reads each with Spark Hudi and with
-- hoodie (snapshot, read-optimized, time travel, incremental and CDC) and compares the rows.
-- read_hoodie.py adds a savepoint and a restore to the restored_* tables after this script.

-- every column type, NULLs in every column (the partition column too), a mixed-case column,
-- event-time ordering: inserts, upserts (an older ordering value loses), UPDATE, DELETE, MERGE
CREATE TABLE cow_ev (Id INT, userName STRING, amount DOUBLE, price DECIMAL(10, 2), d DATE,
  t TIMESTAMP, flag BOOLEAN, big BIGINT, info STRUCT<a: STRING, b: INT>, ts BIGINT, dt STRING)
  USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'Id', preCombineField = 'ts');
INSERT INTO cow_ev VALUES
  (1, 'ann', 1.5, 10.25, DATE '2024-01-01', TIMESTAMP '2024-01-01 10:00:00.123456', true, 100, named_struct('a', 'x', 'b', 1), 1, 'p1'),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, NULL),
  (3, 'Cid', -2.25, -3.10, DATE '1999-12-31', TIMESTAMP '1999-12-31 23:59:59', false, -5, named_struct('a', NULL, 'b', 3), 1, 'p2'),
  (4, 'dan', 0.0, 0.00, DATE '2024-02-29', TIMESTAMP '2024-02-29 00:00:00', true, 9000000000, named_struct('a', 'w', 'b', NULL), 1, 'p1');
INSERT INTO cow_ev VALUES
  (1, 'ann2', 2.5, 20.50, DATE '2024-01-02', TIMESTAMP '2024-01-02 10:00:00', false, 101, named_struct('a', 'y', 'b', 2), 2, 'p1'),
  (3, 'old', 9.0, 9.00, NULL, NULL, NULL, NULL, NULL, 0, 'p2'),
  (5, 'eve', 5.5, 55.55, DATE '2024-05-05', TIMESTAMP '2024-05-05 05:05:05.5', NULL, 5, named_struct('a', 'v', 'b', 5), 1, NULL);
UPDATE cow_ev SET userName = NULL, price = 99.99, info = named_struct('a', 'u', 'b', 7) WHERE Id = 4;
DELETE FROM cow_ev WHERE Id = 3;
MERGE INTO cow_ev USING (SELECT 2 AS Id, 'bob' AS userName, 2.0 AS amount, CAST(2.00 AS DECIMAL(10, 2)) AS price,
    DATE '2024-03-03' AS d, TIMESTAMP '2024-03-03 03:03:03' AS t, true AS flag, CAST(2 AS BIGINT) AS big,
    named_struct('a', 'b', 'b', 2) AS info, CAST(5 AS BIGINT) AS ts, CAST(NULL AS STRING) AS dt
  UNION ALL SELECT 6, 'fay', NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 'p3') s
  ON cow_ev.Id = s.Id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;

-- the same on merge-on-read, no compaction: changes in log files (Avro data and delete blocks)
CREATE TABLE mor_ev (Id INT, userName STRING, amount DOUBLE, price DECIMAL(10, 2), d DATE,
  t TIMESTAMP, flag BOOLEAN, big BIGINT, info STRUCT<a: STRING, b: INT>, ts BIGINT, dt STRING)
  USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (type = 'mor', primaryKey = 'Id', preCombineField = 'ts', hoodie.compact.inline = 'false');
INSERT INTO mor_ev VALUES
  (1, 'ann', 1.5, 10.25, DATE '2024-01-01', TIMESTAMP '2024-01-01 10:00:00.123456', true, 100, named_struct('a', 'x', 'b', 1), 1, 'p1'),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, NULL),
  (3, 'Cid', -2.25, -3.10, DATE '1999-12-31', TIMESTAMP '1999-12-31 23:59:59', false, -5, named_struct('a', NULL, 'b', 3), 1, 'p2'),
  (4, 'dan', 0.0, 0.00, DATE '2024-02-29', TIMESTAMP '2024-02-29 00:00:00', true, 9000000000, named_struct('a', 'w', 'b', NULL), 1, 'p1');
UPDATE mor_ev SET userName = NULL, price = 99.99, info = named_struct('a', 'u', 'b', 7) WHERE Id IN (1, 2);
DELETE FROM mor_ev WHERE Id = 3;
INSERT INTO mor_ev VALUES
  (1, 'ann2', 2.5, 20.50, DATE '2024-01-02', TIMESTAMP '2024-01-02 10:00:00', false, 101, named_struct('a', 'y', 'b', 2), 2, 'p1'),
  (4, 'old', 9.0, 9.00, NULL, NULL, NULL, NULL, NULL, 0, 'p1'),
  (5, 'eve', 5.5, 55.55, DATE '2024-05-05', TIMESTAMP '2024-05-05 05:05:05.5', NULL, 5, named_struct('a', 'v', 'b', 5), 1, NULL);
MERGE INTO mor_ev USING (SELECT 2 AS Id, 'bob' AS userName, 2.0 AS amount, CAST(2.00 AS DECIMAL(10, 2)) AS price,
    DATE '2024-03-03' AS d, TIMESTAMP '2024-03-03 03:03:03' AS t, true AS flag, CAST(2 AS BIGINT) AS big,
    named_struct('a', 'b', 'b', 2) AS info, CAST(5 AS BIGINT) AS ts, CAST(NULL AS STRING) AS dt, 'u' AS op
  UNION ALL SELECT 4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 9, 'p1', 'd'
  UNION ALL SELECT 6, 'fay', NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 'p3', 'i') s
  ON mor_ev.Id = s.Id
  WHEN MATCHED AND s.op = 'd' THEN DELETE
  WHEN MATCHED THEN UPDATE SET Id = s.Id, userName = s.userName, amount = s.amount, price = s.price, d = s.d,
    t = s.t, flag = s.flag, big = s.big, info = s.info, ts = s.ts, dt = s.dt
  WHEN NOT MATCHED THEN INSERT (Id, userName, amount, price, d, t, flag, big, info, ts, dt)
    VALUES (s.Id, s.userName, s.amount, s.price, s.d, s.t, s.flag, s.big, s.info, s.ts, s.dt);

-- merge-on-read under commit-time ordering, MERGE INTO that assigns some columns: on version 9 partial-update blocks
-- (IS_PARTIAL, the meta columns and the assigned ones), Avro and Parquet, two column sets one
-- over the other, then a whole UPDATE and a partial MERGE over it; version 6 logs whole records
CREATE TABLE mor_partial (Id INT, Name STRING, price DOUBLE, info STRUCT<a: STRING, b: INT>, ts BIGINT, dt STRING)
  USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (type = 'mor', primaryKey = 'Id', preCombineField = 'ts', hoodie.compact.inline = 'false',
    hoodie.record.merge.mode = 'COMMIT_TIME_ORDERING');
CREATE TABLE mor_partial_pq (Id INT, Name STRING, price DOUBLE, info STRUCT<a: STRING, b: INT>, ts BIGINT, dt STRING)
  USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (type = 'mor', primaryKey = 'Id', preCombineField = 'ts', hoodie.compact.inline = 'false',
    hoodie.logfile.data.block.format = 'parquet', hoodie.record.merge.mode = 'COMMIT_TIME_ORDERING');
INSERT INTO mor_partial VALUES (1, 'a', 1.5, named_struct('a', 'x', 'b', 1), 1, 'p1'),
  (2, NULL, NULL, NULL, 1, 'p1'), (3, 'c', 3.0, named_struct('a', NULL, 'b', 3), 1, 'p2');
INSERT INTO mor_partial_pq SELECT Id, Name, price, info, ts, dt FROM mor_partial;
MERGE INTO mor_partial USING (SELECT 1 AS Id, 'A' AS Name, CAST(2 AS BIGINT) AS ts, 'p1' AS dt
  UNION ALL SELECT 2, NULL, 2, 'p1' UNION ALL SELECT 3, 'C', 2, 'p2') s
  ON mor_partial.Id = s.Id WHEN MATCHED THEN UPDATE SET Id = s.Id, Name = s.Name, ts = s.ts;
MERGE INTO mor_partial_pq USING (SELECT 1 AS Id, 'A' AS Name, CAST(2 AS BIGINT) AS ts, 'p1' AS dt
  UNION ALL SELECT 2, NULL, 2, 'p1' UNION ALL SELECT 3, 'C', 2, 'p2') s
  ON mor_partial_pq.Id = s.Id WHEN MATCHED THEN UPDATE SET Id = s.Id, Name = s.Name, ts = s.ts;
MERGE INTO mor_partial USING (SELECT 1 AS Id, 9.5 AS price, named_struct('a', 'y', 'b', 9) AS info,
    CAST(3 AS BIGINT) AS ts, 'p1' AS dt UNION ALL SELECT 3, NULL, NULL, 4, 'p2') s
  ON mor_partial.Id = s.Id WHEN MATCHED THEN UPDATE SET Id = s.Id, price = s.price, info = s.info, ts = s.ts;
MERGE INTO mor_partial_pq USING (SELECT 1 AS Id, 9.5 AS price, named_struct('a', 'y', 'b', 9) AS info,
    CAST(3 AS BIGINT) AS ts, 'p1' AS dt UNION ALL SELECT 3, NULL, NULL, 4, 'p2') s
  ON mor_partial_pq.Id = s.Id WHEN MATCHED THEN UPDATE SET Id = s.Id, price = s.price, info = s.info, ts = s.ts;
UPDATE mor_partial SET Name = 'u', price = 0.5, ts = 5 WHERE Id = 2;
UPDATE mor_partial_pq SET Name = 'u', price = 0.5, ts = 5 WHERE Id = 2;
MERGE INTO mor_partial USING (SELECT 2 AS Id, 'v' AS Name, CAST(6 AS BIGINT) AS ts, 'p1' AS dt) s
  ON mor_partial.Id = s.Id WHEN MATCHED THEN UPDATE SET Id = s.Id, Name = s.Name, ts = s.ts;
MERGE INTO mor_partial_pq USING (SELECT 2 AS Id, 'v' AS Name, CAST(6 AS BIGINT) AS ts, 'p1' AS dt) s
  ON mor_partial_pq.Id = s.Id WHEN MATCHED THEN UPDATE SET Id = s.Id, Name = s.Name, ts = s.ts;

-- merge-on-read with Parquet data blocks (hoodie.logfile.data.block.format = parquet): every
-- column type and NULLs through the PARQUET_DATA blocks of the upsert, UPDATE and MERGE
CREATE TABLE mor_pq (Id INT, userName STRING, amount DOUBLE, price DECIMAL(10, 2), d DATE,
  t TIMESTAMP, flag BOOLEAN, big BIGINT, info STRUCT<a: STRING, b: INT>, ts BIGINT, dt STRING)
  USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (type = 'mor', primaryKey = 'Id', preCombineField = 'ts', hoodie.compact.inline = 'false',
    hoodie.logfile.data.block.format = 'parquet', hoodie.spark.sql.insert.into.operation = 'upsert');
INSERT INTO mor_pq VALUES
  (1, 'ann', 1.5, 10.25, DATE '2024-01-01', TIMESTAMP '2024-01-01 10:00:00.123456', true, 100, named_struct('a', 'x', 'b', 1), 1, 'p1'),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, NULL),
  (3, 'Cid', -2.25, -3.10, DATE '1999-12-31', TIMESTAMP '1999-12-31 23:59:59', false, -5, named_struct('a', NULL, 'b', 3), 1, 'p2');
UPDATE mor_pq SET userName = NULL, price = 99.99, info = named_struct('a', 'u', 'b', 7) WHERE Id IN (1, 2);
DELETE FROM mor_pq WHERE Id = 3;
INSERT INTO mor_pq VALUES
  (1, 'ann2', 2.5, 20.50, DATE '2024-01-02', TIMESTAMP '2024-01-02 10:00:00', false, 101, named_struct('a', 'y', 'b', 2), 2, 'p1'),
  (2, 'old', 9.0, 9.00, NULL, NULL, NULL, NULL, NULL, 0, NULL);
MERGE INTO mor_pq USING (SELECT 2 AS Id, 'bob' AS userName, 2.0 AS amount, CAST(2.00 AS DECIMAL(10, 2)) AS price,
    DATE '2024-03-03' AS d, TIMESTAMP '2024-03-03 03:03:03' AS t, true AS flag, CAST(2 AS BIGINT) AS big,
    named_struct('a', 'b', 'b', 2) AS info, CAST(5 AS BIGINT) AS ts, CAST(NULL AS STRING) AS dt) s
  ON mor_pq.Id = s.Id WHEN MATCHED THEN UPDATE SET *;

-- merge-on-read, compacted inline after 3 deltacommits, then logs on the compacted slices
CREATE TABLE mor_compacted (id INT, v STRING, n BIGINT, ts BIGINT, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
                 hoodie.compact.inline.max.delta.commits = '3');
INSERT INTO mor_compacted VALUES (1, 'a', 1, 1, 'x'), (2, 'b', NULL, 1, 'x'), (3, NULL, 3, 1, 'y');
UPDATE mor_compacted SET v = 'B', n = 20 WHERE id = 2;
DELETE FROM mor_compacted WHERE id = 3;
UPDATE mor_compacted SET v = 'A' WHERE id = 1;
INSERT INTO mor_compacted VALUES (2, 'b3', 2, 3, 'x'), (4, 'd', 4, 1, 'y');

-- multi-level partitions, composite keys, commit-time ordering (no ordering field)
CREATE TABLE cow_multi (id INT, k STRING, v STRING, y INT, m STRING) USING hudi PARTITIONED BY (y, m)
  TBLPROPERTIES (primaryKey = 'id,k');
INSERT INTO cow_multi VALUES (1, 'a', 'one', 2024, '01'), (2, 'b', NULL, 2024, '02'), (3, 'c', 'three', NULL, '01'),
  (4, 'd', 'four', 2025, NULL);
INSERT INTO cow_multi VALUES (1, 'a', 'uno', 2024, '01'), (5, 'e', 'five', 2025, '01');
UPDATE cow_multi SET v = 'TWO' WHERE id = 2;
DELETE FROM cow_multi WHERE k = 'c';
CREATE TABLE mor_multi (id INT, k STRING, v STRING, y INT, m STRING) USING hudi PARTITIONED BY (y, m)
  TBLPROPERTIES (type = 'mor', primaryKey = 'id,k', hoodie.compact.inline = 'false');
INSERT INTO mor_multi VALUES (1, 'a', 'one', 2024, '01'), (2, 'b', NULL, 2024, '02'), (3, 'c', 'three', NULL, '01'),
  (4, 'd', 'four', 2025, NULL);
SET hoodie.datasource.write.operation = 'upsert';
INSERT INTO mor_multi VALUES (1, 'a', 'uno', 2024, '01'), (5, 'e', 'five', 2025, '01');
RESET hoodie.datasource.write.operation;
UPDATE mor_multi SET v = 'TWO' WHERE id = 2;
DELETE FROM mor_multi WHERE k = 'c';

-- non-partitioned, a struct field as record key and ordering field
CREATE TABLE cow_nested (id INT, info STRUCT<k: STRING, o: INT>, v STRING) USING hudi
  TBLPROPERTIES (primaryKey = 'info.k', preCombineField = 'info.o');
INSERT INTO cow_nested VALUES (1, named_struct('k', 'a', 'o', 1), 'one'), (2, named_struct('k', 'b', 'o', 1), NULL);
INSERT INTO cow_nested VALUES (3, named_struct('k', 'a', 'o', 2), 'uno'), (4, named_struct('k', 'b', 'o', 0), 'old'),
  (5, named_struct('k', 'c', 'o', 1), 'three');
DELETE FROM cow_nested WHERE info.k = 'c';
CREATE TABLE mor_nested (id INT, info STRUCT<k: STRING, o: INT>, v STRING) USING hudi
  TBLPROPERTIES (type = 'mor', primaryKey = 'info.k', preCombineField = 'info.o', hoodie.compact.inline = 'false');
INSERT INTO mor_nested VALUES (1, named_struct('k', 'a', 'o', 1), 'one'), (2, named_struct('k', 'b', 'o', 1), NULL),
  (5, named_struct('k', 'c', 'o', 1), 'three');
INSERT INTO mor_nested VALUES (3, named_struct('k', 'a', 'o', 2), 'uno'), (4, named_struct('k', 'b', 'o', 0), 'old');
UPDATE mor_nested SET v = 'B' WHERE info.k = 'b';
DELETE FROM mor_nested WHERE info.k = 'c';

-- non-partitioned, simple key, commit-time ordering
CREATE TABLE cow_np (id INT, v STRING, n DOUBLE) USING hudi TBLPROPERTIES (primaryKey = 'id');
INSERT INTO cow_np VALUES (1, 'a', 1.0), (2, NULL, NULL);
INSERT INTO cow_np VALUES (1, 'a2', 1.25), (3, 'c', 3.0);
UPDATE cow_np SET n = n * 2;

-- bucket index, 4 buckets
CREATE TABLE bkt_cow (id INT, v STRING, ts INT, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', hoodie.index.type = 'BUCKET',
                 hoodie.bucket.index.num.buckets = '4');
INSERT INTO bkt_cow VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'x'), (3, 'c', 1, 'x'), (5, NULL, 1, NULL);
INSERT INTO bkt_cow VALUES (1, 'a2', 2, 'x'), (10, 'j', 1, 'x'), (3, 'c0', 0, 'x');
DELETE FROM bkt_cow WHERE id = 2;
CREATE TABLE bkt_mor (id INT, v STRING, ts INT, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts', hoodie.index.type = 'BUCKET',
                 hoodie.bucket.index.num.buckets = '4', hoodie.compact.inline = 'false');
INSERT INTO bkt_mor VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'x'), (3, 'c', 1, 'x'), (5, NULL, 1, NULL);
INSERT INTO bkt_mor VALUES (1, 'a2', 2, 'x'), (10, 'j', 1, 'x'), (3, 'c0', 0, 'x');
DELETE FROM bkt_mor WHERE id = 2;

-- files without the partition columns
CREATE TABLE dpc_cow (id INT, v STRING, dt STRING, hr INT) USING hudi PARTITIONED BY (dt, hr)
  TBLPROPERTIES (primaryKey = 'id', hoodie.datasource.write.drop.partition.columns = 'true');
INSERT INTO dpc_cow VALUES (1, 'a', 'x', 1), (2, 'b', 'y', 2), (3, NULL, NULL, NULL);
UPDATE dpc_cow SET v = 'B' WHERE id = 2;
CREATE TABLE dpc_mor (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (type = 'mor', primaryKey = 'id', hoodie.datasource.write.drop.partition.columns = 'true',
                 hoodie.compact.inline = 'false');
INSERT INTO dpc_mor VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, NULL, NULL);
UPDATE dpc_mor SET v = 'B' WHERE id = 2;
DELETE FROM dpc_mor WHERE id = 1;

-- CDC in each logging mode, on both table types: insert, update, delete, merge, overwrite
CREATE TABLE cdc_cow_ok (id INT, name STRING, price DECIMAL(10, 2), d DATE, t TIMESTAMP, ts BIGINT, dt STRING)
  USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts',
  'hoodie.table.cdc.enabled' = 'true', 'hoodie.table.cdc.supplemental.logging.mode' = 'OP_KEY_ONLY');
CREATE TABLE cdc_cow_db (id INT, name STRING, price DECIMAL(10, 2), d DATE, t TIMESTAMP, ts BIGINT, dt STRING)
  USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts',
  'hoodie.table.cdc.enabled' = 'true', 'hoodie.table.cdc.supplemental.logging.mode' = 'DATA_BEFORE');
CREATE TABLE cdc_cow_dba (id INT, name STRING, price DECIMAL(10, 2), d DATE, t TIMESTAMP, ts BIGINT, dt STRING)
  USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts',
  'hoodie.table.cdc.enabled' = 'true', 'hoodie.table.cdc.supplemental.logging.mode' = 'DATA_BEFORE_AFTER');
CREATE TABLE cdc_mor_ok (id INT, name STRING, price DECIMAL(10, 2), d DATE, t TIMESTAMP, ts BIGINT, dt STRING)
  USING hudi PARTITIONED BY (dt) TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
  hoodie.compact.inline = 'false',
  'hoodie.table.cdc.enabled' = 'true', 'hoodie.table.cdc.supplemental.logging.mode' = 'OP_KEY_ONLY');
CREATE TABLE cdc_mor_db (id INT, name STRING, price DECIMAL(10, 2), d DATE, t TIMESTAMP, ts BIGINT, dt STRING)
  USING hudi PARTITIONED BY (dt) TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
  hoodie.compact.inline = 'false',
  'hoodie.table.cdc.enabled' = 'true', 'hoodie.table.cdc.supplemental.logging.mode' = 'DATA_BEFORE');
CREATE TABLE cdc_mor_dba (id INT, name STRING, price DECIMAL(10, 2), d DATE, t TIMESTAMP, ts BIGINT, dt STRING)
  USING hudi PARTITIONED BY (dt) TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
  hoodie.compact.inline = 'false',
  'hoodie.table.cdc.enabled' = 'true', 'hoodie.table.cdc.supplemental.logging.mode' = 'DATA_BEFORE_AFTER');
INSERT INTO cdc_cow_ok VALUES (1, 'a', 1.50, DATE '2024-01-01', TIMESTAMP '2024-01-01 01:02:03.456789', 1, 'x'),
  (2, NULL, NULL, NULL, NULL, 1, NULL), (3, 'c', -3.25, DATE '2023-03-03', TIMESTAMP '2023-03-03 00:00:00', 1, 'y');
UPDATE cdc_cow_ok SET name = 'A2', price = 1.75 WHERE id = 1;
INSERT INTO cdc_cow_ok VALUES (4, 'd', 4.00, NULL, TIMESTAMP '2024-04-04 04:04:04', 1, 'y'), (3, 'c_old', 0.00, NULL, NULL, 0, 'y'),
  (2, 'b', 2.00, DATE '2024-02-02', NULL, 2, NULL);
DELETE FROM cdc_cow_ok WHERE id = 3;
MERGE INTO cdc_cow_ok USING (SELECT 1 AS id, 'a3' AS name, CAST(NULL AS DECIMAL(10, 2)) AS price, DATE '2024-01-03' AS d,
    CAST(NULL AS TIMESTAMP) AS t, CAST(3 AS BIGINT) AS ts, 'x' AS dt
  UNION ALL SELECT 5, 'e', 5.00, NULL, NULL, 1, 'x') s
  ON cdc_cow_ok.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
INSERT OVERWRITE cdc_cow_ok PARTITION (dt = 'y') VALUES (6, 'f', 6.00, NULL, NULL, 1);
INSERT INTO cdc_cow_db VALUES (1, 'a', 1.50, DATE '2024-01-01', TIMESTAMP '2024-01-01 01:02:03.456789', 1, 'x'),
  (2, NULL, NULL, NULL, NULL, 1, NULL), (3, 'c', -3.25, DATE '2023-03-03', TIMESTAMP '2023-03-03 00:00:00', 1, 'y');
UPDATE cdc_cow_db SET name = 'A2', price = 1.75 WHERE id = 1;
INSERT INTO cdc_cow_db VALUES (4, 'd', 4.00, NULL, TIMESTAMP '2024-04-04 04:04:04', 1, 'y'), (3, 'c_old', 0.00, NULL, NULL, 0, 'y'),
  (2, 'b', 2.00, DATE '2024-02-02', NULL, 2, NULL);
DELETE FROM cdc_cow_db WHERE id = 3;
MERGE INTO cdc_cow_db USING (SELECT 1 AS id, 'a3' AS name, CAST(NULL AS DECIMAL(10, 2)) AS price, DATE '2024-01-03' AS d,
    CAST(NULL AS TIMESTAMP) AS t, CAST(3 AS BIGINT) AS ts, 'x' AS dt
  UNION ALL SELECT 5, 'e', 5.00, NULL, NULL, 1, 'x') s
  ON cdc_cow_db.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
INSERT OVERWRITE cdc_cow_db PARTITION (dt = 'y') VALUES (6, 'f', 6.00, NULL, NULL, 1);
INSERT INTO cdc_cow_dba VALUES (1, 'a', 1.50, DATE '2024-01-01', TIMESTAMP '2024-01-01 01:02:03.456789', 1, 'x'),
  (2, NULL, NULL, NULL, NULL, 1, NULL), (3, 'c', -3.25, DATE '2023-03-03', TIMESTAMP '2023-03-03 00:00:00', 1, 'y');
UPDATE cdc_cow_dba SET name = 'A2', price = 1.75 WHERE id = 1;
INSERT INTO cdc_cow_dba VALUES (4, 'd', 4.00, NULL, TIMESTAMP '2024-04-04 04:04:04', 1, 'y'), (3, 'c_old', 0.00, NULL, NULL, 0, 'y'),
  (2, 'b', 2.00, DATE '2024-02-02', NULL, 2, NULL);
DELETE FROM cdc_cow_dba WHERE id = 3;
MERGE INTO cdc_cow_dba USING (SELECT 1 AS id, 'a3' AS name, CAST(NULL AS DECIMAL(10, 2)) AS price, DATE '2024-01-03' AS d,
    CAST(NULL AS TIMESTAMP) AS t, CAST(3 AS BIGINT) AS ts, 'x' AS dt
  UNION ALL SELECT 5, 'e', 5.00, NULL, NULL, 1, 'x') s
  ON cdc_cow_dba.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
INSERT OVERWRITE cdc_cow_dba PARTITION (dt = 'y') VALUES (6, 'f', 6.00, NULL, NULL, 1);
INSERT INTO cdc_mor_ok VALUES (1, 'a', 1.50, DATE '2024-01-01', TIMESTAMP '2024-01-01 01:02:03.456789', 1, 'x'),
  (2, NULL, NULL, NULL, NULL, 1, NULL), (3, 'c', -3.25, DATE '2023-03-03', TIMESTAMP '2023-03-03 00:00:00', 1, 'y');
UPDATE cdc_mor_ok SET name = 'A2', price = 1.75 WHERE id = 1;
INSERT INTO cdc_mor_ok VALUES (4, 'd', 4.00, NULL, TIMESTAMP '2024-04-04 04:04:04', 1, 'y'), (3, 'c_old', 0.00, NULL, NULL, 0, 'y'),
  (2, 'b', 2.00, DATE '2024-02-02', NULL, 2, NULL);
DELETE FROM cdc_mor_ok WHERE id = 3;
MERGE INTO cdc_mor_ok USING (SELECT 1 AS id, 'a3' AS name, CAST(NULL AS DECIMAL(10, 2)) AS price, DATE '2024-01-03' AS d,
    CAST(NULL AS TIMESTAMP) AS t, CAST(3 AS BIGINT) AS ts, 'x' AS dt
  UNION ALL SELECT 5, 'e', 5.00, NULL, NULL, 1, 'x') s
  ON cdc_mor_ok.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
INSERT OVERWRITE cdc_mor_ok PARTITION (dt = 'y') VALUES (6, 'f', 6.00, NULL, NULL, 1);
INSERT INTO cdc_mor_db VALUES (1, 'a', 1.50, DATE '2024-01-01', TIMESTAMP '2024-01-01 01:02:03.456789', 1, 'x'),
  (2, NULL, NULL, NULL, NULL, 1, NULL), (3, 'c', -3.25, DATE '2023-03-03', TIMESTAMP '2023-03-03 00:00:00', 1, 'y');
UPDATE cdc_mor_db SET name = 'A2', price = 1.75 WHERE id = 1;
INSERT INTO cdc_mor_db VALUES (4, 'd', 4.00, NULL, TIMESTAMP '2024-04-04 04:04:04', 1, 'y'), (3, 'c_old', 0.00, NULL, NULL, 0, 'y'),
  (2, 'b', 2.00, DATE '2024-02-02', NULL, 2, NULL);
DELETE FROM cdc_mor_db WHERE id = 3;
MERGE INTO cdc_mor_db USING (SELECT 1 AS id, 'a3' AS name, CAST(NULL AS DECIMAL(10, 2)) AS price, DATE '2024-01-03' AS d,
    CAST(NULL AS TIMESTAMP) AS t, CAST(3 AS BIGINT) AS ts, 'x' AS dt
  UNION ALL SELECT 5, 'e', 5.00, NULL, NULL, 1, 'x') s
  ON cdc_mor_db.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
INSERT OVERWRITE cdc_mor_db PARTITION (dt = 'y') VALUES (6, 'f', 6.00, NULL, NULL, 1);
INSERT INTO cdc_mor_dba VALUES (1, 'a', 1.50, DATE '2024-01-01', TIMESTAMP '2024-01-01 01:02:03.456789', 1, 'x'),
  (2, NULL, NULL, NULL, NULL, 1, NULL), (3, 'c', -3.25, DATE '2023-03-03', TIMESTAMP '2023-03-03 00:00:00', 1, 'y');
UPDATE cdc_mor_dba SET name = 'A2', price = 1.75 WHERE id = 1;
INSERT INTO cdc_mor_dba VALUES (4, 'd', 4.00, NULL, TIMESTAMP '2024-04-04 04:04:04', 1, 'y'), (3, 'c_old', 0.00, NULL, NULL, 0, 'y'),
  (2, 'b', 2.00, DATE '2024-02-02', NULL, 2, NULL);
DELETE FROM cdc_mor_dba WHERE id = 3;
MERGE INTO cdc_mor_dba USING (SELECT 1 AS id, 'a3' AS name, CAST(NULL AS DECIMAL(10, 2)) AS price, DATE '2024-01-03' AS d,
    CAST(NULL AS TIMESTAMP) AS t, CAST(3 AS BIGINT) AS ts, 'x' AS dt
  UNION ALL SELECT 5, 'e', 5.00, NULL, NULL, 1, 'x') s
  ON cdc_mor_dba.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
INSERT OVERWRITE cdc_mor_dba PARTITION (dt = 'y') VALUES (6, 'f', 6.00, NULL, NULL, 1);

-- cleaning (automatic, two commits retained): old file slices deleted, clean instants written
CREATE TABLE cleaned_cow (id INT, v STRING, ts BIGINT, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.cleaner.commits.retained' = '2');
INSERT INTO cleaned_cow VALUES (1, 'a', 1, 'x'), (2, NULL, 1, 'x'), (3, 'c', 1, 'y');
UPDATE cleaned_cow SET v = 'a2' WHERE id = 1;
UPDATE cleaned_cow SET v = 'b2' WHERE id = 2;
DELETE FROM cleaned_cow WHERE id = 3;
INSERT INTO cleaned_cow VALUES (4, 'd', 1, 'y'), (1, 'a3', 2, 'x');
UPDATE cleaned_cow SET ts = 5 WHERE dt = 'x';
CREATE TABLE cleaned_mor (id INT, v STRING) USING hudi
  TBLPROPERTIES (type = 'mor', primaryKey = 'id', 'hoodie.compact.inline.max.delta.commits' = '2',
                 'hoodie.cleaner.commits.retained' = '2');
INSERT INTO cleaned_mor VALUES (1, 'one'), (2, NULL), (3, 'three');
UPDATE cleaned_mor SET v = 'ONE' WHERE id = 1;
UPDATE cleaned_mor SET v = 'TWO' WHERE id = 2;
DELETE FROM cleaned_mor WHERE id = 3;
UPDATE cleaned_mor SET v = 'uno' WHERE id = 1;
INSERT INTO cleaned_mor VALUES (4, 'four');
UPDATE cleaned_mor SET v = 'dos' WHERE id = 2;

-- archival: the oldest instants moved to .hoodie/archived/
CREATE TABLE archived_cow (id INT, v STRING, ts BIGINT, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.cleaner.commits.retained' = '1',
                 'hoodie.keep.min.commits' = '2', 'hoodie.keep.max.commits' = '3');
INSERT INTO archived_cow VALUES (1, 'a', 1, 'x'), (2, NULL, 1, 'y');
INSERT INTO archived_cow VALUES (3, 'c', 1, 'x');
UPDATE archived_cow SET v = 'A' WHERE id = 1;
DELETE FROM archived_cow WHERE id = 3;
INSERT INTO archived_cow VALUES (4, 'd', 1, 'z');
INSERT INTO archived_cow VALUES (5, 'e', 1, 'z');
UPDATE archived_cow SET v = 'E' WHERE id = 5;
CREATE TABLE archived_mor (id INT, v STRING) USING hudi
  TBLPROPERTIES (type = 'mor', primaryKey = 'id', 'hoodie.compact.inline.max.delta.commits' = '3',
                 'hoodie.cleaner.commits.retained' = '1', 'hoodie.keep.min.commits' = '2',
                 'hoodie.keep.max.commits' = '3');
INSERT INTO archived_mor VALUES (1, 'one'), (2, NULL), (3, 'three');
UPDATE archived_mor SET v = 'ONE' WHERE id = 1;
UPDATE archived_mor SET v = 'TWO' WHERE id = 2;
DELETE FROM archived_mor WHERE id = 3;
UPDATE archived_mor SET v = 'uno' WHERE id = 1;
INSERT INTO archived_mor VALUES (4, 'four');
UPDATE archived_mor SET v = 'dos' WHERE id = 2;
INSERT INTO archived_mor VALUES (5, 'five');
CREATE TABLE archived_nc (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (primaryKey = 'id', 'hoodie.clean.automatic' = 'false',
                 'hoodie.cleaner.commits.retained' = '1', 'hoodie.keep.min.commits' = '2',
                 'hoodie.keep.max.commits' = '3');
INSERT INTO archived_nc VALUES (1, 'a', 'x'), (2, 'b', 'y');
UPDATE archived_nc SET v = 'A' WHERE id = 1;
INSERT INTO archived_nc VALUES (3, NULL, 'x');
UPDATE archived_nc SET v = 'AA' WHERE id = 1;
DELETE FROM archived_nc WHERE id = 3;
INSERT INTO archived_nc VALUES (4, 'd', 'z');

-- ALTER TABLE ADD COLUMNS: files of both schemas
CREATE TABLE added_cow (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (primaryKey = 'id');
INSERT INTO added_cow VALUES (1, 'a', 'x'), (2, NULL, 'y');
ALTER TABLE added_cow ADD COLUMNS (n BIGINT, "Note" STRING);
INSERT INTO added_cow VALUES (3, 'c', 30, 'three', 'x');
UPDATE added_cow SET n = 20 WHERE id = 2;
CREATE TABLE added_mor (id INT, v STRING) USING hudi
  TBLPROPERTIES (type = 'mor', primaryKey = 'id', 'hoodie.compact.inline' = 'false');
INSERT INTO added_mor VALUES (1, 'a'), (2, 'b');
ALTER TABLE added_mor ADD COLUMNS (n BIGINT);
UPDATE added_mor SET n = 10 WHERE id = 1;
INSERT INTO added_mor VALUES (3, 'c', 30);

-- INSERT OVERWRITE of a partition (static and dynamic) and of a whole table
CREATE TABLE ow_cow (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id');
INSERT INTO ow_cow VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, NULL, NULL);
INSERT OVERWRITE ow_cow PARTITION (dt = 'y') VALUES (4, 'd');
INSERT OVERWRITE ow_cow SELECT 5, 'e', CAST(NULL AS STRING);
CREATE TABLE ow_mor (id INT, v STRING) USING hudi TBLPROPERTIES (type = 'mor', primaryKey = 'id',
  hoodie.compact.inline = 'false');
INSERT INTO ow_mor VALUES (1, 'a'), (2, 'b');
UPDATE ow_mor SET v = 'B' WHERE id = 2;
INSERT OVERWRITE ow_mor VALUES (3, 'c');
UPDATE ow_mor SET v = 'C' WHERE id = 3;

-- ALTER TABLE DROP PARTITION and TRUNCATE: delete_partition replacecommits
CREATE TABLE dropped (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (primaryKey = 'id');
INSERT INTO dropped VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, NULL, 'z');
ALTER TABLE dropped DROP PARTITION (dt = 'y');
TRUNCATE TABLE dropped PARTITION (dt = 'z');
INSERT INTO dropped VALUES (4, 'd', 'y');
CREATE TABLE truncated_mor (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (type = 'mor', primaryKey = 'id', 'hoodie.compact.inline' = 'false');
INSERT INTO truncated_mor VALUES (1, 'a', 'x'), (2, 'b', 'y');
UPDATE truncated_mor SET v = 'B' WHERE id = 2;
TRUNCATE TABLE truncated_mor;
INSERT INTO truncated_mor VALUES (3, 'c', 'x');

-- savepoint and restore (read_hoodie.py savepoints the first commit, changes the table, restores
-- it to the savepoint)
CREATE TABLE restored_cow (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (primaryKey = 'id');
INSERT INTO restored_cow VALUES (1, 'a', 'x'), (2, NULL, 'y');
INSERT INTO restored_cow VALUES (3, 'c', 'x');
CREATE TABLE restored_mor (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (type = 'mor', primaryKey = 'id', 'hoodie.compact.inline' = 'false');
INSERT INTO restored_mor VALUES (1, 'a', 'x'), (2, NULL, 'y');
UPDATE restored_mor SET v = 'A' WHERE id = 1;

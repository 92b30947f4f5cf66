-- Tables the interop check reads with hudi-rs. Expected rows are in check.py. The tables with
-- an ordering field upsert on INSERT INTO (hoodie.spark.sql.insert.into.operation), as every
-- INSERT into them did before Hudi 1.1.
CREATE TABLE part_simple (id INT, name STRING, price DOUBLE, dt STRING) USING hudi
  PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id');
INSERT INTO part_simple VALUES (1, 'a1', 10.5, '2024-01-01'), (2, 'a2', 20.0, '2024-01-02');
INSERT INTO part_simple VALUES (3, 'a3', 30.25, '2024-01-01');

CREATE TABLE nonpart_complex (id INT, name STRING, qty BIGINT) USING hudi
  TBLPROPERTIES (primaryKey = 'id,name');
INSERT INTO nonpart_complex VALUES (1, 'x', 5), (2, 'y', 6);
INSERT INTO nonpart_complex VALUES (3, 'z', 7);

CREATE TABLE multi_part (id INT, v STRING, y INT, m INT) USING hudi
  PARTITIONED BY (y, m) TBLPROPERTIES (primaryKey = 'id', type = 'mor');
INSERT INTO multi_part VALUES (1, 'one', 2024, 1), (2, 'two', 2024, 2), (3, 'three', 2025, 1);

CREATE TABLE ctas_t USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id')
  AS SELECT id, name, dt FROM part_simple;

-- upserts: updated rows, an older ordering value that loses, a new row
CREATE TABLE ups (id INT, name STRING, ts BIGINT, dt STRING) USING hudi
  PARTITIONED BY (dt) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts');
INSERT INTO ups VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'x'), (3, 'c', 1, 'y');
INSERT INTO ups VALUES (1, 'a2', 2, 'x'), (4, 'd', 1, 'y'), (2, 'b_old', 0, 'x');

-- INSERT OVERWRITE of a partition and of a whole table (replacecommits)
CREATE TABLE ow (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id');
INSERT INTO ow VALUES (1, 'a', 'x'), (2, 'b', 'y');
INSERT OVERWRITE ow PARTITION (dt = 'y') VALUES (3, 'c');
CREATE TABLE owt (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id');
INSERT INTO owt VALUES (1, 'a');
INSERT OVERWRITE owt VALUES (2, 'b');

-- UPDATE and DELETE
CREATE TABLE ud (id INT, name STRING, ts BIGINT, dt STRING) USING hudi
  PARTITIONED BY (dt) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts');
INSERT INTO ud VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'x'), (3, 'c', 1, 'y'), (4, 'd', 1, 'y');
UPDATE ud SET name = 'B' WHERE id = 2;
DELETE FROM ud WHERE id IN (3, 1);
-- an UPDATE last: partition y's base file is then a spliced one (column chunks copied)
UPDATE ud SET name = 'D' WHERE id = 4;

-- MERGE INTO: update, delete and insert in one commit
CREATE TABLE mg (id INT, name STRING, ts BIGINT, dt STRING) USING hudi
  PARTITIONED BY (dt) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts');
INSERT INTO mg VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'x'), (3, 'c', 1, 'y');
MERGE INTO mg USING (SELECT * FROM (VALUES (1, 'a2', 2, 'x', 'u'), (2, 'b', 2, 'x', 'd'), (4, 'd', 1, 'y', 'i')) AS v(id, name, ts, dt, op)) s
  ON mg.id = s.id
  WHEN MATCHED AND s.op <> 'd' THEN UPDATE SET *
  WHEN MATCHED THEN DELETE
  WHEN NOT MATCHED THEN INSERT *;

-- MERGE INTO in 3 passes (hoodie.merge.join.passes): the same one commit
CREATE TABLE mgp (id INT, name STRING, ts BIGINT, dt STRING) USING hudi
  PARTITIONED BY (dt) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts');
INSERT INTO mgp SELECT CAST(id AS INT) AS id, concat('t', CAST(id AS STRING)) AS name, 1 AS ts,
  CASE WHEN id % 2 = 0 THEN 'x' ELSE 'y' END AS dt FROM (SELECT unnest(range(0, 100)) AS id);
SET hoodie.merge.join.passes = 3;
MERGE INTO mgp USING (SELECT CAST(id AS INT) AS id, concat('s', CAST(id AS STRING)) AS name, 2 AS ts,
    CASE WHEN id % 2 = 0 THEN 'x' ELSE 'y' END AS dt FROM (SELECT unnest(range(50, 150)) AS id)) s
  ON mgp.id = s.id
  WHEN MATCHED AND s.id % 10 <> 0 THEN UPDATE SET *
  WHEN MATCHED THEN DELETE
  WHEN NOT MATCHED THEN INSERT *;
RESET hoodie.merge.join.passes;

-- NULLs in every column (the partition column too), camelCase columns used in any case,
-- nested STRUCT / ARRAY / MAP columns, through INSERT, UPDATE, DELETE and MERGE
CREATE TABLE nn (Id INT, userName STRING, isActive BOOLEAN, nested STRUCT<a1: STRING, a2: INT>,
  tags ARRAY<STRING>, attrs MAP<STRING, INT>, Ts BIGINT, Dt STRING) USING hudi
  PARTITIONED BY (dt) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts');
INSERT INTO nn VALUES (1, 'a', true, named_struct('a1', 'x', 'a2', 1), ['t1', 't2'], MAP {'k': 1}, 1, 'p'),
  (2, NULL, NULL, NULL, NULL, NULL, 1, NULL), (3, 'c', false, named_struct('a1', NULL, 'a2', 3), [], MAP {'q': 3}, 1, 'p');
UPDATE nn SET username = 'b', tags = ['n'] WHERE ID = 2;
UPDATE nn SET NESTED = named_struct('a1', 'y', 'a2', nested.a2 + 1) WHERE isactive;
DELETE FROM nn WHERE id = 3;
MERGE INTO nn USING (SELECT 4 AS id, NULL AS username, true AS isactive, named_struct('a1', 'z', 'a2', 4) AS nested,
    ['m'] AS tags, MAP {'m': 4} AS attrs, 1 AS ts, CAST(NULL AS STRING) AS dt) s
  ON nn.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;

-- a BUCKET index: 4 buckets, records in the file group of their bucket
CREATE TABLE bkt (id INT, v STRING, ts INT, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts', hoodie.index.type = 'BUCKET',
                 hoodie.bucket.index.num.buckets = '4');
INSERT INTO bkt VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'x'), (3, 'c', 1, 'x'), (5, 'e', 1, 'x');
INSERT INTO bkt VALUES (1, 'a2', 2, 'x'), (10, 'j', 1, 'x');

-- hoodie.datasource.write.drop.partition.columns = true: files without the partition column
CREATE TABLE dpc (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (primaryKey = 'id', hoodie.datasource.write.drop.partition.columns = 'true');
INSERT INTO dpc VALUES (1, 'a', 'x'), (2, 'b', 'y');

-- merge-on-read: every DML kind, changes in log files; check.py compares hudi-rs's read of each
-- with hoodie's own (dumped by run.sh)
CREATE TABLE mor_part (id INT, name STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi
  PARTITIONED BY (dt) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', type = 'mor', primaryKey = 'id', preCombineField = 'ts');
INSERT INTO mor_part VALUES (1, 'a', 10.0, 100, 'd1'), (2, 'b', 20.0, 100, 'd1'), (3, NULL, NULL, 100, 'd2'),
  (4, 'd', 40.0, 100, 'd2');
UPDATE mor_part SET price = price * 2, name = NULL WHERE id IN (1, 3);
DELETE FROM mor_part WHERE id = 2;
-- an older ordering value loses; a newer one wins; a new key
INSERT INTO mor_part VALUES (3, 'c', 30.0, 50, 'd2'), (4, 'd2', 41.0, 150, 'd2'), (5, 'e', 50.0, 1, 'd1');
MERGE INTO mor_part USING (SELECT * FROM (VALUES (1, 'a2', 1.5, 200, 'd1', 'u'), (4, 'x', 0.0, 300, 'd2', 'd'),
    (6, 'f', 6.0, 1, 'd2', 'i'), (2, 'b2', 2.0, 1, 'd1', 'i')) AS v(id, name, price, ts, dt, op)) s
  ON mor_part.id = s.id
  WHEN MATCHED AND s.op <> 'd' THEN UPDATE SET *
  WHEN MATCHED THEN DELETE
  WHEN NOT MATCHED THEN INSERT *;

-- MERGE INTO that assigns some columns under commit-time ordering: partial-update log blocks on version 9 (IS_PARTIAL:
-- the meta columns and the assigned ones), two column sets one over the other
CREATE TABLE mor_partial (id INT, name STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi
  PARTITIONED BY (dt) TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
    hoodie.record.merge.mode = 'COMMIT_TIME_ORDERING');
INSERT INTO mor_partial VALUES (1, 'a', 10.0, 100, 'd1'), (2, NULL, NULL, 100, 'd1'), (3, 'c', 30.0, 100, 'd2');
MERGE INTO mor_partial USING (SELECT * FROM (VALUES (1, 'a2', 200, 'd1'), (2, 'b2', 200, 'd1'))
    AS v(id, name, ts, dt)) s
  ON mor_partial.id = s.id WHEN MATCHED THEN UPDATE SET id = s.id, name = s.name, ts = s.ts;
MERGE INTO mor_partial USING (SELECT * FROM (VALUES (1, 1.5, 300, 'd1'), (3, NULL, 300, 'd2'))
    AS v(id, price, ts, dt)) s
  ON mor_partial.id = s.id WHEN MATCHED THEN UPDATE SET id = s.id, price = s.price, ts = s.ts;

-- non-partitioned, composite key, commit-time ordering; then an overwrite of the whole table
CREATE TABLE mor_np (id INT, k STRING, v STRING) USING hudi TBLPROPERTIES (type = 'mor', primaryKey = 'id,k');
INSERT INTO mor_np VALUES (1, 'x', 'one'), (2, 'y', 'two'), (3, 'z', NULL);
UPDATE mor_np SET v = 'TWO' WHERE id = 2;
DELETE FROM mor_np WHERE k = 'z';
INSERT INTO mor_np VALUES (1, 'x', 'uno'), (4, 'w', 'four');
CREATE TABLE mor_ow (id INT, v STRING) USING hudi TBLPROPERTIES (type = 'mor', primaryKey = 'id');
INSERT INTO mor_ow VALUES (1, 'a'), (2, 'b');
UPDATE mor_ow SET v = 'B' WHERE id = 2;
INSERT OVERWRITE mor_ow VALUES (3, 'c');
-- the logs as Parquet data blocks (hoodie.logfile.data.block.format = parquet)
CREATE TABLE mor_pq (id INT, k STRING, v STRING, ts BIGINT) USING hudi
  TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
    hoodie.logfile.data.block.format = 'parquet', hoodie.spark.sql.insert.into.operation = 'upsert');
INSERT INTO mor_pq VALUES (1, 'x', 'one', 1), (2, NULL, 'two', 1), (3, 'z', NULL, 1);
UPDATE mor_pq SET v = 'TWO', k = NULL WHERE id = 2;
DELETE FROM mor_pq WHERE id = 3;
INSERT INTO mor_pq VALUES (1, 'x', 'uno', 2), (2, 'y', 'old', 0), (4, 'w', 'four', 1);

-- CDC logging: hudi-rs reads CDC tables as ordinary ones (it skips the .cdc logs beside the
-- base files); check.py compares its rows with hoodie's. cdc_mor's second insert fills the
-- small base-only file group (a rewrite, so a .cdc log in a merge-on-read slice), then logs
CREATE TABLE cdc_cow (id INT, name STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi
  PARTITIONED BY (dt) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true');
INSERT INTO cdc_cow VALUES (1, 'a', 10.0, 100, 'd1'), (2, NULL, 20.0, 100, 'd1'), (3, 'c', NULL, 100, 'd2');
UPDATE cdc_cow SET price = 11.0 WHERE id = 1;
DELETE FROM cdc_cow WHERE id = 3;
MERGE INTO cdc_cow USING (SELECT 2 AS id, 'b' AS name, 21.0 AS price, 200 AS ts, 'd1' AS dt UNION ALL
    SELECT 4, 'd', 40.0, 100, 'd2') s ON cdc_cow.id = s.id
  WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
CREATE TABLE cdc_mor (id INT, k STRING, v STRING) USING hudi
  TBLPROPERTIES (type = 'mor', primaryKey = 'id,k', 'hoodie.table.cdc.enabled' = 'true',
                 'hoodie.table.cdc.supplemental.logging.mode' = 'DATA_BEFORE');
INSERT INTO cdc_mor VALUES (1, 'x', 'one'), (2, 'y', NULL);
SET hoodie.datasource.write.operation = 'upsert';
INSERT INTO cdc_mor VALUES (3, 'z', 'three');
RESET hoodie.datasource.write.operation;
UPDATE cdc_mor SET v = 'TWO' WHERE id = 2;
DELETE FROM cdc_mor WHERE id = 1;

-- cleaning (automatic, two commits retained): old file slices deleted, clean instants written
CREATE TABLE cleaned_cow (id INT, v STRING, ts BIGINT, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts', 'hoodie.cleaner.commits.retained' = '2');
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

-- archival (two to three commits kept): the oldest instants moved to .hoodie/archived/; the
-- dt=y file group of archived_cow and archived_nc is never rewritten, so its base file's commit is
-- archived and readers take it as committed
CREATE TABLE archived_cow (id INT, v STRING, ts BIGINT, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts', 'hoodie.cleaner.commits.retained' = '1',
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
UPDATE archived_mor SET v = 'cuatro' WHERE id = 4;
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

-- ALTER TABLE ADD COLUMNS: files of both schemas; hudi-rs reads the added columns as NULL in
-- the older files
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

-- ALTER TABLE DROP PARTITION and TRUNCATE: delete_partition replacecommits
CREATE TABLE dropped (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (primaryKey = 'id');
INSERT INTO dropped VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, NULL, 'z');
ALTER TABLE dropped DROP PARTITION (dt = 'y');
TRUNCATE TABLE dropped PARTITION (dt = 'z');
INSERT INTO dropped VALUES (4, 'd', 'y');
CREATE TABLE truncated_mor (id INT, v STRING) USING hudi
  TBLPROPERTIES (type = 'mor', primaryKey = 'id', 'hoodie.compact.inline' = 'false');
INSERT INTO truncated_mor VALUES (1, 'a'), (2, 'b');
UPDATE truncated_mor SET v = 'B' WHERE id = 2;
TRUNCATE TABLE truncated_mor;
INSERT INTO truncated_mor VALUES (3, 'c');

-- savepoint and restore (run.sh savepoints the first commit, changes the table, restores it)
CREATE TABLE restored (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt)
  TBLPROPERTIES (type = 'mor', primaryKey = 'id', 'hoodie.compact.inline' = 'false');
INSERT INTO restored VALUES (1, 'a', 'x'), (2, NULL, 'y');

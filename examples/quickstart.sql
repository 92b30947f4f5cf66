-- hoodie quickstart: a Hudi table on local disk, written and read with SQL.
-- Run it with:  cargo run --release --bin hoodie -- -f examples/quickstart.sql

-- A partitioned copy-on-write table with a record key and an ordering field
-- (Hudi's Spark SQL dialect; the clauses may come in any order). Since Hudi 1.1 an INSERT INTO
-- inserts (duplicate keys are kept) unless the table or the session asks for upserts.
DROP TABLE IF EXISTS trips;
CREATE TABLE trips (
  uuid STRING,
  rider STRING,
  driver STRING,
  fare DOUBLE,
  ts BIGINT,
  city STRING
) USING hudi
PARTITIONED BY (city)
TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = 'cow',
               'hoodie.spark.sql.insert.into.operation' = 'upsert');

-- This table's INSERT INTO upserts: a key already stored is updated.
INSERT INTO trips VALUES
  ('334e26e9', 'rider-A', 'driver-K', 19.10, 1695159649087, 'san_francisco'),
  ('e96c4396', 'rider-B', 'driver-L', 27.70, 1695091554788, 'san_francisco'),
  ('9909a8b1', 'rider-C', 'driver-M', 33.90, 1695046462179, 'sao_paulo'),
  ('7a84095f', 'rider-D', 'driver-N', 34.15, 1695332066204, 'chennai');

-- A static partition insert (Spark's INSERT ... PARTITION).
INSERT INTO trips PARTITION (city = 'chennai') VALUES ('c8abbe79', 'rider-E', 'driver-O', 17.85, 1695115999911);

-- Upsert: rider-A's trip gets a new fare (newer ts wins); the change to rider-B carries an
-- older ts and loses under event-time ordering; rider-F is new.
INSERT INTO trips VALUES
  ('334e26e9', 'rider-A', 'driver-K', 25.00, 1695159649088, 'san_francisco'),
  ('e96c4396', 'rider-B', 'driver-L', 99.99, 1695091554000, 'san_francisco'),
  ('3f3d9565', 'rider-F', 'driver-P', 41.06, 1695516137016, 'sao_paulo');

-- Every row carries the five Hudi meta columns.
SELECT _hoodie_record_key, _hoodie_partition_path, rider, fare, city FROM trips ORDER BY rider;

-- INSERT OVERWRITE of one partition (a replacecommit).
INSERT OVERWRITE trips PARTITION (city = 'sao_paulo') VALUES ('a1b2c3d4', 'rider-G', 'driver-Q', 12.50, 1695600000000);

-- MERGE INTO: delete, update and insert in one commit (UPDATE SET * / INSERT * match by name;
-- as in Hudi, a matched row meets the UPDATE clauses before the DELETE clause).
MERGE INTO trips
USING (SELECT * FROM (VALUES
         ('c8abbe79', 'rider-E', 'driver-O', 17.85, 1695115999912, 'chennai', 'delete'),
         ('7a84095f', 'rider-D', 'driver-N', 36.00, 1695332066205, 'chennai', 'upsert'),
         ('b2c3d4e5', 'rider-H', 'driver-R', 22.00, 1695700000000, 'chennai', 'upsert')
       ) AS v(uuid, rider, driver, fare, ts, city, op)) AS changes
ON trips.uuid = changes.uuid
WHEN MATCHED AND changes.op = 'upsert' THEN UPDATE SET *
WHEN MATCHED AND changes.op = 'delete' THEN DELETE
WHEN NOT MATCHED THEN INSERT *;

-- UPDATE and DELETE with any WHERE.
UPDATE trips SET fare = round(fare * 1.1, 2) WHERE city = 'san_francisco' AND fare > 26;
DELETE FROM trips WHERE rider IN (SELECT rider FROM trips WHERE fare < 15);

SELECT rider, fare, city FROM trips ORDER BY rider;

-- Partition pruning, aggregation, the partitions on disk.
SELECT city, count(*) AS trips, round(sum(fare), 2) AS fares FROM trips GROUP BY city ORDER BY city;
SHOW PARTITIONS trips;

-- CREATE TABLE ... AS SELECT writes with bulk_insert.
DROP TABLE IF EXISTS expensive_trips;
CREATE TABLE expensive_trips USING hudi TBLPROPERTIES (primaryKey = 'uuid') AS
  SELECT uuid, rider, fare FROM trips WHERE fare > 25;
SELECT rider, fare FROM expensive_trips ORDER BY rider;

-- A merge-on-read table: updates and deletes go to log files, reads merge them.
DROP TABLE IF EXISTS trips_mor;
CREATE TABLE trips_mor USING hudi PARTITIONED BY (city)
  TBLPROPERTIES (type = 'mor', primaryKey = 'uuid', preCombineField = 'ts', hoodie.compact.inline = 'false')
  AS SELECT uuid, rider, driver, fare, ts, city FROM trips;
UPDATE trips_mor SET fare = fare + 1 WHERE city = 'chennai';
DELETE FROM trips_mor WHERE rider = 'rider-H';
SELECT rider, fare, city FROM trips_mor ORDER BY rider;
-- the read-optimized query reads the base files alone, until a compaction merges the logs in
SELECT rider, fare FROM hudi_query('trips_mor', 'read_optimized') WHERE city = 'chennai' ORDER BY rider;
-- as in Hudi, a compaction is planned once hoodie.compact.inline.max.delta.commits (5 by
-- default) deltacommits followed the last one; this table has had two
SET hoodie.compact.inline.max.delta.commits = 2;
RUN COMPACTION ON trips_mor;
SELECT rider, fare FROM hudi_query('trips_mor', 'read_optimized') WHERE city = 'chennai' ORDER BY rider;

-- Time travel: a table as of an instant; before the first commit of trips it was empty.
SELECT count(*) FROM trips TIMESTAMP AS OF '2000-01-01';
-- Incremental read: the latest state of every record the commits after 'earliest' (the start) wrote.
SELECT rider, fare, city FROM hudi_table_changes('trips_mor', 'latest_state', 'earliest') ORDER BY rider;

-- CDC: a table that logs its changes; every insert, update and delete with its before and after image.
DROP TABLE IF EXISTS fares;
CREATE TABLE fares USING hudi
  TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true')
  AS SELECT uuid, rider, fare, ts FROM trips WHERE city = 'chennai';
UPDATE fares SET fare = fare * 2 WHERE rider = 'rider-D';
DELETE FROM fares WHERE rider = 'rider-H';
SELECT op, before, after FROM hudi_table_changes('fares', 'cdc', 'earliest') ORDER BY ts_ms, op, after;

-- Cleaning: each commit is followed by a clean that deletes the file versions no read within
-- the retention window (10 commits by default) needs; run one keeping a single commit.
CALL run_clean(table => 'fares', retain_commits => 1, trigger_max_commits => 0);
CALL show_cleans(table => 'fares');

-- Tables Spark Hudi 1.2 writes with its defaults (table version 9), for tests/spark/spark_tables.py,
-- which reads each with hoodie and with Spark and compares the rows. Each "-- session: NAME" block
-- runs in a Spark session of its own (blocks run side by side); ${DB} is the test's database and
-- ${WH} the directory of the tables. Spark's server turns the metadata table off in every session
-- (hoodie.metadata.enable=false); the md block turns it on.

-- Spark SQL's INSERT INTO runs Hudi's insert operation by default
-- (hoodie.spark.sql.insert.into.operation = insert): a key already stored is written again, so
-- cow_ev and mor_avro hold duplicate keys; the other tables' second INSERTs are upserts.

-- session: cow
-- every column type, NULLs in every column (the partition column too), a mixed-case column,
-- event-time ordering: inserts (duplicate keys), UPDATE, DELETE, MERGE
create table ${DB}.cow_ev (Id int, userName string, amount double, price decimal(10, 2), d date,
  t timestamp, flag boolean, big bigint, info struct<a: string, b: int>, ts bigint, dt string)
  using hudi partitioned by (dt) location '${WH}/cow_ev'
  tblproperties (primaryKey = 'Id', preCombineField = 'ts');
insert into ${DB}.cow_ev values
  (1, 'ann', 1.5, 10.25, date '2024-01-01', timestamp '2024-01-01 10:00:00.123456', true, 100, named_struct('a', 'x', 'b', 1), 1, 'p1'),
  (2, null, null, null, null, null, null, null, null, 1, null),
  (3, 'Cid', -2.25, -3.10, date '1999-12-31', timestamp '1999-12-31 23:59:59', false, -5, named_struct('a', null, 'b', 3), 1, 'p2'),
  (4, 'dan', 0.0, 0.00, date '2024-02-29', timestamp '2024-02-29 00:00:00', true, 9000000000, named_struct('a', 'w', 'b', null), 1, 'p1');
insert into ${DB}.cow_ev values
  (1, 'ann2', 2.5, 20.50, date '2024-01-02', timestamp '2024-01-02 10:00:00', false, 101, named_struct('a', 'y', 'b', 2), 2, 'p1'),
  (3, 'old', 9.0, 9.00, null, null, null, null, null, 0, 'p2'),
  (5, 'eve', 5.5, 55.55, date '2024-05-05', timestamp '2024-05-05 05:05:05.5', null, 5, named_struct('a', 'v', 'b', 5), 1, null);
update ${DB}.cow_ev set userName = null, price = 99.99, info = named_struct('a', 'u', 'b', 7) where Id = 4;
delete from ${DB}.cow_ev where Id = 3;
merge into ${DB}.cow_ev t using (select 2 as Id, 'bob' as userName, 2.0 as amount, cast(2.00 as decimal(10, 2)) as price,
    date '2024-03-03' as d, timestamp '2024-03-03 03:03:03' as t, true as flag, cast(2 as bigint) as big,
    named_struct('a', 'b', 'b', 2) as info, cast(5 as bigint) as ts, cast(null as string) as dt
  union all select 6, 'fay', null, null, null, null, null, null, null, 1, 'p3') s
  on t.Id = s.Id when matched then update set * when not matched then insert *;

-- session: mor
-- merge-on-read, Avro log blocks (the default), event-time ordering, an INSERT of stored keys
-- (duplicates in a base file) that UPDATE then changes; the fifth deltacommit triggers Spark
-- SQL's inline compaction; record positions (hoodie.write.record.positions, default true) in the
-- log block of the MERGE
create table ${DB}.mor_avro (id int, name string, price double, d date, ts bigint, dt string)
  using hudi partitioned by (dt) location '${WH}/mor_avro'
  tblproperties (type = 'mor', primaryKey = 'id', preCombineField = 'ts');
insert into ${DB}.mor_avro values (1, 'a', 1.0, date '2024-01-01', 1, 'x'), (2, 'b', null, null, 1, 'x'),
  (3, null, 3.0, date '2024-03-03', 1, 'y'), (4, 'd', 4.0, null, 1, null);
update ${DB}.mor_avro set name = 'B', price = 2.5 where id = 2;
insert into ${DB}.mor_avro values (1, 'a2', 1.5, date '2024-01-02', 2, 'x'), (3, 'c_old', 0.0, null, 0, 'y'),
  (5, 'e', 5.0, null, 1, 'y');
delete from ${DB}.mor_avro where id = 4;
merge into ${DB}.mor_avro t using (select 1 as id, 'A' as name, cast(null as double) as price,
    date '2024-01-09' as d, cast(9 as bigint) as ts, 'x' as dt, 'u' as op
  union all select 5, null, null, null, 9, 'y', 'd'
  union all select 6, 'f', 6.0, null, 1, null, 'i') s
  on t.id = s.id
  when matched and s.op = 'd' then delete
  when matched then update set *
  when not matched then insert (id, name, price, d, ts, dt) values (s.id, s.name, s.price, s.d, s.ts, s.dt);
-- after the compaction: a log block on the compacted slice
update ${DB}.mor_avro set price = 100.0 where id = 3;

-- merge-on-read, non-partitioned, composite key, commit-time ordering, without record positions
create table ${DB}.mor_ct (id int, k string, v string, n bigint) using hudi location '${WH}/mor_ct'
  tblproperties (type = 'mor', primaryKey = 'id,k', 'hoodie.write.record.positions' = 'false');
insert into ${DB}.mor_ct values (1, 'a', 'one', 1), (2, 'b', null, null), (3, 'c', 'three', 3);
set hoodie.spark.sql.insert.into.operation = upsert;
insert into ${DB}.mor_ct values (1, 'a', 'uno', 11), (4, 'd', 'four', 4);
reset hoodie.spark.sql.insert.into.operation;
update ${DB}.mor_ct set v = 'TWO' where id = 2;
delete from ${DB}.mor_ct where k = 'c';

-- session: md
-- the metadata table on: a copy-on-write table (commit-time ordering, non-partitioned) and a
-- merge-on-read table with Parquet log blocks
set hoodie.metadata.enable = true;
create table ${DB}.cow_md (id int, v string, n double) using hudi location '${WH}/cow_md'
  tblproperties (primaryKey = 'id');
insert into ${DB}.cow_md values (1, 'a', 1.0), (2, null, null), (3, 'c', 3.0);
set hoodie.spark.sql.insert.into.operation = upsert;
insert into ${DB}.cow_md values (1, 'a2', 1.25), (4, 'd', 4.0);
reset hoodie.spark.sql.insert.into.operation;
update ${DB}.cow_md set n = n * 2 where id < 3;
delete from ${DB}.cow_md where id = 3;
create table ${DB}.mor_parquet (id int, name string, price decimal(10, 2), t timestamp, ts bigint, dt string)
  using hudi partitioned by (dt) location '${WH}/mor_parquet'
  tblproperties (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
                 'hoodie.logfile.data.block.format' = 'parquet');
insert into ${DB}.mor_parquet values (1, 'a', 1.10, timestamp '2024-01-01 00:00:01', 1, 'x'), (2, null, null, null, 1, 'x'),
  (3, 'c', 3.30, timestamp '2024-03-03 03:03:03.333', 1, null);
set hoodie.spark.sql.insert.into.operation = upsert;
insert into ${DB}.mor_parquet values (1, 'a2', 1.20, null, 2, 'x'), (2, 'b', 2.20, timestamp '2024-02-02 02:02:02', 2, 'x');
reset hoodie.spark.sql.insert.into.operation;
update ${DB}.mor_parquet set name = 'C' where id = 3;
delete from ${DB}.mor_parquet where id = 1;

-- session: merge
-- MERGE INTO on merge-on-read: UPDATE SET of some columns writes partial-update log blocks
-- (hoodie.spark.sql.merge.into.partial.updates, default true), with record positions. The
-- first MERGE inserts into a partition of its own: Spark 1.2 fails such a MERGE (a ClassCastException
-- in FileGroupReaderBasedMergeHandle) when its inserts go to a small base-only file group that
-- its partial updates also change
create table ${DB}.mor_merge (id int, name string, price double, qty int, info struct<a: string, b: int>,
  ts bigint, dt string) using hudi partitioned by (dt) location '${WH}/mor_merge'
  tblproperties (type = 'mor', primaryKey = 'id', preCombineField = 'ts');
insert into ${DB}.mor_merge values (1, 'a', 1.0, 10, named_struct('a', 'x', 'b', 1), 1, 'x'),
  (2, 'b', 2.0, null, null, 1, 'x'), (3, null, 3.0, 30, named_struct('a', null, 'b', 3), 1, 'y'),
  (4, 'd', null, 40, named_struct('a', 'w', 'b', 4), 1, 'y');
merge into ${DB}.mor_merge t using (select 1 as id, 'A' as name, cast(2 as bigint) as ts, 'x' as dt
  union all select 3, 'C', 2, 'y' union all select 7, 'g', 1, 'z') s
  on t.id = s.id
  when matched then update set name = s.name, ts = s.ts
  when not matched then insert (id, name, price, qty, info, ts, dt)
    values (s.id, s.name, cast(null as double), cast(null as int), cast(null as struct<a: string, b: int>), s.ts, s.dt);
merge into ${DB}.mor_merge t using (select 1 as id, 5.5 as price, cast(3 as bigint) as ts, 'x' as dt
  union all select 2, 0.0, 0, 'x' union all select 4, 4.4, 3, 'y') s
  on t.id = s.id
  when matched and s.id = 4 then delete
  when matched then update set price = s.price, ts = s.ts;
merge into ${DB}.mor_merge t using (select 3 as id, 33 as qty, cast(null as int) as b, cast(4 as bigint) as ts, 'y' as dt) s
  on t.id = s.id
  when matched then update set qty = s.qty, info = named_struct('a', 'z', 'b', s.b), ts = s.ts;

-- session: cdc1
-- CDC in each logging mode: insert, upsert, UPDATE, DELETE, MERGE
create table ${DB}.cdc_cow_ok (id int, name string, price decimal(10, 2), d date, ts bigint, dt string)
  using hudi partitioned by (dt) location '${WH}/cdc_cow_ok'
  tblproperties (primaryKey = 'id', preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true',
                 'hoodie.table.cdc.supplemental.logging.mode' = 'OP_KEY_ONLY');
insert into ${DB}.cdc_cow_ok values (1, 'a', 1.50, date '2024-01-01', 1, 'x'), (2, null, null, null, 1, null), (3, 'c', -3.25, null, 1, 'y');
set hoodie.spark.sql.insert.into.operation = upsert;
insert into ${DB}.cdc_cow_ok values (1, 'a_old', 0.00, null, 0, 'x'), (2, 'b', 2.00, date '2024-02-02', 2, null), (4, 'd', 4.00, null, 1, 'y');
reset hoodie.spark.sql.insert.into.operation;
update ${DB}.cdc_cow_ok set name = 'A', price = 1.75 where id = 1;
delete from ${DB}.cdc_cow_ok where id = 3;
merge into ${DB}.cdc_cow_ok t using (select 4 as id, 'D' as name, cast(null as decimal(10, 2)) as price, date '2024-04-04' as d,
    cast(5 as bigint) as ts, 'y' as dt union all select 5, 'e', 5.00, null, 1, 'x') s
  on t.id = s.id when matched then update set * when not matched then insert *;
create table ${DB}.cdc_mor_db (id int, name string, price decimal(10, 2), d date, ts bigint, dt string)
  using hudi partitioned by (dt) location '${WH}/cdc_mor_db'
  tblproperties (type = 'mor', primaryKey = 'id', preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true',
                 'hoodie.table.cdc.supplemental.logging.mode' = 'DATA_BEFORE');
insert into ${DB}.cdc_mor_db values (1, 'a', 1.50, date '2024-01-01', 1, 'x'), (2, null, null, null, 1, null), (3, 'c', -3.25, null, 1, 'y');
set hoodie.spark.sql.insert.into.operation = upsert;
insert into ${DB}.cdc_mor_db values (1, 'a_old', 0.00, null, 0, 'x'), (2, 'b', 2.00, date '2024-02-02', 2, null), (4, 'd', 4.00, null, 1, 'y');
reset hoodie.spark.sql.insert.into.operation;
update ${DB}.cdc_mor_db set name = 'A', price = 1.75 where id = 1;
delete from ${DB}.cdc_mor_db where id = 3;
merge into ${DB}.cdc_mor_db t using (select 4 as id, 'D' as name, cast(null as decimal(10, 2)) as price, date '2024-04-04' as d,
    cast(5 as bigint) as ts, 'y' as dt union all select 5, 'e', 5.00, null, 1, 'x') s
  on t.id = s.id when matched then update set * when not matched then insert *;

-- session: cdc2
create table ${DB}.cdc_cow_dba (id int, name string, price decimal(10, 2), d date, ts bigint, dt string)
  using hudi partitioned by (dt) location '${WH}/cdc_cow_dba'
  tblproperties (primaryKey = 'id', preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true',
                 'hoodie.table.cdc.supplemental.logging.mode' = 'DATA_BEFORE_AFTER');
insert into ${DB}.cdc_cow_dba values (1, 'a', 1.50, date '2024-01-01', 1, 'x'), (2, null, null, null, 1, null), (3, 'c', -3.25, null, 1, 'y');
set hoodie.spark.sql.insert.into.operation = upsert;
insert into ${DB}.cdc_cow_dba values (1, 'a_old', 0.00, null, 0, 'x'), (2, 'b', 2.00, date '2024-02-02', 2, null), (4, 'd', 4.00, null, 1, 'y');
reset hoodie.spark.sql.insert.into.operation;
update ${DB}.cdc_cow_dba set name = 'A', price = 1.75 where id = 1;
delete from ${DB}.cdc_cow_dba where id = 3;
merge into ${DB}.cdc_cow_dba t using (select 4 as id, 'D' as name, cast(null as decimal(10, 2)) as price, date '2024-04-04' as d,
    cast(5 as bigint) as ts, 'y' as dt union all select 5, 'e', 5.00, null, 1, 'x') s
  on t.id = s.id when matched then update set * when not matched then insert *;
create table ${DB}.cdc_mor_dba (id int, name string, price decimal(10, 2), d date, ts bigint, dt string)
  using hudi partitioned by (dt) location '${WH}/cdc_mor_dba'
  tblproperties (type = 'mor', primaryKey = 'id', preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true',
                 'hoodie.table.cdc.supplemental.logging.mode' = 'DATA_BEFORE_AFTER');
insert into ${DB}.cdc_mor_dba values (1, 'a', 1.50, date '2024-01-01', 1, 'x'), (2, null, null, null, 1, null), (3, 'c', -3.25, null, 1, 'y');
set hoodie.spark.sql.insert.into.operation = upsert;
insert into ${DB}.cdc_mor_dba values (1, 'a_old', 0.00, null, 0, 'x'), (2, 'b', 2.00, date '2024-02-02', 2, null), (4, 'd', 4.00, null, 1, 'y');
reset hoodie.spark.sql.insert.into.operation;
update ${DB}.cdc_mor_dba set name = 'A', price = 1.75 where id = 1;
delete from ${DB}.cdc_mor_dba where id = 3;
merge into ${DB}.cdc_mor_dba t using (select 4 as id, 'D' as name, cast(null as decimal(10, 2)) as price, date '2024-04-04' as d,
    cast(5 as bigint) as ts, 'y' as dt union all select 5, 'e', 5.00, null, 1, 'x') s
  on t.id = s.id when matched then update set * when not matched then insert *;

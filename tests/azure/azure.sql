-- tables on Azurite: every kind of DML, under optimistic concurrency control (the storage lock
-- file is taken with Azure's conditional writes); run.sh compares hudi-rs's read
CREATE TABLE azc (id INT, "userName" STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi
  PARTITIONED BY (dt) LOCATION 'az://hoodie/warehouse/azc'
  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts',
    'hoodie.write.concurrency.mode' = 'optimistic_concurrency_control');
INSERT INTO azc VALUES (1, 'a', 1.5, 1, 'x'), (2, NULL, 2.5, 1, 'y'), (3, 'c', NULL, 1, 'x');
UPDATE azc SET price = 10 WHERE id = 1;
DELETE FROM azc WHERE id = 3;
MERGE INTO azc t USING (SELECT 2 AS id, 'b' AS "userName", 20.0 AS price, 2 AS ts, 'y' AS dt
                        UNION ALL SELECT 4, 'd', 4.0, 1, 'z') s ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
INSERT OVERWRITE azc PARTITION (dt = 'z') SELECT 5, 'e', NULL, 1;
CREATE TABLE azm (id INT, v STRING) USING hudi LOCATION 'az://hoodie/warehouse/azm'
  TBLPROPERTIES (type = 'mor', primaryKey = 'id', 'hoodie.compact.inline' = 'false');
INSERT INTO azm VALUES (1, 'a'), (2, NULL);
UPDATE azm SET v = 'b' WHERE id = 2;
DELETE FROM azm WHERE id = 1;
SELECT id, "userName", price, dt FROM azc ORDER BY id;
SELECT id, v FROM azm ORDER BY id;

# The Spark and Hudi the tests run beside hoodie (sourced by setup.sh).
# Hudi 1.2.1 is the reference; Maven Central as this project's machines reach it serves the
# Spark 3.5 bundle up to 1.2.0 (checked 2026-12-04), so 1.2.0 it is until 1.2.1 is served.
HUDI_VERSION=${HUDI_VERSION:-1.2.0}
HUDI_BUNDLE=hudi-spark3.5-bundle_2.12
# Hudi 1.2 is built against Spark 3.5.5 (apache/hudi pom.xml spark35.version)
PYSPARK_VERSION=3.5.5
PYARROW_VERSION=26.0.1

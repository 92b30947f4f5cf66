#!/usr/bin/env bash
# Installs Spark with Hudi for the tests, from the registries alone, into caches the next run
# reuses, and prints two lines: the Python that has pyspark, and the Hudi bundle jar.
#   - pyspark and pyarrow from PyPI, in a virtual environment under $HOODIE_CACHE
#     (default ~/.cache/hoodie; pip's own cache is ~/.cache/pip)
#   - the Hudi Spark bundle from Maven Central, with Maven, into ~/.m2 (Maven's cache)
#   - Java: the machine's JDK 17
# Usage: tests/spark/setup.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.sh
. "$HERE/versions.sh"
CACHE=${HOODIE_CACHE:-$HOME/.cache/hoodie}
VENV=$CACHE/spark-venv-$PYSPARK_VERSION
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import pyspark, pyarrow" 2>/dev/null; then
  mkdir -p "$CACHE"
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install --quiet "pyspark==$PYSPARK_VERSION" "pyarrow==$PYARROW_VERSION" >&2
fi
if ! command -v java >/dev/null; then
  echo "setup.sh: Java is missing (Spark needs a JDK; 17 is the tested one)" >&2
  exit 1
fi
M2=${MAVEN_REPO:-$HOME/.m2/repository}
JAR=$M2/org/apache/hudi/$HUDI_BUNDLE/$HUDI_VERSION/$HUDI_BUNDLE-$HUDI_VERSION.jar
if [ ! -s "$JAR" ]; then
  mvn -q -B org.apache.maven.plugins:maven-dependency-plugin:3.8.1:get \
    -Dartifact="org.apache.hudi:$HUDI_BUNDLE:$HUDI_VERSION" -Dtransitive=false >&2
fi
echo "$VENV/bin/python"
echo "$JAR"

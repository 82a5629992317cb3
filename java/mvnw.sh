#!/usr/bin/env bash
# Runs Maven on oxmq's JVM modules with a JDK 25 (the FFM API is final from 22): $JAVA_HOME if
# it is one, else the first JDK 25 under /usr/lib/jvm. Arguments go to mvn.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jdk_ok() { [ -x "$1/bin/javac" ] && "$1/bin/java" -version 2>&1 | grep -q 'version "2[5-9]'; }
if [ -z "${JAVA_HOME:-}" ] || ! jdk_ok "$JAVA_HOME"; then
  JAVA_HOME=""
  for d in /usr/lib/jvm/*25* /usr/lib/jvm/*; do
    if [ -d "$d" ] && jdk_ok "$d"; then JAVA_HOME="$d"; break; fi
  done
  [ -n "$JAVA_HOME" ] || { echo "no JDK 25 found under /usr/lib/jvm (install temurin-25-jdk or openjdk-25-jdk)" >&2; exit 1; }
fi
export JAVA_HOME
exec mvn -f "$here/pom.xml" "$@"

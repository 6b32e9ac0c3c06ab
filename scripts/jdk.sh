# Sourced by the launcher and the test script: sets JAVA_HOME to a JDK 25 or newer.
# Order: $JAVA_HOME if it is 25+, then /usr/lib/jvm/temurin-25*, then any /usr/lib/jvm/*25*.
llmlat_java_major() { # JAVA_HOME-like dir -> major version, or empty
  local release="$1/release"
  [[ -f "$release" ]] || return 0
  sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$release"
}

llmlat_find_jdk() {
  local candidate major
  for candidate in "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25* /usr/lib/jvm/*-25-* /usr/lib/jvm/jdk-25*; do
    [[ -n "$candidate" && -x "$candidate/bin/java" ]] || continue
    major=$(llmlat_java_major "$candidate")
    if [[ -n "$major" && "$major" -ge 25 ]]; then
      export JAVA_HOME="$candidate"
      return 0
    fi
  done
  echo "llmlat: needs a JDK 25 or newer (the embedded store uses java.lang.foreign)." >&2
  echo "  Set JAVA_HOME to one, or install Temurin 25 under /usr/lib/jvm/temurin-25-jdk-amd64." >&2
  return 1
}

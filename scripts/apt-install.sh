# Sourced by the test and harness scripts: `apt_install PKG...` installs the Debian packages
# given (none: nothing to do) with apt-get when running as root, and otherwise fails naming
# them, so a fresh machine sets itself up and a machine without root says what it lacks.
apt_install() {
  [ $# -gt 0 ] || return 0
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing $*"
    timeout 600 apt-get update -qq >/dev/null || true
    DEBIAN_FRONTEND=noninteractive timeout 1200 apt-get install -y -qq "$@" >/dev/null
  else
    echo "missing $* and cannot apt-get install" >&2
    return 1
  fi
}

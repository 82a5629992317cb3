#!/usr/bin/env bash
# Faults between hosts on a simulated network (interop/hosts/hosts.py): hosts as network
# namespaces joined by veth links and a bridge on this machine (nothing leaves it), names from
# dnsmasq, Prometheus scraping the peers, a three-member etcd cluster. Scenarios: links cut
# without FIN between PUB/SUB, REQ/REP (lazy pirate), DEALER/ROUTER and PUSH/PULL peers; DNS
# records that change under a PUSH that follows them (OXMQ_DNS_FOLLOW); the wiring API's name
# service with one etcd member cut off; the metrics scraped and linted (promtool).
# Needs root (ip netns); installs dnsmasq-base, prometheus, etcd-server/etcd-client; bounded
# in time; removes every namespace and ends every process it started on exit, even on failure.
#   KEEP_WORK=1   keep the work directory (peer logs) for a look after a failure
#   HOSTS_ONLY=cut,dns,etcd,metrics   a subset of the scenarios
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/apt-install.sh

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null 2>&1; then
  echo "90-hosts needs root and iproute2 (ip netns)" >&2
  exit 1
fi
missing=()
command -v dnsmasq >/dev/null 2>&1 || missing+=(dnsmasq-base)
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || missing+=(etcd-client)
command -v getent >/dev/null 2>&1 || missing+=(libc-bin)
if [ ${#missing[@]} -gt 0 ]; then
  # Without recommends: prometheus would bring node exporters and their timers.
  apt_install() { timeout 600 apt-get update -qq >/dev/null || true
    DEBIAN_FRONTEND=noninteractive timeout 1200 apt-get install -y -qq --no-install-recommends "$@" >/dev/null; }
  echo "installing ${missing[*]}"
  apt_install "${missing[@]}"
fi

pid=
cleanup() {
  # The scenarios end their processes and namespaces themselves; this is for an interrupted
  # run: stop the driver, then remove whatever is left in the test's namespaces.
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  python3 interop/hosts/hosts.py --cleanup || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "-- build the peers (oxmq-hostpeer, oxmq-name-server, oxmq-wiring-peer)"
timeout 1200 cargo build --release -q -p oxmq-interop --bin oxmq-hostpeer
timeout 1200 cargo build --release -q -p oxmq-wiring --bins

echo "-- scenarios"
args=(--bin target/release)
[ -n "${HOSTS_ONLY:-}" ] && args+=(--only "$HOSTS_ONLY")
[ -n "${HOSTS_JSON:-}" ] && args+=(--json "$HOSTS_JSON")
# In the background, so that a signal to this script is handled at once (bash runs traps only
# between foreground commands).
timeout 300 python3 interop/hosts/hosts.py "${args[@]}" &
pid=$!
status=0
wait "$pid" || status=$?
pid=
exit "$status"

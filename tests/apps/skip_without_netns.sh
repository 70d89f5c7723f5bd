# Sourced by the tests that run scripts/slow-network.sh: exits 77 (CTest's "skipped"), saying
# why, where network namespaces cannot be made (that needs root and iproute2).
if ! command -v ip >/dev/null || ! ip netns add imslowprobe 2>/dev/null; then
  echo "skipped: cannot create a network namespace here (needs root and iproute2)"
  exit 77
fi
ip netns delete imslowprobe

#!/usr/bin/env bash
# Runs N MPI ranks on this machine as if each sat on its own node behind a network link of a
# given bandwidth: every rank runs in a Linux network namespace of its own, joined to the others
# by a veth pair to a bridge, and every link is rate-limited both ways by tc's token bucket
# filter (tbf; this kernel has no netem, so there is no added delay or loss). Open MPI is told
# to use TCP over those links only (no shared memory), so an all-reduce costs what the link
# allows, and the strategies differ in real runs as they do on a cluster.
#
#   scripts/slow-network.sh [--ranks N] [--ranks-per-namespace R] [--rate RATE] [--burst BYTES] \
#       [--subnet 10.X.Y] [--mpirun-args "..."] [--keep] -- COMMAND [ARGS...]
#
#   scripts/slow-network.sh --ranks 2 --rate 1gbit -- build/release/imerge-train --dist imerge ...
#   scripts/slow-network.sh --ranks 2 --rate 1gbit -- build/release/imerge-commbench --out slow
#
#   --ranks N        ranks, default 2
#   --ranks-per-namespace R
#                    ranks in each namespace, default 1 (N / R namespaces, R must divide N): the
#                    ranks of one namespace are one node's GPUs, talking over shared memory,
#                    and share its rate-limited link to the other namespaces
#   --rate RATE      each link's bandwidth in tc's units (1gbit, 100mbit, 10gbit), default 1gbit
#   --burst BYTES    the token bucket's depth, default rate / 250 (4 ms of traffic, at least
#                    64 KiB, as tbf needs at least one rate / HZ)
#   --subnet A.B.C   the /24 the links use, default 10.213.77; it must be a private (RFC 1918)
#                    range, and must not be in use on this machine
#   --mpirun-args S  more mpirun options (word-split), e.g. "-x IMERGE_FOO=1"
#   --keep           leave the namespaces and links in place after the run (for inspection;
#                    remove them later by running with --cleanup-only)
#
# How the ranks are launched: mpirun runs in a control namespace of its own (imslowc, address
# SUBNET.254, its link not rate-limited) and starts an MPMD job whose K-th part is
# `ip netns exec imslowK COMMAND`, so rank K runs in namespace K (exec'd there: same process,
# new network namespace). A rank reaches mpirun's PMIx server over TCP (PMIx 4 has no
# Unix-socket transport, and by default listens on 127.0.0.1, which inside another namespace is
# a different loopback: MPI_Init then fails with "OPAL ERROR: Unreachable in file ext3x_client.c"),
# so the server is told to accept connections on SUBNET (PMIX_MCA_ptl_tcp_remote_connections,
# PMIX_MCA_ptl_tcp_if_include). The ranks talk over `--mca btl tcp,self --mca
# btl_tcp_if_include SUBNET.0/24`: TCP over the rate-limited links, no shared memory.
#
# With R > 1 ranks per namespace Open MPI must see each namespace as a node of its own, or it
# would join every pair of ranks of this one machine by shared memory: mpirun gets a hostfile of
# nodes nodeK (R slots each) and an rsh agent that starts each node's daemon (orted) inside
# namespace K, so ranks 0..R-1 run in namespace 0 and so on. Shared memory (`vader`) then joins
# the ranks of one node and TCP the nodes. Every node's daemon gets a session directory and
# shared-memory backing directory of its own (the nodes share a hostname, and their segment
# names would collide), PMIx keeps its job data in a hash (`gds=hash`: its shared-memory store
# fails with several daemons on one host), and hwloc shares no topology segment
# (`rtc_hwloc_vmhole none`; several daemons writing it crash in hwloc_shmem_topology_write).
#
# Needs root and iproute2 (ip, tc). Only creates, and on exit (trap) removes, namespaces named
# imslowK and imslowc, veth pairs imslowK/imslowKb and a bridge imslowbr, with addresses
# SUBNET.1.. and SUBNET.254 inside those namespaces; nothing in the root namespace gets an
# address, so no outside host is reachable from the ranks and nothing outside sees their traffic.
# The ranks' file system, users and processes are the machine's: only the network is separate.
set -euo pipefail

ranks=2
per_namespace=1
rate=1gbit
burst=
subnet=10.213.77
mpirun_args=
keep=0
cleanup_only=0
prefix=imslow
bridge=${prefix}br
control=${prefix}c

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit "${1:-2}"
}

while (($#)); do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --ranks-per-namespace) per_namespace=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --burst) burst=$2; shift 2 ;;
    --subnet) subnet=$2; shift 2 ;;
    --mpirun-args) mpirun_args=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --cleanup-only) cleanup_only=1; shift ;;
    -h | --help) usage 0 ;;
    --) shift; break ;;
    *) echo "slow-network.sh: unknown option '$1' (the command goes after --)" >&2; usage ;;
  esac
done

fail() {
  echo "slow-network.sh: $*" >&2
  exit 1
}

cleanup() {
  local k
  for ((k = 0; k < 64; ++k)); do
    ip netns del "$prefix$k" 2>/dev/null || true   # takes its veth end, and so the pair, along
    ip link del "$prefix${k}b" 2>/dev/null || true
  done
  ip netns del "$control" 2>/dev/null || true
  ip link del "${control}b" 2>/dev/null || true
  ip link del "$bridge" 2>/dev/null || true
}

[[ $(id -u) -eq 0 ]] || fail "needs root (network namespaces, veth pairs, tc)"
if ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
  fail "needs iproute2 (ip, tc): apt-get install -y iproute2"
fi
if ((cleanup_only)); then
  cleanup
  exit 0
fi
(($#)) || fail "no command; put it after --, e.g. -- build/release/imerge-commbench"
if [[ ! $ranks =~ ^[0-9]+$ ]] || ((ranks < 1 || ranks > 64)); then
  fail "--ranks $ranks: 1 to 64"
fi
if [[ ! $per_namespace =~ ^[0-9]+$ ]] || ((per_namespace < 1 || ranks % per_namespace != 0)); then
  fail "--ranks-per-namespace $per_namespace: a divisor of --ranks $ranks"
fi
namespaces=$((ranks / per_namespace))
[[ $rate =~ ^[0-9.]+(bit|kbit|mbit|gbit|tbit|bps|kbps|mbps|gbps)$ ]] ||
  fail "--rate $rate: a tc rate such as 100mbit, 1gbit or 10gbit"
# Only private addresses: 10/8, 172.16/12, 192.168/16.
if [[ ! $subnet =~ ^(10\.[0-9]+\.[0-9]+|172\.(1[6-9]|2[0-9]|3[01])\.[0-9]+|192\.168\.[0-9]+)$ ]]; then
  fail "--subnet $subnet: must be the first three numbers of a private /24 (10.x.y, 172.16-31.y, 192.168.y)"
fi
if ip -o addr show | grep -q " inet $subnet\."; then
  fail "--subnet $subnet: this machine already has addresses in $subnet.0/24; choose another"
fi
if ip netns list | grep -q "^$prefix" || ip link show "$bridge" >/dev/null 2>&1; then
  fail "namespaces or links named $prefix* exist already (another run, or --keep); remove them with: $0 --cleanup-only"
fi
if [[ -z $burst ]]; then
  # 4 ms of traffic at the rate, at least 64 KiB.
  bits=$(echo "$rate" |
    awk '{ n = $0 + 0; u = tolower($0); sub(/^[0-9.]+/, "", u);
           m = (u ~ /^t/) ? 1e12 : (u ~ /^g/) ? 1e9 : (u ~ /^m/) ? 1e6 : (u ~ /^k/) ? 1e3 : 1;
           if (u ~ /bps$/) m *= 8; printf "%.0f", n * m }')
  burst=$(awk -v bits="$bits" 'BEGIN { b = bits / 8 / 250; if (b < 65536) b = 65536; printf "%.0f", b }')
fi

# The hostfile and rsh agent of R > 1 ranks per namespace, and the daemons' session directories.
work=$(mktemp -d /tmp/slow-network.XXXXXX)
if ((keep)); then
  trap 'rm -rf "$work"; echo "slow-network.sh: kept the namespaces; remove them with: $0 --cleanup-only"' EXIT
else
  trap 'rm -rf "$work"; cleanup' EXIT
fi
trap 'exit 130' INT TERM

# A namespace on the bridge: NAME with address ADDRESS on its end of a veth pair NAME/NAMEb.
attach() {
  local namespace=$1 address=$2
  ip netns add "$namespace"
  ip link add "$namespace" type veth peer name "${namespace}b"
  ip link set "$namespace" netns "$namespace"
  ip link set "${namespace}b" master "$bridge" up
  ip -n "$namespace" link set lo up
  ip -n "$namespace" addr add "$address/24" dev "$namespace"
  ip -n "$namespace" link set "$namespace" up
}

# The bridge: a switch in the root namespace with no address of its own.
ip link add "$bridge" type bridge
ip link set "$bridge" up
attach "$control" "$subnet.254"
for ((k = 0; k < namespaces; ++k)); do
  namespace=$prefix$k
  attach "$namespace" "$subnet.$((k + 1))"
  # Both directions of the link: what the namespace sends (its end) and what it receives (the
  # bridge's end toward it), as a full-duplex NIC of this rate.
  tc -n "$namespace" qdisc add dev "$namespace" root tbf rate "$rate" burst "$burst" latency 100ms
  tc qdisc add dev "${namespace}b" root tbf rate "$rate" burst "$burst" latency 100ms
done
echo "slow-network.sh: $ranks ranks in namespaces ${prefix}0..${prefix}$((namespaces - 1))" \
  "($per_namespace each) on $subnet.0/24, every link $rate (tbf, burst $burst B) both ways" >&2

launch=()
btls=tcp,self
pmix=(PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include="$subnet.0/24")
if ((per_namespace == 1)); then
  # An MPMD job whose K-th part runs in namespace K.
  for ((k = 0; k < ranks; ++k)); do
    if ((k > 0)); then launch+=(:); fi
    launch+=(-np 1 ip netns exec "$prefix$k" "$@")
  done
else
  for ((k = 0; k < namespaces; ++k)); do echo "node$k slots=$per_namespace"; done >"$work/hosts"
  # mpirun's rsh launcher calls this as `agent nodeK COMMAND...` to start node K's daemon.
  cat >"$work/agent" <<AGENT
#!/usr/bin/env bash
node=\$1
shift
k=\${node#node}
mkdir -p "$work/node\$k"
exec ip netns exec "$prefix\$k" env OMPI_MCA_orte_tmpdir_base="$work/node\$k" \\
  OMPI_MCA_btl_vader_backing_directory="$work/node\$k" /bin/sh -c "\$*"
AGENT
  chmod +x "$work/agent"
  btls=tcp,vader,self
  pmix+=(PMIX_MCA_gds=hash)
  launch=(--hostfile "$work/hosts" --mca plm_rsh_agent "$work/agent" --mca rtc_hwloc_vmhole none
    -x PMIX_MCA_gds=hash -np "$ranks" "$@")
fi

# shellcheck disable=SC2086  # --mpirun-args is meant to be word-split
ip netns exec "$control" env "${pmix[@]}" mpirun --allow-run-as-root --oversubscribe --bind-to none \
  --mca btl "$btls" --mca btl_tcp_if_include "$subnet.0/24" --mca oob_tcp_if_include "$subnet.0/24" \
  --mca pml ob1 -x OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" $mpirun_args "${launch[@]}"

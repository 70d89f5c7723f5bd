#!/usr/bin/env bash
# scripts/gpu-deps-bundle.sh [--out DIR] [--limit-mib N]
#   On a Debian 12 development machine with network: downloads the Debian packages imerge builds
#   against (oneDNN, OpenBLAS, Open MPI, CLI11, nlohmann-json, GoogleTest, zlib, stb, OpenCL ICD)
#   and their runtime dependencies into DIR (default .gpu-deps/, git-ignored), for a GPU machine
#   that has CUDA, a compiler, CMake and PyTorch but neither these packages nor a network.
#   docs/gpu-check.md has the device tool's `run` invocation that carries DIR there.
# scripts/gpu-deps-bundle.sh --unpack PREFIX [--out DIR]
#   On that machine (scripts/gpu-check.sh calls it): unpacks DIR's packages with dpkg -x into
#   PREFIX (never into /), points their absolute symbolic links into PREFIX (or, for a library
#   left out of the bundle, at the system's copy of the same soname) and writes PREFIX/env.sh,
#   which a bash script sources to get the bundle's paths:
#     GPU_DEPS_ROOT          PREFIX/usr
#     GPU_DEPS_LIBRARY_DIRS  the bundle's library folders, colon-separated
#     GPU_DEPS_CMAKE_ARGS    (array) CMAKE_PREFIX_PATH, MPI's library and header, mpiexec, the
#                            headers without a CMake package (stb), and -rpath-link so the
#                            linker finds the bundled libraries' own dependencies
#     GPU_DEPS_RUN_ENV       (array, for `env`) LD_LIBRARY_PATH, Open MPI's relocation
#                            (OPAL_PREFIX) and PMIx's component path, for running the built
#                            programs (the build too: it runs the test programs to list
#                            their tests) and mpirun.
#                            An RPATH in the executables would not do: libmpi.so.40 carries
#                            its own RUNPATH, which makes the loader ignore theirs for its
#                            dependencies (libopen-rte, libopen-pal, libhwloc).
#
# The dependency closure follows Depends and Pre-Depends (not Recommends) from the roots below,
# taking in each "a | b" group the first alternative that is already chosen, excluded or a real
# package, and stops at the EXCLUDED packages: what the GPU image (Ubuntu 24.04 with CUDA, its
# compiler and PyTorch) already has, or what a single-machine C/C++ build and run never loads.
# DIR gets the .deb files and MANIFEST (package, version, bytes; then every exclusion met and
# why). The total must stay under --limit-mib (default 48 MiB: the device tool carries at most
# 64 MiB, working tree included); the script fails, naming the biggest packages, when it does
# not.
set -euo pipefail
cd "$(dirname "$0")/.."

out=.gpu-deps
limit_mib=48
unpack=
while (($#)); do
  case $1 in
    --out) out=$2; shift 2 ;;
    --limit-mib) limit_mib=$2; shift 2 ;;
    --unpack) unpack=$2; shift 2 ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "gpu-deps-bundle.sh: unknown argument '$1' (--out DIR, --limit-mib N, --unpack PREFIX)" >&2
       exit 2 ;;
  esac
done

# ---- --unpack: on the GPU machine ------------------------------------------------------------
if [[ -n $unpack ]]; then
  shopt -s nullglob
  debs=("$out"/*.deb)
  ((${#debs[@]})) || { echo "gpu-deps-bundle.sh: no .deb files in $out" >&2; exit 1; }
  # dpkg -x, or on a machine without dpkg the same by hand: a .deb is an ar archive whose
  # data.tar.* holds the files.
  extract() {
    if command -v dpkg-deb >/dev/null; then
      dpkg-deb -x "$1" "$2"
    else
      local member flag
      member=$(ar t "$1" | grep '^data\.tar') || return 1
      case $member in
        *.xz) flag=-J ;; *.gz) flag=-z ;; *.zst) flag=--zstd ;; *) flag= ;;
      esac
      ar p "$1" "$member" | tar -x $flag -f - -C "$2"
    fi
  }
  command -v dpkg-deb >/dev/null || command -v ar >/dev/null ||
    { echo "gpu-deps-bundle.sh: --unpack needs dpkg-deb or ar" >&2; exit 1; }
  [[ $unpack == /* ]] || unpack=$PWD/$unpack
  [[ $unpack != / && $unpack != /usr && $unpack != /usr/* ]] ||
    { echo "gpu-deps-bundle.sh: --unpack $unpack: refusing to unpack over the system" >&2; exit 2; }
  rm -rf "$unpack" && mkdir -p "$unpack"
  for deb in "${debs[@]}"; do extract "$deb" "$unpack"; done
  # Absolute links point into the system (zlib1g-dev: libz.so -> /lib/.../libz.so.1.2.13).
  while IFS= read -r link; do
    target=$(readlink "$link")
    if [[ -e $unpack$target || -L $unpack$target ]]; then
      ln -sfn "$unpack$target" "$link"
      continue
    fi
    soname=$(basename "$target" | sed -nE 's/^(lib.*\.so\.[0-9]+).*/\1/p')
    system=
    if [[ -n $soname ]]; then
      system=$(ldconfig -p | awk -v s="$soname" '$1 == s && /x86-64/ && !found {print $NF; found = 1}')
    fi
    if [[ -n $system ]]; then
      ln -sfn "$system" "$link"
    else
      echo "gpu-deps-bundle.sh: warning: ${link#"$unpack"} -> $target: not in the bundle nor the system" >&2
    fi
  done < <(find "$unpack" -type l -lname '/*')
  root=$unpack/usr
  arch=$root/lib/x86_64-linux-gnu
  libdirs=$arch:$arch/openblas-openmp:$arch/openmpi/lib
  {
    echo "# Written by scripts/gpu-deps-bundle.sh --unpack on $(date -u +%Y-%m-%dT%H:%M:%SZ); bash: source it."
    printf 'GPU_DEPS_ROOT=%q\n' "$root"
    printf 'GPU_DEPS_LIBRARY_DIRS=%q\n' "$libdirs"
    printf 'GPU_DEPS_CMAKE_ARGS=(\n'
    printf '  %q\n' "-DCMAKE_PREFIX_PATH=$root" \
      "-DMPI_SKIP_COMPILER_WRAPPER=ON" "-DMPI_C_LIB_NAMES=mpi" \
      "-DMPI_mpi_LIBRARY=$arch/openmpi/lib/libmpi.so" \
      "-DMPI_C_HEADER_DIR=$arch/openmpi/include" \
      "-DMPIEXEC_EXECUTABLE=$root/bin/mpiexec.openmpi" \
      "-DCMAKE_CXX_FLAGS=-isystem $root/include" \
      "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath-link,$libdirs"
    printf ')\n'
    # OPAL_PREFIX relocates Open MPI (its components, help files); this PMIx build has no such
    # variable, only its component path (else it misses its zlib component and says so).
    # Debian's /etc/openmpi/openmpi-mca-params.conf (not under the prefix) as variables, and
    # quiet about the network components whose libraries the bundle leaves out.
    printf 'GPU_DEPS_RUN_ENV=(\n'
    printf '  "LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"\n' "$libdirs"
    printf '  %q\n' "OPAL_PREFIX=$root" "PMIX_MCA_mca_base_component_path=$arch/pmix2/lib/pmix" \
      "OMPI_MCA_mca_base_component_show_load_errors=0" "OMPI_MCA_btl_base_warn_component_unused=0" \
      "OMPI_MCA_mtl=^ofi" "OMPI_MCA_btl=^uct,openib,ofi" "OMPI_MCA_pml=^ucx" "OMPI_MCA_osc=^ucx,pt2pt"
    printf ')\n'
  } >"$unpack/env.sh"
  echo "gpu-deps-bundle.sh: ${#debs[@]} packages unpacked into $unpack" \
    "($(du -sm "$unpack" | cut -f1) MiB); source $unpack/env.sh"
  exit 0
fi
command -v apt-get >/dev/null && command -v apt-cache >/dev/null ||
  { echo "gpu-deps-bundle.sh: needs apt-get and apt-cache (run it on the Debian 12 machine)" >&2; exit 1; }

# What imerge's CMakeLists.txt finds (find_package, the OpenBLAS path) and what gpu-check.sh
# runs (mpirun for the 1-rank NCCL sweep).
roots=(
  libdnnl-dev ocl-icd-opencl-dev           # oneDNN 2.6 and the OpenCL its CMake config asks for
  libopenblas0-openmp libopenblas-openmp-dev  # OpenBLAS, the OpenMP build (CMakeLists.txt)
  libopenmpi-dev openmpi-bin               # mpi.h, libmpi, mpirun
  libcli11-dev nlohmann-json3-dev zlib1g-dev libstb-dev
  libgtest-dev libgmock-dev
)

# Package -> why it is left out. Runtime libraries the GPU image has in a newer version must
# stay out: an older copy on the library path would shadow them.
declare -A excluded=(
  # The Ubuntu 24.04 base system (present in the ubuntu:24.04 image).
  [libc6]="base system (glibc 2.39 there)"
  [libgcc-s1]="base system"
  [libstdc++6]="base system (GCC 13/14's, newer than Debian 12's)"
  [zlib1g]="base system (libz.so.1; gpu-check.sh points zlib1g-dev's libz.so at it)"
  [libudev1]="base system"
  [libzstd1]="base system"
  [liblzma5]="base system"
  [libbz2-1.0]="base system"
  [libselinux1]="base system"
  [libpcre2-8-0]="base system"
  [libacl1]="base system"
  [libattr1]="base system"
  [libaudit1]="base system"
  [libcap-ng0]="base system"
  [libcrypt1]="base system"
  [libgmp10]="base system"
  [libmd0]="base system"
  [libtinfo6]="base system"
  [libuuid1]="base system"
  [libdb5.3]="base system"
  [libffi8]="base system"
  [debconf]="base system (maintainer scripts only; dpkg -x runs none)"
  [dpkg]="base system"
  [tar]="base system"
  [perl-base]="base system"
  [adduser]="base system (maintainer scripts only)"
  [passwd]="base system"
  [debianutils]="base system"
  [gcc-12-base]="an empty marker package (copyright files)"
  # The GPU image's compiler: nvcc needs gcc/g++ there, and brings its runtime libraries.
  [libgomp1]="the GPU image's GCC runtime (newer; imerge itself is compiled there with -fopenmp)"
  [libc6-dev]="the GPU image's compiler toolchain"
  [libc-dev]="the GPU image's compiler toolchain"
  [libstdc++-12-dev]="the GPU image's compiler toolchain"
  [gcc]="the GPU image's compiler toolchain"
  [cpp]="the GPU image's compiler toolchain"
  # Never loaded by a single-machine C/C++ build and run.
  [gfortran-12]="Open MPI's Fortran bindings (imerge uses the C interface)"
  [gfortran-mod-15]="Open MPI's Fortran modules"
  [googletest]="GoogleTest's sources (libgtest-dev ships the built libraries)"
  [libjs-jquery]="Open MPI's HTML documentation"
  [libjs-jquery-ui]="Open MPI's HTML documentation"
  [openssh-client]="mpirun's launch on other hosts (one host here)"
  [ssh-client]="mpirun's launch on other hosts (one host here)"
  [libibverbs-dev]="headers for building Open MPI components"
  [libhwloc-dev]="headers for building Open MPI components"
  [libevent-dev]="headers for building Open MPI components"
  [libpmix-dev]="headers for building Open MPI components"
  [libhwloc-plugins]="optional hwloc plugins (X11, NVML, OpenCL discovery), loaded only if present"
  [libfabric1]="network transport (OFI), an optional MCA component; Debian disables it anyway"
  [libucx0]="network transport (UCX), an optional MCA component; Debian disables it anyway"
  [libibverbs1]="InfiniBand transport, an optional MCA component"
  [libpsm2-2]="Omni-Path transport, an optional MCA component"
  [libpsm-infinipath1]="InfiniPath transport, an optional MCA component"
  [librdmacm1]="RDMA transport, an optional MCA component"
  [libnl-3-200]="netlink, only for the InfiniBand components"
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"  # apt-get download as root hands the download to the _apt user

# ---- the closure ---------------------------------------------------------------------------
excluded_names=$(printf '%s\n' "${!excluded[@]}")
python3 - "$work/packages" "$work/met_exclusions" "${roots[@]}" <<PYTHON
import re, subprocess, sys

out_packages, out_excluded, roots = sys.argv[1], sys.argv[2], sys.argv[3:]
excluded = set("""$excluded_names""".split())

def show(name):
    """The candidate's control fields, or None for a virtual package."""
    result = subprocess.run(["apt-cache", "show", "--no-all-versions", name],
                            capture_output=True, text=True)
    if result.returncode != 0 or not result.stdout.strip():
        return None
    fields, key = {}, None
    for line in result.stdout.splitlines():
        if not line:
            break
        if line[0] in " \t" and key:
            fields[key] += " " + line.strip()
        elif ":" in line:
            key, value = line.split(":", 1)
            fields[key] = value.strip()
    return fields

def providers(name):
    result = subprocess.run(["apt-cache", "showpkg", name], capture_output=True, text=True)
    text = result.stdout.split("Reverse Provides:", 1)
    return [line.split()[0] for line in text[1].splitlines() if line.strip()] if len(text) > 1 else []

def groups(fields):
    for key in ("Pre-Depends", "Depends"):
        for group in filter(None, (g.strip() for g in fields.get(key, "").split(","))):
            yield [re.sub(r"[ (:].*", "", alternative.strip()) for alternative in group.split("|")]

chosen, met, queue = {}, set(), list(roots)
while queue:
    name = queue.pop(0)
    if name in chosen:
        continue
    fields = show(name)
    if fields is None:
        sys.exit("gpu-deps-bundle.sh: no package %r in the apt lists (apt-get update?)" % name)
    chosen[name] = fields["Version"]
    for group in groups(fields):
        if any(a in chosen for a in group):
            continue
        done_by_exclusion = [a for a in group if a in excluded]
        if done_by_exclusion:
            met.add(done_by_exclusion[0])
            continue
        real = [a for a in group if show(a) is not None]
        if real:
            queue.append(real[0])
            continue
        # Only virtual packages: take a provider (one already chosen, else the first).
        candidates = [p for a in group for p in providers(a)]
        if not candidates:
            sys.exit("gpu-deps-bundle.sh: nothing provides %s (needed by %s)" % (group, name))
        picked = next((p for p in candidates if p in chosen or p in excluded), candidates[0])
        if picked in excluded:
            met.add(picked)
        else:
            queue.append(picked)
with open(out_packages, "w") as f:
    f.writelines("%s=%s\n" % item for item in sorted(chosen.items()))
with open(out_excluded, "w") as f:
    f.writelines(name + "\n" for name in sorted(met))
PYTHON

# ---- download ------------------------------------------------------------------------------
mkdir -p "$work/debs"
(cd "$work/debs" && xargs apt-get download -q=2 <"$work/packages")
total=$(du -cb "$work"/debs/*.deb | tail -1 | cut -f1)
limit=$((limit_mib * 1024 * 1024))
if ((total > limit)); then
  echo "gpu-deps-bundle.sh: the bundle is $((total / 1024 / 1024)) MiB, over --limit-mib" \
    "$limit_mib; the biggest packages:" >&2
  ls -S -l "$work"/debs/*.deb | head -8 >&2
  exit 1
fi

rm -rf "$out" && mkdir -p "$out"
mv "$work"/debs/*.deb "$out"/
{
  echo "# scripts/gpu-deps-bundle.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ), $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "# package version bytes"
  for deb in "$out"/*.deb; do
    echo "$(dpkg-deb --showformat='${Package} ${Version}' -W "$deb") $(stat -c %s "$deb")"
  done
  echo "# total $total bytes"
  echo "# left out (met in the closure), and why:"
  while read -r name; do echo "#   $name: ${excluded[$name]}"; done <"$work/met_exclusions"
} >"$out/MANIFEST"
echo "gpu-deps-bundle.sh: $(ls "$out"/*.deb | wc -l) packages, $((total / 1024)) KiB in $out" \
  "(limit $limit_mib MiB); $out/MANIFEST lists them and what was left out"

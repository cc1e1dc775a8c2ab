# Shared by check_abi.sh and update_baseline.sh (sourced, not run).
#
# The ABI of libaotrun.so.1 is judged on a library built for that purpose:
# its own CMake configure (Debug: -g -O0, so every function and type is in
# the DWARF and nothing is inlined away), only the `aotrun` target, no
# sanitizers.

abi_die() { echo "abi: $*" >&2; exit 2; }

# abi_build_debug_lib SOURCE_DIR BUILD_DIR [CMAKE_ARGS...] -> prints the path
# of the built libaotrun.so.1.
abi_build_debug_lib() {
  local src=$1 build=$2; shift 2
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_FLAGS_DEBUG="-g -O0" -DCMAKE_CXX_FLAGS_DEBUG="-g -O0" \
    -DAOTRUN_BUILD_TESTS=OFF -DAOTRUN_BUILD_EXAMPLES=OFF -DAOTRUN_BUILD_TOOLS=OFF \
    -DAOTRUN_BUILD_BENCH=OFF -DAOTRUN_BUILD_RUST=OFF -DAOTRUN_BUILD_COMPAT=OFF \
    -DAOTRUN_SANITIZE= "$@" >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log" >&2; abi_die "configure of the Debug library failed (log above)"; }
  cmake --build "$build" --target aotrun -j "${ABI_BUILD_JOBS:-2}" >"$build.build.log" 2>&1 ||
    { tail -50 "$build.build.log" >&2; abi_die "build of the Debug library failed (log tail above)"; }
  local lib
  lib=$(find "$build" -name libaotrun.so.1 \( -type f -o -type l \) -print -quit)
  [[ -n "$lib" ]] || abi_die "no libaotrun.so.1 under $build after the build"
  echo "$lib"
}

# abi_dump LIB OUT HEADERS_DIR EXTRA_HEADER: the abidw XML of LIB.
# Paths are stripped (the baseline must not depend on where it was built)
# and types not defined in the public headers are dropped: aotrun_status and
# the other handles are opaque, their insides are not ABI.
abi_dump() {
  local lib=$1 out=$2 hdir=$3 hfile=$4
  local args=(--no-corpus-path --no-comp-dir-path --short-locs --no-architecture --exported-interfaces-only
    --drop-private-types --headers-dir "$hdir")
  [[ -n "$hfile" ]] && args+=(--header-file "$hfile")
  abidw "${args[@]}" --out-file "$out" "$lib" || abi_die "abidw failed on $lib"
}

# abi_exported_symbols LIB: one line per symbol LIB defines and exports:
# "<version node> <name>", "- <name>" when unversioned. Version-definition
# symbols (ABS, named like their node) are left out.
abi_exported_symbols() {
  readelf --dyn-syms -W "$1" | awk '
    $1 ~ /^[0-9]+:$/ && NF >= 8 {
      bind = $5; vis = $6; ndx = $7; name = $8
      if (ndx == "UND") next
      if (bind != "GLOBAL" && bind != "WEAK" && bind != "GNU_UNIQUE") next
      if (vis != "DEFAULT" && vis != "PROTECTED") next
      node = "-"
      if (index(name, "@") > 0) {
        at = index(name, "@"); base = substr(name, 1, at - 1)
        node = substr(name, at + 1); sub(/^@/, "", node)
        name = base
      }
      if (ndx == "ABS" && (node == "-" || node == name) && name ~ /^[A-Za-z_][A-Za-z0-9_]*_[0-9]+(\.[0-9]+)*$/) next
      print node, name
    }' | sort -u
}

# abi_map_symbols MAP: "<node> <name>" for every name in a global: section of
# the GNU version script MAP.
abi_map_symbols() {
  sed -e 's://.*$::' -e 's:#.*$::' "$1" | tr '\n' ' ' | sed -e 's:/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/::g' |
    awk '{
      gsub(/[{};]/, " & ")
      n = split($0, t, /[ \t]+/)
      node = ""; section = ""; depth = 0
      for (i = 1; i <= n; ++i) {
        w = t[i]
        if (w == "") continue
        if (w == "{") { ++depth; continue }
        if (w == "}") { --depth; if (depth == 0) { node = ""; section = "" } continue }
        # "} AOTRUN_1.0;" names the node inherited: the next name is a new node.
        if (w == ";") { if (depth == 0) node = ""; continue }
        if (depth == 0) { if (node == "") node = w; continue }
        if (w == "global:" || w == "local:") { section = w; continue }
        if (w ~ /:$/) { section = w; continue }
        if (section == "global:") print node, w
      }
    }' | sort -u
}

# abi_map_nodes MAP: the version nodes MAP defines, in file order.
abi_map_nodes() {
  sed -e 's://.*$::' -e 's:#.*$::' "$1" | tr '\n' ' ' | sed -e 's:/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/::g' |
    grep -oE '(^|[};])[[:space:]]*[A-Za-z_][A-Za-z0-9_.]*[[:space:]]*\{' |
    sed -E 's/^[};]?[[:space:]]*//; s/[[:space:]]*\{$//'
}

# abi_header_functions HEADER: names of the functions HEADER declares with
# the AOTRUN_API marker (what the library must export).
abi_header_functions() {
  perl -0777 -ne 's{/\*.*?\*/}{}gs; s{//[^\n]*}{}g; s{^[ \t]*#[^\n]*}{}mg;
    for my $decl (split /;/) { print "$1\n" if $decl =~ /\bAOTRUN_API\b[^(]*?\b(\w+)\s*\(/s }' "$1" | sort -u
}

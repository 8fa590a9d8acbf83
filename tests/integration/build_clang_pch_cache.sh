#!/usr/bin/env bash
# The clang build's compiler cache works across clones (cmake/ClangPchCache.cmake): a small
# project with a precompiled header, built with clang through ccache in one folder, then copied
# to another path and built there from nothing, takes every object from the cache; a file changed
# in a clone then compiles against that clone's own header (one taken from the cache would name
# another clone's files and their times, which clang refuses).
source "$SHIMKEEPER_SOURCE_DIR/tests/support/common.sh"
sk_init

command -v clang++-16 >/dev/null || skip "clang++-16 is needed"
command -v ccache >/dev/null || skip "ccache is needed"
export CCACHE_DIR="$T/ccache" CCACHE_NOHASHDIR=1 CCACHE_SLOPPINESS=pch_defines,time_macros
unset CCACHE_DISABLE CCACHE_PCH_EXTSUM

mkdir -p "$T/one/src"
cat >"$T/one/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(pch_cache LANGUAGES CXX)
list(APPEND CMAKE_MODULE_PATH "$SHIMKEEPER_SOURCE_DIR/cmake")
include(ClangPchCache)
add_library(parts STATIC src/a.cpp src/b.cpp src/c.cpp)
target_precompile_headers(parts PRIVATE <map> <string> <vector>)
CMAKE
for part in a b c; do
    printf 'int %s_size() { std::map<std::string, std::vector<int>> m{{"%s", {1, 2}}}; return int(m.size()); }\n' \
        "$part" "$part" >"$T/one/src/$part.cpp"
done
cp -r "$T/one" "$T/two"

# build FOLDER: configures and builds it as scripts/test builds the asan preset; prints the
# compiler cache's hits and misses of that build ("HITS MISSES").
build() {
    CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$1" \
        cmake -S "$1" -B "$1/build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-16 >"$1/configure.log" 2>&1 ||
        fail "configuring $1 failed: $(tail -5 "$1/configure.log")"
    ccache --zero-stats >/dev/null
    CCACHE_BASEDIR="$1" cmake --build "$1/build" >"$1/build.log" 2>&1 ||
        fail "building $1 failed: $(tail -5 "$1/build.log")"
    ccache --print-stats | awk -F'\t' '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { hits += $2 }
        $1 == "cache_miss" { misses = $2 } END { print hits + 0, misses + 0 }'
}

read -r hits misses < <(build "$T/one")
((hits == 0 && misses == 3)) || fail "the first build: $hits hits, $misses misses; expected 0 and 3"
read -r hits misses < <(build "$T/two")
((hits == 3 && misses == 0)) ||
    fail "the copy at another path: $hits hits, $misses misses; expected every object (3) from the cache"

printf 'int b_more() { return int(std::string("more").size()); }\n' >>"$T/two/src/b.cpp"
read -r hits misses < <(build "$T/two")
((hits == 0 && misses == 1)) ||
    fail "the changed file in the copy: $hits hits, $misses misses; expected 1 miss alone"

# The first folder made anew at its old path, as the next clone of a CI that clones to one path,
# with a change of its own: the unchanged files come from the cache, the changed one compiles.
rm -rf "$T/one"
cp -r "$T/two" "$T/one"
rm -rf "$T/one/build"
printf 'int b_other() { return 2; }\n' >>"$T/one/src/b.cpp"
read -r hits misses < <(build "$T/one")
((hits == 2 && misses == 1)) ||
    fail "a fresh folder at the first one's path: $hits hits, $misses misses; expected 2 and 1"
echo "a clone at another path took every object from the cache; changed files compiled against" \
    "their folder's own header"

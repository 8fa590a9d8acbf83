# clang's precompiled header names the clone's paths and times, so ccache (scripts/test) missed
# for every file using it in a fresh clone. Through ccache it goes through ccache-clang-pch
# (beside this file), which stands a path-free hash in for it, and the files using it name it by
# `-include` (clang's driver finds HEADER.pch; ccache makes the path relative to the clone)
# instead of CMake's absolute -Xclang options: a clang build then hits the cache in a fresh clone,
# as GCC's builds do. tests/integration/build_clang_pch_cache.sh builds a small project in two
# folders.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache$")
  set(CMAKE_CXX_COMPILE_OPTIONS_USE_PCH -include <PCH_HEADER>)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_CURRENT_LIST_DIR}/ccache-clang-pch
    ${CMAKE_CXX_COMPILER_LAUNCHER})
endif()

# Every dependency comes from Debian's packages (see scripts/install-deps).
find_package(PkgConfig REQUIRED)
pkg_check_modules(SYSTEMD REQUIRED IMPORTED_TARGET libsystemd)
pkg_check_modules(LIBARCHIVE REQUIRED IMPORTED_TARGET libarchive)
# Inflates gzip artifacts (src/shimkeeper/archive/gzip_inflater.hpp says why).
pkg_check_modules(LIBISAL REQUIRED IMPORTED_TARGET libisal)
# kubeconfig only (src/shimkeeper/kubeapi); the API itself speaks JSON.
pkg_check_modules(YAMLCPP REQUIRED IMPORTED_TARGET yaml-cpp)
# The coordinator's probes and /metrics (src/shimkeeper/httpserve) only.
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
find_package(CURL REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Threads REQUIRED)
if(SHIMKEEPER_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
include(Protobuf)

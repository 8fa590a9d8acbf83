#include "shimkeeper/spec/architecture.hpp"

#include <array>
#include <sys/utsname.h>
#include <utility>

namespace shimkeeper::spec {

namespace {

// (alias, canonical) pairs. The kernel's names come from uname -m; the canonical ones are
// Go's GOARCH values, which Kubernetes uses for the kubernetes.io/arch label.
constexpr std::array<std::pair<std::string_view, std::string_view>, 22> k_aliases{{
    {"x86_64", "amd64"},      {"x86-64", "amd64"},    {"amd64", "amd64"},
    {"aarch64", "arm64"},     {"arm64", "arm64"},     {"armv8l", "arm"},
    {"armv7l", "arm"},        {"armv7", "arm"},       {"armv6l", "arm"},
    {"armhf", "arm"},         {"arm", "arm"},         {"i386", "386"},
    {"i486", "386"},          {"i586", "386"},        {"i686", "386"},
    {"x86", "386"},           {"386", "386"},         {"ppc64le", "ppc64le"},
    {"s390x", "s390x"},       {"riscv64", "riscv64"}, {"loongarch64", "loong64"},
    {"mips64el", "mips64le"},
}};

} // namespace

std::string normalise_architecture(std::string_view name) {
    std::string lower(name);
    for (char& c : lower) {
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
    }
    for (const auto& [alias, canonical] : k_aliases) {
        if (lower == alias) {
            return std::string(canonical);
        }
    }
    return lower;
}

std::string node_architecture() {
    struct utsname info {};
    if (::uname(&info) != 0) {
        // uname(2) only fails for a bad pointer; report an architecture no entry will match.
        return "unknown";
    }
    return normalise_architecture(info.machine);
}

} // namespace shimkeeper::spec

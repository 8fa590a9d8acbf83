#include "shimkeeper/containerd/version.hpp"

#include "shimkeeper/containerd/program.hpp"

#include <charconv>
#include <chrono>
#include <sstream>

namespace shimkeeper::containerd {

std::string ContainerdVersion::to_string() const {
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

namespace {

std::optional<ContainerdVersion> parse_token(std::string_view token) {
    if (token.starts_with('v')) {
        token.remove_prefix(1);
    }
    ContainerdVersion v;
    const char* p = token.data();
    const char* end = token.data() + token.size();
    for (int* part : {&v.major, &v.minor, &v.patch}) {
        auto [next, ec] = std::from_chars(p, end, *part);
        if (ec != std::errc{} || next == p) {
            return std::nullopt;
        }
        p = next;
        if (part != &v.patch) {
            if (p == end || *p != '.') {
                return std::nullopt;
            }
            ++p;
        }
    }
    return v;
}

} // namespace

std::optional<ContainerdVersion> parse_containerd_version(std::string_view output) {
    std::istringstream words{std::string(output)};
    std::string word;
    while (words >> word) {
        if (auto v = parse_token(word)) {
            return v;
        }
    }
    return std::nullopt;
}

util::Expected<ContainerdVersion> query_containerd_version(const std::filesystem::path& binary) {
    auto result = TRY(run_program({binary.string(), "--version"}, std::chrono::seconds(10)));
    if (result.exit_code != 0) {
        return util::fail(util::ErrorCode::external, binary.string() + " --version failed (exit " +
                                                         std::to_string(result.exit_code) +
                                                         "): " + result.output);
    }
    if (auto v = parse_containerd_version(result.output)) {
        return *v;
    }
    return util::fail(util::ErrorCode::external, "cannot find a version in the output of " +
                                                     binary.string() +
                                                     " --version: " + result.output);
}

} // namespace shimkeeper::containerd

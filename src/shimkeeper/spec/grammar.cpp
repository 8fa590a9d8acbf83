#include "shimkeeper/spec/grammar.hpp"

#include "shimkeeper/util/url_scheme.hpp"

#include <algorithm>

namespace shimkeeper::spec {

namespace {

constexpr std::size_t k_max_path_length = 4096;
constexpr std::size_t k_max_version_length = 128;
constexpr std::string_view k_containerd_prefix = "io.containerd.";

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_control(char c) {
    auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte == 0x7f;
}
bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool has_control_or_space(std::string_view text) {
    for (char c : text) {
        if (is_control(c) || is_space(c)) {
            return true;
        }
    }
    return false;
}

// segment := [a-z0-9] { [a-z0-9_-] }
bool is_runtime_segment(std::string_view segment) {
    if (segment.empty() || !is_lower_alnum(segment.front())) {
        return false;
    }
    for (char c : segment) {
        if (!is_lower_alnum(c) && c != '_' && c != '-') {
            return false;
        }
    }
    return true;
}

// version := "v" digit { digit }
bool is_runtime_version(std::string_view version) {
    if (version.size() < 2 || version.front() != 'v') {
        return false;
    }
    for (char c : version.substr(1)) {
        if (!is_digit(c)) {
            return false;
        }
    }
    return true;
}

std::optional<std::string> runtime_path_problem(std::string_view path) {
    if (path.back() == '/') {
        return "an absolute runtime_type must name the shim binary itself, not a directory";
    }
    for (char c : path) {
        if (is_control(c) || is_space(c)) {
            return "an absolute runtime_type must not contain whitespace or control characters";
        }
        if (c == '"' || c == '\'' || c == '`') {
            return "an absolute runtime_type must not contain quotes";
        }
    }
    std::string_view rest = path;
    while (!rest.empty()) {
        std::size_t slash = rest.find('/');
        std::string_view component = rest.substr(0, slash);
        if (component == "..") {
            return "an absolute runtime_type must not contain '..' components";
        }
        rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    }
    return std::nullopt;
}

} // namespace

bool is_lower_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool is_valid_name(std::string_view name) {
    if (name.empty() || name.size() > k_max_name_length) {
        return false;
    }
    if (!is_lower_alnum(name.front()) || !is_lower_alnum(name.back())) {
        return false;
    }
    for (char c : name) {
        if (!is_lower_alnum(c) && c != '-' && c != '.' && c != '_') {
            return false;
        }
    }
    return true;
}

std::string default_binary_for(std::string_view runtime_type) {
    if (runtime_type.starts_with('/')) {
        return std::string(runtime_type.substr(runtime_type.rfind('/') + 1));
    }
    // containerd's runtime v2 "Binary Naming": the last two dot-separated parts give
    // containerd-shim-<name>-<version>.
    std::size_t last_dot = runtime_type.rfind('.');
    if (last_dot == std::string_view::npos || last_dot == 0) {
        return {};
    }
    std::size_t name_dot = runtime_type.rfind('.', last_dot - 1);
    std::size_t name_start = name_dot == std::string_view::npos ? 0 : name_dot + 1;
    std::string_view name = runtime_type.substr(name_start, last_dot - name_start);
    std::string_view version = runtime_type.substr(last_dot + 1);
    if (name.empty() || version.empty()) {
        return {};
    }
    return "containerd-shim-" + std::string(name) + "-" + std::string(version);
}

std::optional<std::string> runtime_type_said_by_binary(std::string_view binary) {
    constexpr std::string_view prefix = "containerd-shim-";
    if (!binary.starts_with(prefix)) {
        return std::nullopt;
    }
    const std::size_t dash = binary.rfind("-v");
    if (dash == std::string_view::npos || dash <= prefix.size()) {
        return std::nullopt;
    }
    std::string_view name = binary.substr(prefix.size(), dash - prefix.size());
    std::string_view version = binary.substr(dash + 1);
    std::string runtime_type = "io.containerd." + std::string(name) + "." + std::string(version);
    // The name must be one segment of the grammar below (no '.'), so that the round trip through
    // containerd's own rule gives back exactly this binary.
    if (name.find('.') != std::string_view::npos || runtime_type_problem(runtime_type) ||
        default_binary_for(runtime_type) != binary) {
        return std::nullopt;
    }
    return runtime_type;
}

std::optional<std::string> runtime_type_problem(std::string_view runtime_type) {
    if (runtime_type.empty()) {
        return "runtime_type is empty";
    }
    if (runtime_type.size() > k_max_path_length) {
        return "runtime_type is longer than 4096 characters";
    }
    if (runtime_type.front() == '/') {
        return runtime_path_problem(runtime_type);
    }
    const std::string expected =
        "runtime_type must be io.containerd.<name>.<version> (lowercase name such as 'spin' or "
        "'kata-qemu', version such as 'v2') or the shim's absolute path";
    if (!runtime_type.starts_with(k_containerd_prefix)) {
        return expected;
    }
    std::string_view rest = runtime_type.substr(k_containerd_prefix.size());
    std::size_t last_dot = rest.rfind('.');
    if (last_dot == std::string_view::npos || !is_runtime_version(rest.substr(last_dot + 1))) {
        return expected;
    }
    std::string_view names = rest.substr(0, last_dot);
    while (true) {
        std::size_t dot = names.find('.');
        if (!is_runtime_segment(names.substr(0, dot))) {
            return expected;
        }
        if (dot == std::string_view::npos) {
            return std::nullopt;
        }
        names = names.substr(dot + 1);
    }
}

std::optional<std::string> binary_problem(std::string_view binary) {
    if (binary.empty()) {
        return "binary is empty";
    }
    if (binary.size() > k_max_file_name_length) {
        return "binary is longer than 255 bytes, the longest file name Linux allows";
    }
    if (binary.find('/') != std::string_view::npos) {
        return "binary must be a plain file name inside the archive, without '/'";
    }
    if (binary.find("..") != std::string_view::npos || binary == ".") {
        return "binary must not be '.' or contain '..'";
    }
    if (has_control_or_space(binary)) {
        return "binary must not contain whitespace or control characters";
    }
    return std::nullopt;
}

std::optional<std::string> version_problem(std::string_view version) {
    if (version.size() > k_max_version_length) {
        return "version is longer than 128 characters";
    }
    for (char c : version) {
        auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte > 0x7e) {
            return "version may only hold printable ASCII characters";
        }
    }
    return std::nullopt;
}

bool is_valid_node_name(std::string_view name) {
    if (name.empty() || name.size() > 253) {
        return false;
    }
    auto alnum = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    };
    if (!alnum(name.front()) || !alnum(name.back())) {
        return false;
    }
    return std::all_of(name.begin(), name.end(),
                       [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

std::optional<std::string> url_problem(std::string_view url) {
    if (url.empty()) {
        return "url is empty";
    }
    if (has_control_or_space(url)) {
        return "url must not contain whitespace or control characters (percent-encode them)";
    }
    std::size_t colon = url.find(':');
    if (colon == std::string_view::npos || colon == 0) {
        return "url has no scheme; use https://, http:// or file://";
    }
    std::string scheme(url.substr(0, colon));
    const util::UrlScheme known = util::scheme_of(std::string(scheme) + "://");
    if (known == util::UrlScheme::other) {
        return "url scheme '" + scheme + "' is not supported; use https://, http:// or file://";
    }
    if (util::scheme_of(url) == util::UrlScheme::other) {
        return "url must be " + scheme + "://...";
    }
    std::string_view rest = url.substr(colon + 3);
    if (known == util::UrlScheme::file) {
        if (!rest.starts_with('/')) {
            return "a file url needs an absolute path: file:///path/to/archive";
        }
    } else if (rest.empty() || rest.front() == '/') {
        return "url has no host";
    }
    return std::nullopt;
}

std::optional<std::string> normalise_sha256(std::string_view digest) {
    if (digest.size() != 64) {
        return std::nullopt;
    }
    std::string lower(digest);
    for (char& c : lower) {
        if (c >= 'A' && c <= 'F') {
            c = static_cast<char>(c - 'A' + 'a');
        } else if (!is_digit(c) && !(c >= 'a' && c <= 'f')) {
            return std::nullopt;
        }
    }
    return lower;
}

std::optional<std::string> absolute_path_problem(std::string_view path) {
    if (!path.starts_with('/')) {
        return "must be an absolute path (starting with '/')";
    }
    if (path.size() > k_max_path_length) {
        return "is longer than 4096 characters";
    }
    for (char c : path) {
        if (is_control(c)) {
            return "must not contain control characters";
        }
    }
    return std::nullopt;
}

} // namespace shimkeeper::spec

#include "shimkeeper/containerd/package_version.hpp"

#include <vector>

namespace shimkeeper::containerd {

namespace {

struct Stanza {
    std::string package;
    std::string status;
    std::string version;
};

// deb822: stanzas separated by blank lines, "Field: value" lines, continuation lines start with
// a space (only Description-like fields use them; none we read).
std::vector<Stanza> stanzas(std::string_view text) {
    std::vector<Stanza> out(1);
    std::size_t start = 0;
    while (start <= text.size()) {
        auto end = text.find('\n', start);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        const std::string_view line = text.substr(start, end - start);
        start = end + 1;
        if (line.empty()) {
            if (!out.back().package.empty()) {
                out.emplace_back();
            }
            continue;
        }
        const auto colon = line.find(':');
        if (line.front() == ' ' || line.front() == '\t' || colon == std::string_view::npos) {
            continue;
        }
        const std::string_view name = line.substr(0, colon);
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
            value.remove_prefix(1);
        }
        if (name == "Package") {
            out.back().package = value;
        } else if (name == "Status") {
            out.back().status = value;
        } else if (name == "Version") {
            out.back().version = value;
        }
    }
    return out;
}

bool installed(const std::string& status) {
    // "want flag state": only a fully installed package counts (not config-files, half-installed).
    return status.ends_with(" installed");
}

} // namespace

util::Expected<std::optional<PackagedContainerd>> dpkg_containerd(std::string_view status_text,
                                                                  const std::string& file) {
    for (const auto& stanza : stanzas(status_text)) {
        if ((stanza.package != "containerd" && stanza.package != "containerd.io") ||
            !installed(stanza.status)) {
            continue;
        }
        // An epoch ("1:1.7.0-1") is not part of containerd's version.
        std::string_view upstream = stanza.version;
        if (auto colon = upstream.find(':'); colon != std::string_view::npos) {
            upstream.remove_prefix(colon + 1);
        }
        auto parsed = parse_containerd_version(upstream);
        if (!parsed) {
            return util::fail(util::ErrorCode::invalid_input,
                              file + ": package " + stanza.package + " has Version \"" +
                                  stanza.version +
                                  "\", which holds no containerd version X.Y.Z; give "
                                  "--containerd-version");
        }
        return PackagedContainerd{stanza.package, stanza.version, *parsed};
    }
    return std::nullopt;
}

} // namespace shimkeeper::containerd

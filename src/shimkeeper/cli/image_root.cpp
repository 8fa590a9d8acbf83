#include "shimkeeper/cli/image_root.hpp"

#include "shimkeeper/containerd/package_version.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"

#include <cerrno>
#include <unistd.h>

namespace shimkeeper::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_dpkg_status = "/var/lib/dpkg/status";
constexpr const char* k_wants = "/etc/systemd/system/multi-user.target.wants";

} // namespace

util::Expected<containerd::KnownVersion> image_containerd_version(const util::HostRoot& root,
                                                                  const std::string& flag) {
    if (!flag.empty()) {
        auto parsed = containerd::parse_containerd_version(flag);
        if (!parsed || parsed->to_string() != (flag.starts_with('v') ? flag.substr(1) : flag)) {
            return util::fail(util::ErrorCode::invalid_input,
                              "--containerd-version '" + flag +
                                  "' is not a version like 1.7.22 (major.minor.patch)");
        }
        return containerd::KnownVersion{*parsed, "given with --containerd-version"};
    }
    const fs::path status = root.on_host(k_dpkg_status);
    std::error_code ec;
    if (!fs::exists(status, ec)) {
        const bool rpm = fs::exists(root.on_host("/var/lib/rpm"), ec) ||
                         fs::exists(root.on_host("/usr/lib/sysimage/rpm"), ec);
        return util::fail(util::ErrorCode::invalid_input,
                          root.on_host("/").string() +
                              (rpm ? " holds an rpm database, which shimkeeper does not read"
                                   : " has no dpkg database (" + status.string() + ")") +
                              ": give the image's containerd version with --containerd-version");
    }
    const auto text = TRY(util::read_file(status));
    auto found = TRY(containerd::dpkg_containerd(text, status.string()));
    if (!found) {
        return util::fail(util::ErrorCode::invalid_input,
                          "the image has no containerd: neither package containerd nor "
                          "containerd.io is installed according to " +
                              status.string() + "; install containerd into the image first");
    }
    std::string source = k_dpkg_status;
    source += ": " + found->package + " " + found->version;
    return containerd::KnownVersion{found->parsed, source};
}

util::Expected<fs::path> packaged_unit(const util::HostRoot& root) {
    for (const char* dir : {"/lib/systemd/system", "/usr/lib/systemd/system"}) {
        const fs::path unit = fs::path(dir) / k_agent_unit;
        std::error_code ec;
        if (fs::is_regular_file(root.on_host(unit), ec)) {
            return unit;
        }
    }
    std::string message = k_agent_unit;
    message += " is in neither " + root.on_host("/lib/systemd/system").string() + " nor " +
               root.on_host("/usr/lib/systemd/system").string() +
               ": install the shimkeeper package into the image before baking";
    return util::fail(util::ErrorCode::invalid_input, message);
}

util::Expected<Enabled> enable_unit(const util::HostRoot& root, const fs::path& unit) {
    const fs::path wants = root.on_host(k_wants);
    const fs::path link = wants / k_agent_unit;
    std::error_code ec;
    if (fs::is_symlink(link, ec)) {
        const fs::path target = fs::read_symlink(link, ec);
        if (!ec && target.filename() == k_agent_unit) {
            return Enabled::already;
        }
    }
    TRY(util::create_directories(wants));
    // Symlink to a temp name, then rename over: never a moment without a link, never half one.
    const fs::path temp = wants / ("." + std::string(k_agent_unit) + ".new");
    ::unlink(temp.c_str());
    if (::symlink(unit.c_str(), temp.c_str()) != 0) {
        return std::unexpected(
            util::Error::from_errno(util::ErrorCode::io, "cannot create " + temp.string(), errno));
    }
    if (::rename(temp.c_str(), link.c_str()) != 0) {
        const int err = errno;
        ::unlink(temp.c_str());
        return std::unexpected(
            util::Error::from_errno(util::ErrorCode::io, "cannot create " + link.string(), err));
    }
    TRY(util::fsync_directory(wants));
    return Enabled::now;
}

} // namespace shimkeeper::cli

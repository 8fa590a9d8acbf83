#include "shimkeeper/fetch/oci/platform.hpp"

#include "shimkeeper/spec/architecture.hpp"

namespace shimkeeper::fetch::oci {

namespace {

std::string platform_text(const Platform& platform) {
    return platform.os + "/" + platform.architecture +
           (platform.variant.empty() ? "" : "/" + platform.variant);
}

// arm64 images are published with variant v8 or none; any other variant (or for other
// architectures, any variant) is taken only when nothing plainer exists.
int preference(const Platform& platform) {
    if (platform.variant.empty() || platform.variant == "v8") {
        return 0;
    }
    return 1;
}

} // namespace

util::Expected<Descriptor> select_platform(const Index& index, const std::string& architecture,
                                           const std::string& what) {
    const Descriptor* best = nullptr;
    std::string offered;
    for (const Descriptor& entry : index.manifests) {
        if (!entry.platform) {
            continue;
        }
        offered += (offered.empty() ? "" : ", ") + platform_text(*entry.platform);
        if (entry.platform->os != "linux" ||
            spec::normalise_architecture(entry.platform->architecture) != architecture) {
            continue;
        }
        if (best == nullptr || preference(*entry.platform) < preference(*best->platform)) {
            best = &entry;
        }
    }
    if (best == nullptr) {
        return util::fail(util::ErrorCode::not_found,
                          what + " has no entry for this node's platform linux/" + architecture +
                              " (it offers: " + (offered.empty() ? "none" : offered) +
                              "); use an image built for linux/" + architecture +
                              ", or a per-platform [[shim.fetch.platform]] oci reference");
    }
    return *best;
}

} // namespace shimkeeper::fetch::oci

#include "shimkeeper/reconcile/stage.hpp"

#include "shimkeeper/archive/unpack.hpp"
#include "shimkeeper/fetch/oci/auth_file.hpp"
#include "shimkeeper/fetch/oci/oci_fetch.hpp"
#include "shimkeeper/reconcile/fault.hpp"
#include "shimkeeper/reconcile/node.hpp"
#include "shimkeeper/spec/architecture.hpp"
#include "shimkeeper/spec/oci_reference.hpp"
#include "shimkeeper/store/locate_binary.hpp"
#include "shimkeeper/store/oci_record.hpp"
#include "shimkeeper/store/preflight.hpp"
#include "shimkeeper/store/tamper.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/remove_on_exit.hpp"

#include <cerrno>
#include <unistd.h>

namespace shimkeeper::reconcile {

namespace {

// containerd's documented registry host folder, used when it exists and nothing else is set.
constexpr std::string_view k_default_registry_hosts = "/etc/containerd/certs.d";

util::Expected<std::string> find_binary_in_store(const store::Store& store,
                                                 const spec::ShimSpec& shim,
                                                 const std::string& digest) {
    const std::filesystem::path dir = store.artifact_dir(digest);
    auto listing = TRY(store.artifact_listing(digest));
    auto found = store::locate_binary(listing, dir, shim.binary);
    if (!found) {
        return std::unexpected(
            std::move(found.error())
                .with_context("shim '" + shim.name + "': stored artifact sha256:" + digest));
    }
    return *found;
}

// A bare executable carries no name of its own: it is stored under the binary name of each shim
// that uses it. A fresh copy replacing the held folder takes every name the held one has (hard
// links to the verified file), so that no other shim's link is left dangling.
util::Expected<void> keep_bare_names(const store::Store& store, const std::string& digest,
                                     const std::filesystem::path& staging,
                                     const std::string& fresh_name) {
    const std::filesystem::path held = store.artifact_dir(digest);
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(held, ec)) {
        const std::string name = entry.path().filename().string();
        if (name == fresh_name || name.starts_with('.') ||
            !std::filesystem::is_regular_file(entry.symlink_status(ec))) {
            continue;
        }
        if (::link((staging / fresh_name).c_str(), (staging / name).c_str()) != 0) {
            return std::unexpected(util::Error::from_errno(
                util::ErrorCode::io, "cannot keep " + (held / name).string() + " in its fresh copy",
                errno));
        }
    }
    if (ec) {
        return std::unexpected(util::Error::from_errno(util::ErrorCode::io,
                                                       "cannot list " + held.string(), ec.value()));
    }
    return {};
}

// The manifest digest an OCI source is pinned to, if any.
std::optional<std::string> pinned_digest(const spec::FetchSource& source) {
    auto reference = spec::parse_oci_reference(source.oci);
    return reference ? reference->digest : std::nullopt;
}

struct Downloaded {
    fetch::DownloadResult result;
    std::optional<store::OciResolution> resolution; // OCI sources only
};

util::Expected<Downloaded> download_oci(const spec::ShimSpec& shim, const store::Store& store,
                                        fetch::Downloader& downloader,
                                        const StageOptions& options) {
    fetch::oci::RegistryContext context;
    context.downloader = &downloader;
    context.settings = options.fetch;
    context.tmp_dir = store.tmp_dir();
    context.label = shim.name;
    context.heartbeat = options.heartbeat;
    context.abandon = options.abandon;
    context.auth_files = options.fetch.auth_file
                             ? std::vector<std::filesystem::path>{*options.fetch.auth_file}
                             : fetch::oci::default_auth_files();
    fetch::oci::OciRequest request;
    request.reference = TRY(spec::parse_oci_reference(shim.fetch.oci));
    request.path = shim.fetch.path;
    request.architecture = spec::node_architecture();
    request.expected_sha256 = shim.fetch.sha256;
    // containerd's registry host folder is a node path, like its config.
    const auto& chosen = options.fetch.registry_config_path ? options.fetch.registry_config_path
                                                            : options.containerd_registry_hosts;
    std::filesystem::path hosts_dir =
        store.host_root().on_host(chosen.value_or(std::string(k_default_registry_hosts)));
    std::error_code ec;
    if (chosen || std::filesystem::is_directory(hosts_dir, ec)) {
        request.registry_config_dir = hosts_dir;
    }
    auto fetched = TRY(fetch::oci::fetch_oci(context, request));
    store::OciResolution resolution{shim.fetch.oci,
                                    shim.fetch.path,
                                    request.architecture,
                                    fetched.index_digest.value_or(""),
                                    fetched.manifest_digest,
                                    fetched.layer_digest,
                                    fetched.kind,
                                    fetched.file.sha256};
    return Downloaded{std::move(fetched.file), std::move(resolution)};
}

util::Expected<Downloaded> download_source(const spec::ShimSpec& shim, const store::Store& store,
                                           fetch::Downloader& downloader,
                                           const StageOptions& options) {
    if (!shim.fetch.oci.empty()) {
        return download_oci(shim, store, downloader, options);
    }
    fetch::DownloadRequest request;
    request.url = shim.fetch.url;
    request.expected_sha256 = shim.fetch.sha256;
    request.settings = options.fetch;
    request.label = shim.name;
    request.heartbeat = options.heartbeat;
    request.abandon = options.abandon;
    return Downloaded{TRY(downloader.download(request, store.tmp_dir())), std::nullopt};
}

// Remembers what a pinned reference resolved to, once its artifact is in the store.
util::Expected<void> remember_resolution(const spec::ShimSpec& shim, const store::Store& store,
                                         const std::optional<store::OciResolution>& resolution) {
    auto pinned = resolution ? pinned_digest(shim.fetch) : std::nullopt;
    if (!pinned) {
        return {};
    }
    return store::save_oci_resolution(store, *pinned, *resolution);
}

} // namespace

StageOptions stage_options_of(const Node& node) {
    StageOptions options;
    options.fetch = node.settings.fetch;
    options.heartbeat = node.heartbeat;
    options.abandon = node.abandon;
    options.containerd_registry_hosts = node.detection.registry_config_path;
    return options;
}

bool content_is_pinned(const spec::ShimSpec& shim) {
    return shim.fetch.sha256 || (!shim.fetch.oci.empty() && pinned_digest(shim.fetch));
}

std::optional<std::string> known_digest(const spec::ShimSpec& shim,
                                        const store::Generation* current,
                                        const store::Store& store) {
    if (shim.fetch.sha256) {
        return shim.fetch.sha256;
    }
    if (!shim.fetch.oci.empty()) {
        if (auto pinned = pinned_digest(shim.fetch)) {
            // A broken record is as good as none: the fetch resolves the reference again and
            // writes a new one.
            auto record = store::load_oci_resolution(store, *pinned, shim.fetch.path,
                                                     spec::node_architecture());
            if (record && *record) {
                return (*record)->artifact_digest;
            }
            return std::nullopt;
        }
    }
    const store::InstalledShim* have = current ? current->find(shim.name) : nullptr;
    if (have != nullptr && have->url == shim.fetch.display() && !have->digest.empty()) {
        return have->digest;
    }
    return std::nullopt;
}

util::Expected<std::optional<KnownArtifact>>
find_in_store(const spec::ShimSpec& shim, const std::string& digest, const store::Store& store) {
    if (!store.has_artifact(digest)) {
        return std::nullopt;
    }
    auto binary_path = find_binary_in_store(store, shim, digest);
    if (!binary_path) {
        return std::nullopt; // another binary name than the artifact holds: fetch proves it
    }
    auto integrity = TRY(store::check_binary_fingerprint(store, digest, *binary_path));
    if (integrity != store::Integrity::intact) {
        return std::nullopt;
    }
    return KnownArtifact{digest, *binary_path};
}

util::Expected<std::vector<std::optional<KnownArtifact>>>
known_artifacts(const std::vector<spec::ShimSpec>& shims, const store::Generation* current,
                const store::Store& store) {
    std::vector<std::optional<KnownArtifact>> known;
    for (const auto& shim : shims) {
        auto digest = known_digest(shim, current, store);
        known.push_back(digest ? TRY(find_in_store(shim, *digest, store)) : std::nullopt);
    }
    return known;
}

util::Expected<StagedArtifact> stage_shim(const spec::ShimSpec& shim,
                                          const std::optional<std::string>& digest,
                                          const store::Store& store, fetch::Downloader& downloader,
                                          const StageOptions& options, const util::Log& log) {
    TRY(store.ensure_layout());
    const std::string context = "shim '" + shim.name + "' (" + shim.location.to_string() + ")";

    // Content-addressed cache: a known digest already in the store costs no request at all,
    // unless its binary was changed by hand since (then it is fetched again: drift repair). The
    // changed copy stays in place until a fresh one is verified: containerd's config points into
    // it, and a node that cannot download must not be left with a handler and no binary.
    if (digest && store.has_artifact(*digest)) {
        auto found = TRY(find_in_store(shim, *digest, store));
        if (found) {
            log.debug(shim.name + ": sha256:" + *digest + " already in the store",
                      {.digest = "sha256:" + *digest});
            for (const char* step : {"fetch", "preflight", "store"}) {
                fault_point(step); // nothing to do for each: the crash tests still stop here
            }
            return StagedArtifact{found->digest, found->binary_path, false, 0};
        }
        if (find_binary_in_store(store, shim, *digest)) {
            log.warning(shim.name + ": " + store.artifact_dir(*digest).string() +
                            " was changed by hand; fetching sha256:" + *digest +
                            " again (the changed copy stays until the fresh one is verified)",
                        {.digest = "sha256:" + *digest});
        } else {
            log.debug(shim.name + ": sha256:" + *digest + " in the store has no " + shim.binary +
                          "; fetching it to look (a bare executable takes each shim's name)",
                      {.digest = "sha256:" + *digest});
        }
    }

    auto downloaded = download_source(shim, store, downloader, options);
    if (!downloaded) {
        return std::unexpected(std::move(downloaded.error()).with_context(context));
    }
    const fetch::DownloadResult* download = &downloaded->result;
    util::RemoveOnExit download_guard(download->file);
    fault_point("fetch");
    if (!content_is_pinned(shim)) {
        log.warning(shim.name + ": allow_unverified is set; downloaded artifact has sha256:" +
                        download->sha256 + " (pin it in the spec)",
                    {.digest = "sha256:" + download->sha256});
    }

    StagedArtifact staged;
    staged.digest = download->sha256;
    staged.downloaded = true;
    staged.size = download->size;
    // An unverified shim whose content we already hold, intact, needs no unpacking; a held copy
    // that was changed by hand is replaced by this download below.
    const bool held = store.has_artifact(staged.digest);
    if (held) {
        if (auto found = TRY(find_in_store(shim, staged.digest, store))) {
            staged.binary_path = found->binary_path;
            TRY(remember_resolution(shim, store, downloaded->resolution));
            fault_point("preflight");
            fault_point("store");
            return staged;
        }
    }

    auto staging = TRY(util::make_temp_dir(store.tmp_dir(), "stage-"));
    util::RemoveOnExit staging_guard(staging);
    auto unpacked = archive::unpack(download->file, staging, shim.binary);
    if (!unpacked) {
        return std::unexpected(
            std::move(unpacked.error()).with_context(context + ", " + shim.fetch.display()));
    }
    std::string binary = shim.binary;
    if (shim.runtime_type_from_artifact) {
        // The artifact says which binary (derive_runtime.hpp reads the name from the store).
        auto said = store::binary_saying_runtime_type(*unpacked, shim.handler);
        if (!said) {
            return std::unexpected(
                std::move(said.error()).with_context(context + ", " + shim.fetch.display()));
        }
        binary = *said;
    }
    auto binary_path = store::locate_binary(*unpacked, staging, binary);
    if (!binary_path) {
        return std::unexpected(std::move(binary_path.error()).with_context(context));
    }
    staged.binary_path = *binary_path;

    auto preflight = store::preflight(staging / staged.binary_path, options.preflight_timeout);
    if (!preflight) {
        return std::unexpected(std::move(preflight.error()).with_context(context));
    }
    fault_point("preflight");
    if (preflight->exit_status != 0) {
        log.warning(shim.name + ": '" + binary + " -v' exited with status " +
                        std::to_string(preflight->exit_status) + " (continuing: it did execute)",
                    {.digest = "sha256:" + staged.digest});
    }
    if (held && !unpacked->was_archive) {
        TRY(keep_bare_names(store, staged.digest, staging, staged.binary_path));
    }
    TRY(held ? store.replace_artifact(staging, staged.digest)
             : store.commit_artifact(staging, staged.digest));
    TRY(store::record_binary_fingerprint(store, staged.digest, staged.binary_path));
    TRY(remember_resolution(shim, store, downloaded->resolution));
    fault_point("store");
    return staged;
}

} // namespace shimkeeper::reconcile

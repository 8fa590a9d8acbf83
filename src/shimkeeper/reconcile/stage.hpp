// Staging: fetch -> verify -> unpack -> locate binary -> pre-flight -> store, for one shim.
// The store only ever receives complete, verified artifacts; a failure leaves it and bin/ as
// they were (every intermediate file lives in the store's tmp/ and is removed).
#pragma once

#include "shimkeeper/fetch/downloader.hpp"
#include "shimkeeper/reconcile/plan.hpp"
#include "shimkeeper/spec/agent_settings.hpp"
#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/store/store.hpp"
#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/log.hpp"

#include <chrono>
#include <functional>
#include <string>

namespace shimkeeper::reconcile {

struct StagedArtifact {
    std::string digest;
    std::string binary_path; // inside the artifact directory
    bool downloaded = false; // false: it was already in the store (zero HTTP requests)
    std::uint64_t size = 0;  // bytes downloaded
};

struct StageOptions {
    spec::FetchSettings fetch;
    std::chrono::milliseconds preflight_timeout{5'000};
    std::function<void()> heartbeat; // passed on to the download (DownloadRequest::heartbeat)
    std::function<bool()> abandon;   // and DownloadRequest::abandon
    // containerd's own registry host folder (its CRI registry.config_path), when known; the
    // [fetch] registry_config_path setting comes first, /etc/containerd/certs.d last.
    std::optional<std::string> containerd_registry_hosts;
};

struct Node;

// The staging options a node's settings and edges give (fetch settings, watchdog heartbeat,
// containerd's registry host folder): one transaction's, and staging ahead of a slot.
StageOptions stage_options_of(const Node& node);

// Whether the spec names its artifact's content for good: a sha256, or an OCI reference by
// manifest digest (a URL or a tag may serve other bytes tomorrow).
bool content_is_pinned(const spec::ShimSpec& shim);

// The digest a shim's artifact has without downloading: the pinned sha256, or for an unverified
// shim whose URL is unchanged the digest the current generation installed from it. (An
// unverified URL is fetched once; new content behind the same URL is picked up only when the URL
// changes or the spec pins a sha256, so that a no-op costs no request and plan == apply.)
// For a pinned OCI reference: the file digest it resolved to before (store::OciResolution).
std::optional<std::string> known_digest(const spec::ShimSpec& shim,
                                        const store::Generation* current,
                                        const store::Store& store);

// The artifact with that digest if the store holds it intact, else nullopt. Reads only.
util::Expected<std::optional<KnownArtifact>>
find_in_store(const spec::ShimSpec& shim, const std::string& digest, const store::Store& store);

// Everything a plan can know without the network: find_in_store of each known_digest.
util::Expected<std::vector<std::optional<KnownArtifact>>>
known_artifacts(const std::vector<spec::ShimSpec>& shims, const store::Generation* current,
                const store::Store& store);

// `digest`: known_digest(shim, current); when the store holds it intact, no request is made.
util::Expected<StagedArtifact> stage_shim(const spec::ShimSpec& shim,
                                          const std::optional<std::string>& digest,
                                          const store::Store& store, fetch::Downloader& downloader,
                                          const StageOptions& options, const util::Log& log);

} // namespace shimkeeper::reconcile

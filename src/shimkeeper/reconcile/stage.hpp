// Staging: fetch -> verify -> unpack -> locate binary -> pre-flight -> store, for one shim.
// The store only ever receives complete, verified artifacts; a failure leaves it and bin/ as
// they were (every intermediate file lives in the store's tmp/ and is removed).
#pragma once

#include "shimkeeper/fetch/downloader.hpp"
#include "shimkeeper/spec/agent_settings.hpp"
#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/store/store.hpp"
#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/log.hpp"

#include <chrono>
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
};

util::Expected<StagedArtifact> stage_shim(const spec::ShimSpec& shim, const store::Store& store,
                                          fetch::Downloader& downloader,
                                          const StageOptions& options, const util::Log& log);

} // namespace shimkeeper::reconcile

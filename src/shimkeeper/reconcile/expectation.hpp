// What a healthy containerd looks like for a set of installed shims, built from what it
// reported before the change.
#pragma once

#include "shimkeeper/health/cri_status.hpp"
#include "shimkeeper/health/evaluate.hpp"
#include "shimkeeper/health/wait_healthy.hpp"
#include "shimkeeper/store/state.hpp"
#include "shimkeeper/store/store.hpp"

#include <optional>
#include <set>
#include <vector>

namespace shimkeeper::reconcile {

// `before`: CRI status seen before the change (nullopt: containerd did not answer then).
// `dropped`: handlers this change removes on purpose; every other handler seen before must stay.
health::HealthExpectation expectation_for(const store::Store& store,
                                          const std::vector<store::InstalledShim>& shims,
                                          const std::optional<health::CriStatus>& before,
                                          const std::set<std::string>& dropped);

} // namespace shimkeeper::reconcile

#include "shimkeeper/cluster/agent/running_shim.hpp"

#include "shimkeeper/reconcile/record.hpp"

namespace shimkeeper::cluster::agent {

const store::InstalledShim* running(const store::StoreState& state, const std::string& name) {
    const store::Generation* current = state.current_generation();
    return current ? current->find(name) : nullptr;
}

bool runs_exactly(const store::InstalledShim* record, const spec::ShimSpec& spec) {
    return record != nullptr &&
           reconcile::differences(reconcile::record_of(spec, spec.fetch.sha256.value_or(""), ""),
                                  *record)
               .empty();
}

} // namespace shimkeeper::cluster::agent

#include "shimkeeper/cluster/agent/running_shim.hpp"

#include "shimkeeper/cluster/model/shim_object.hpp"
#include "shimkeeper/reconcile/record.hpp"

namespace shimkeeper::cluster::agent {

const spec::ShimSpec* desired_from(const spec::DesiredShims& desired, const std::string& name) {
    for (const spec::ShimSpec& spec : desired.shims) {
        if (spec.name == name && model::is_origin_of_shim(spec.location.to_string(), name)) {
            return &spec;
        }
    }
    return nullptr;
}

const store::InstalledShim* running(const store::StoreState& state, const std::string& name) {
    const store::Generation* current = state.current_generation();
    return current ? current->find(name) : nullptr;
}

bool runs_exactly(const store::InstalledShim* record, const spec::ShimSpec& spec) {
    if (record == nullptr) {
        return false;
    }
    // A Shim without runtimeType compares with what its artifact said when it was installed.
    const spec::ShimSpec want = reconcile::as_derived_by(spec, *record);
    return reconcile::differences(reconcile::record_of(want, want.fetch.sha256.value_or(""), ""),
                                  *record)
        .empty();
}

} // namespace shimkeeper::cluster::agent

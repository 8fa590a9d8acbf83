// A generation records the whole spec each shim was installed from, so that rolling back to it
// re-installs exactly that (adopt, allow_unverified and runtime_class included), plus what
// staging found. These are the two directions of that mapping and the one comparison that
// decides whether anything changed: `plan` and `apply` both use it.
#pragma once

#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/store/state.hpp"
#include "shimkeeper/util/error.hpp"

#include <string>
#include <vector>

namespace shimkeeper::reconcile {

// The serialised options table as stored in a generation (stable across runs).
std::string options_fingerprint(const toml::table& options);

// digest / binary_path: what staging found; empty while only a download would tell (plan).
store::InstalledShim record_of(const spec::ShimSpec& spec, const std::string& digest,
                               const std::string& binary_path);

// The spec a stored record was installed from; its location names the generation.
util::Expected<spec::ShimSpec> spec_of(const store::InstalledShim& record, int generation);
util::Expected<std::vector<spec::ShimSpec>> specs_of(const store::Generation& generation);

// Everything that differs between a wanted record and the installed one, in words; empty when
// they are the same shim. Where the wanted digest is not known yet (an unverified URL not
// downloaded), the URL stands for it. The origin (which file) is not a difference.
std::vector<std::string> differences(const store::InstalledShim& want,
                                     const store::InstalledShim& have);

} // namespace shimkeeper::reconcile

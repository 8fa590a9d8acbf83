// A generation records the whole spec each shim was installed from, so that rolling back to it
// re-installs exactly that (adopt, allow_unverified and runtime_class included), plus what
// staging found. These are the two directions of that mapping and the one comparison that
// decides whether anything changed: `plan` and `apply` both use it.
#pragma once

#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/store/state.hpp"
#include "shimkeeper/util/error.hpp"

#include <string>
#include <string_view>
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

// How a record says its runtime type came from its artifact (derive_runtime.hpp writes it).
inline constexpr std::string_view k_derived_from_artifact = "derived from the artifact's ";

// `spec` as it would be once derived, when it waits for its artifact to say its runtime type and
// `installed` was derived from an artifact: the runtime type and binary that artifact said. It is
// the same artifact exactly when differences() finds the same digest (or unverified URL), so
// comparing a spec that has not looked at its artifact yet with what runs needs no download.
spec::ShimSpec as_derived_by(const spec::ShimSpec& spec, const store::InstalledShim& installed);

} // namespace shimkeeper::reconcile

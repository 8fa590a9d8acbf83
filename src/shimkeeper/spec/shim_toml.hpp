// A ShimSpec written back as the [[shim]] of a shims.d file: the text that the loader
// (parse_desired_state_text) reads into the same spec. What ties a Shim object to the loader: the
// fuzz target fuzz_shim_object writes every spec the object mapping accepts and loads it again.
#pragma once

#include "shimkeeper/spec/shim_spec.hpp"

#include <string>
#include <string_view>

namespace shimkeeper::spec {

// How the fetch source is written: [shim.fetch] itself, or one [[shim.fetch.platform]] entry
// for `arch`.
enum class FetchForm { single, platform };

// The binary is left out when the runtime type implies it, as a person would write it; version,
// options, allow_unverified and adopt only when set. Options are [shim.options] tables (headers,
// not inline tables, whose nesting toml++ limits). The location is not written.
std::string shims_d_toml_of(const ShimSpec& shim, const std::string& arch, FetchForm form);

} // namespace shimkeeper::spec

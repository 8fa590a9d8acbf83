// "did you mean ...?" for misspelt keys. A candidate is close when it differs only in case,
// '_' or '-' (runtimeType, Runtime-Type -> runtime_type), or is within a small edit distance
// counting an adjacent swap as one edit (sha265 -> sha256), or failing both shares a stem of
// four or more characters (retry -> retries).
#pragma once

#include <initializer_list>
#include <optional>
#include <string_view>

namespace shimkeeper::spec {

// The closest candidate to `word`, if one is close enough to be a likely typo.
std::optional<std::string_view> closest_word(std::string_view word,
                                             std::initializer_list<std::string_view> candidates);

} // namespace shimkeeper::spec

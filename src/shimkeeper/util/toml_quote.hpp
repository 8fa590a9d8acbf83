// How shimkeeper spells strings and keys when it writes TOML: one quoter for the containerd
// config engine's keys and for the shims.d files written from Shim objects, so both read back the
// same way.
#pragma once

#include <string>
#include <string_view>

namespace shimkeeper::util {

// A character a bare key may hold: A-Z a-z 0-9 _ -
bool is_toml_bare_key_char(char c);

// A TOML basic string: '"' and '\' escaped, control characters (U+0000-U+001F, U+007F) as \b \t
// \n \f \r or \uXXXX, everything else (UTF-8 included) as it is.
std::string toml_quoted(std::string_view text);

// A key: bare when it is only A-Z a-z 0-9 _ - (and not empty), else quoted.
std::string toml_key(std::string_view key);

} // namespace shimkeeper::util

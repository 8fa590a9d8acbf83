// The one file that carries the source tree's absolute path (SHIMKEEPER_TEST_SOURCE_DIR, set on
// this file alone in tests/CMakeLists.txt): as a define on every unit test it made each of them
// miss the compiler cache in every fresh clone, CI's included.
#include "unit/source_dir.hpp"

#include <cstdlib>

namespace shimkeeper::testing {

std::filesystem::path source_dir() {
    if (const char* env = std::getenv("SHIMKEEPER_SOURCE_DIR"); env != nullptr && *env != '\0') {
        return env;
    }
    return SHIMKEEPER_TEST_SOURCE_DIR;
}

} // namespace shimkeeper::testing

// The one way a fuzz target reports a broken invariant: a line naming the target and what broke,
// then abort(), which libFuzzer records as a crash with the input that caused it.
#pragma once

#include <cstdio>
#include <cstdlib>

inline void fuzz_check(bool ok, const char* target, const char* what, const char* where = "") {
    if (!ok) {
        std::fprintf(stderr, "%s: %s %s\n", target, what, where);
        std::abort();
    }
}

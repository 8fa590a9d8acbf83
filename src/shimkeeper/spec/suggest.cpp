#include "shimkeeper/spec/suggest.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace shimkeeper::spec {

namespace {

// Lowercase with '_' and '-' dropped: the spellings people mix up for one key.
std::string folded(std::string_view word) {
    std::string out;
    for (char c : word) {
        if (c == '_' || c == '-') {
            continue;
        }
        out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    return out;
}

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// adjacent characters each cost one.
std::size_t edit_distance(std::string_view a, std::string_view b) {
    const std::size_t rows = a.size() + 1;
    const std::size_t cols = b.size() + 1;
    std::vector<std::size_t> d(rows * cols);
    auto at = [&](std::size_t i, std::size_t j) -> std::size_t& {
        return d[i * cols + j];
    };
    for (std::size_t i = 0; i < rows; ++i) {
        at(i, 0) = i;
    }
    for (std::size_t j = 0; j < cols; ++j) {
        at(0, j) = j;
    }
    for (std::size_t i = 1; i < rows; ++i) {
        for (std::size_t j = 1; j < cols; ++j) {
            std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
            }
        }
    }
    return at(rows - 1, cols - 1);
}

std::size_t common_prefix(std::string_view a, std::string_view b) {
    std::size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) {
        ++n;
    }
    return n;
}

} // namespace

std::optional<std::string_view> closest_word(std::string_view word,
                                             std::initializer_list<std::string_view> candidates) {
    const std::string folded_word = folded(word);
    std::optional<std::string_view> best;
    std::size_t best_distance = 0;
    for (std::string_view candidate : candidates) {
        if (folded(candidate) == folded_word) {
            return candidate;
        }
        // One edit for short keys, two from five characters on: enough for typos, too
        // little to turn one real key into another.
        const std::size_t limit = candidate.size() < 5 ? 1 : 2;
        const std::size_t distance = edit_distance(folded_word, folded(candidate));
        if (distance <= limit && (!best || distance < best_distance)) {
            best = candidate;
            best_distance = distance;
        }
    }
    if (best) {
        return best;
    }
    // Failing that, a shared stem of four or more characters (retry -> retries); the longest
    // stem wins.
    std::size_t best_prefix = 3;
    for (std::string_view candidate : candidates) {
        const std::size_t prefix = common_prefix(folded_word, folded(candidate));
        if (prefix > best_prefix) {
            best = candidate;
            best_prefix = prefix;
        }
    }
    return best;
}

} // namespace shimkeeper::spec

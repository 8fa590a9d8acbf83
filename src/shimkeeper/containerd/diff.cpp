#include "shimkeeper/containerd/diff.hpp"

#include "shimkeeper/containerd/toml_text.hpp"

#include <algorithm>

namespace shimkeeper::containerd {

namespace {

constexpr std::size_t k_context = 3;

struct Op {
    char kind; // ' ', '-', '+'
    std::size_t old_line;
    std::size_t new_line;
};

std::vector<std::string> display_lines(const std::optional<std::string>& text) {
    std::vector<std::string> out;
    for (const auto& line : split_lines(text.value_or(""))) {
        out.emplace_back(line_body(line));
    }
    return out;
}

// Longest common subsequence on the part between the common prefix and suffix: config edits
// touch a few places, so the middle stays small.
std::vector<Op> edit_script(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    std::size_t prefix = 0;
    while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) {
        ++prefix;
    }
    std::size_t suffix = 0;
    while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
           a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
        ++suffix;
    }
    std::size_t n = a.size() - prefix - suffix;
    std::size_t m = b.size() - prefix - suffix;
    std::vector<std::vector<std::size_t>> lcs(n + 1, std::vector<std::size_t>(m + 1, 0));
    for (std::size_t i = n; i-- > 0;) {
        for (std::size_t j = m; j-- > 0;) {
            lcs[i][j] = a[prefix + i] == b[prefix + j] ? lcs[i + 1][j + 1] + 1
                                                       : std::max(lcs[i + 1][j], lcs[i][j + 1]);
        }
    }
    std::vector<Op> ops;
    for (std::size_t k = 0; k < prefix; ++k) {
        ops.push_back({' ', k, k});
    }
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a[prefix + i] == b[prefix + j]) {
            ops.push_back({' ', prefix + i++, prefix + j++});
        } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
            ops.push_back({'-', prefix + i++, prefix + j}); // deletions first, as diff -u
        } else {
            ops.push_back({'+', prefix + i, prefix + j++});
        }
    }
    for (std::size_t k = 0; k < suffix; ++k) {
        ops.push_back({' ', prefix + n + k, prefix + m + k});
    }
    return ops;
}

std::string range(std::size_t start, std::size_t count) {
    // Unified diff numbers lines from 1; an empty range names the line before it.
    return std::to_string(count == 0 ? start : start + 1) + "," + std::to_string(count);
}

} // namespace

std::string unified_diff(const FileChange& change) {
    if (change.before == change.after) {
        return "";
    }
    auto a = display_lines(change.before);
    auto b = display_lines(change.after);
    auto ops = edit_script(a, b);
    std::string out;
    out += "--- " + (change.before ? "a" + change.node_path.string() : "/dev/null") + "\n";
    out += "+++ " + (change.after ? "b" + change.node_path.string() : "/dev/null") + "\n";
    std::size_t k = 0;
    while (k < ops.size()) {
        if (ops[k].kind == ' ') {
            ++k;
            continue;
        }
        std::size_t start = k >= k_context ? k - k_context : 0;
        std::size_t end = k;
        // Extend the hunk while the next change is within 2 * context unchanged lines.
        for (std::size_t quiet = 0; end < ops.size(); ++end) {
            quiet = ops[end].kind == ' ' ? quiet + 1 : 0;
            if (quiet > 2 * k_context) {
                end -= k_context;
                break;
            }
        }
        end = std::min(end, ops.size());
        std::size_t trailing = 0;
        while (trailing < end - k && ops[end - 1 - trailing].kind == ' ') {
            ++trailing;
        }
        end -= trailing > k_context ? trailing - k_context : 0;
        std::size_t old_count = 0;
        std::size_t new_count = 0;
        std::string body;
        for (std::size_t x = start; x < end; ++x) {
            const Op& op = ops[x];
            const std::string& text = op.kind == '+' ? b[op.new_line] : a[op.old_line];
            body += op.kind + text + "\n";
            old_count += op.kind != '+' ? 1 : 0;
            new_count += op.kind != '-' ? 1 : 0;
        }
        out += "@@ -" + range(ops[start].old_line, old_count) + " +" +
               range(ops[start].new_line, new_count) + " @@\n" + body;
        k = end;
    }
    return out;
}

} // namespace shimkeeper::containerd

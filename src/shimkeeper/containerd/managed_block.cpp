#include "shimkeeper/containerd/managed_block.hpp"

#include "shimkeeper/spec/grammar.hpp"

#include "shimkeeper/containerd/toml_tree.hpp"
#include "shimkeeper/util/toml_quote.hpp"

#include <algorithm>

namespace shimkeeper::containerd {

namespace {

constexpr std::string_view k_begin = "# shimkeeper:begin shim=";
constexpr std::string_view k_end = "# shimkeeper:end shim=";
constexpr std::string_view k_created = "# shimkeeper:created base-sha256=";

std::string_view trimmed(std::string_view line) {
    line = line_body(line);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) {
        line.remove_prefix(1);
    }
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) {
        line.remove_suffix(1);
    }
    return line;
}

// The word after a prefix, up to the next space.
std::string word_after(std::string_view text, std::string_view prefix) {
    text.remove_prefix(prefix.size());
    return std::string(text.substr(0, text.find(' ')));
}

void render_table(std::vector<std::string>& out, const KeyPath& path, const toml::table& table,
                  std::string_view eol) {
    out.push_back("[" + render_path(path) + "]" + std::string(eol));
    for (const auto& [key, value] : table) {
        if (!value.is_table()) {
            out.push_back("  " + util::toml_key(key.str()) + " = " + format_value(value) +
                          std::string(eol));
        }
    }
    for (const auto& [key, value] : table) {
        if (const auto* child = value.as_table()) {
            KeyPath child_path = path;
            child_path.emplace_back(key.str());
            render_table(out, child_path, *child, eol);
        }
    }
}

} // namespace

std::string begin_marker(std::string_view shim, std::string_view digest_hex) {
    std::string digest = digest_hex.empty() ? "unknown" : "sha256:" + std::string(digest_hex);
    return std::string(k_begin) + std::string(shim) + " digest=" + digest +
           " (managed by shimkeeper; edits here are replaced)";
}

std::string end_marker(std::string_view shim) {
    return std::string(k_end) + std::string(shim);
}

namespace {
constexpr std::string_view k_adopted_mark = "#shimkeeper:adopted:";
}

std::string adopted_prefix(std::string_view shim) {
    return std::string(k_adopted_mark) + std::string(shim) + "# ";
}

bool holds_marker(std::string_view line) {
    line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
    return line.starts_with("#shimkeeper:") || line.starts_with("# shimkeeper:");
}

std::optional<AdoptedLine> parse_adopted(std::string_view line) {
    if (!line.starts_with(k_adopted_mark)) {
        return std::nullopt;
    }
    const std::string_view rest = line.substr(k_adopted_mark.size());
    // A shim name holds no '#', so the first one is the separator's.
    const auto hash = rest.find('#');
    if (hash == std::string_view::npos || !rest.substr(hash).starts_with("# ")) {
        return std::nullopt;
    }
    const std::string_view shim = rest.substr(0, hash);
    const std::string_view original = rest.substr(hash + 2);
    if (!spec::is_valid_name(shim) || holds_marker(original)) {
        return std::nullopt;
    }
    return AdoptedLine{shim, original};
}

std::string adopt_line(std::string_view shim, std::string_view line) {
    if (line.empty() || holds_marker(line)) {
        return std::string(line);
    }
    return adopted_prefix(shim) + std::string(line);
}

std::vector<std::string> restore_adopted(const std::vector<std::string>& lines,
                                         const std::set<std::string>& keep, Masking masking) {
    const std::vector<bool> inside_value = continuation_lines(lines, masking);
    std::vector<std::string> out;
    out.reserve(lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        const auto mark = inside_value[i] ? std::nullopt : parse_adopted(line);
        if (!mark) {
            out.push_back(line);
        } else if (mark->original.empty()) {
            continue;
        } else if (keep.contains(std::string(mark->shim))) {
            out.push_back(line);
        } else {
            out.emplace_back(mark->original);
        }
    }
    return out;
}

std::string created_marker(std::string_view base_sha256_hex) {
    return std::string(k_created) + std::string(base_sha256_hex) +
           " (this file goes away with its last shimkeeper block)";
}

std::optional<std::string> created_base_hash(const std::vector<std::string>& lines) {
    if (lines.empty() || !trimmed(lines.front()).starts_with(k_created)) {
        return std::nullopt;
    }
    return word_after(trimmed(lines.front()), k_created);
}

util::Expected<std::vector<ManagedBlock>> find_blocks(const std::vector<std::string>& lines,
                                                      const std::string& label, Masking masking) {
    const std::vector<bool> inside_value = continuation_lines(lines, masking);
    std::vector<ManagedBlock> blocks;
    std::optional<ManagedBlock> open;
    auto where = [&](std::size_t line) {
        return label + ":" + std::to_string(line + 1) + ": ";
    };
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (inside_value[i]) {
            continue;
        }
        std::string_view line = trimmed(lines[i]);
        if (line.starts_with(k_begin)) {
            if (open) {
                return util::fail(util::ErrorCode::conflict,
                                  where(i) + "a shimkeeper block starts inside the block of shim " +
                                      open->shim + " begun on line " +
                                      std::to_string(open->first_line + 1) + "; restore its '" +
                                      end_marker(open->shim) + "' line");
            }
            ManagedBlock block{word_after(line, k_begin), "", i, i};
            if (auto pos = line.find(" digest="); pos != std::string_view::npos) {
                block.digest = word_after(line.substr(pos), " digest=");
            }
            open = block;
        } else if (line.starts_with(k_end)) {
            std::string shim = word_after(line, k_end);
            if (!open || open->shim != shim) {
                return util::fail(util::ErrorCode::conflict,
                                  where(i) + "'" + end_marker(shim) +
                                      "' has no matching begin marker; delete this line or "
                                      "restore the block's first line");
            }
            open->last_line = i;
            blocks.push_back(*open);
            open.reset();
        }
    }
    if (open) {
        return util::fail(util::ErrorCode::conflict,
                          where(open->first_line) + "the shimkeeper block of shim " + open->shim +
                              " has no end marker; add '" + end_marker(open->shim) +
                              "' after its last line or delete the block");
    }
    return blocks;
}

std::vector<std::string> render_block(std::string_view shim, std::string_view digest_hex,
                                      const KeyPath& handler_path, const toml::table& runtime,
                                      std::string_view eol) {
    std::vector<std::string> out;
    out.push_back(begin_marker(shim, digest_hex) + std::string(eol));
    render_table(out, handler_path, runtime, eol);
    out.push_back(end_marker(shim) + std::string(eol));
    return out;
}

} // namespace shimkeeper::containerd

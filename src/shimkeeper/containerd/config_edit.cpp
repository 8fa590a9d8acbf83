#include "shimkeeper/containerd/config_edit.hpp"

#include "shimkeeper/containerd/default_runtime.hpp"
#include "shimkeeper/containerd/edit_check.hpp"
#include "shimkeeper/containerd/managed_block.hpp"
#include "shimkeeper/containerd/toml_tree.hpp"

#include <algorithm>
#include <map>
#include <ranges>
#include <set>

namespace shimkeeper::containerd {

namespace {

using util::ErrorCode;

std::string at_line(const std::string& label, std::size_t line) {
    return label + ":" + std::to_string(line + 1);
}

bool inside_block(const std::vector<ManagedBlock>& blocks, std::size_t line) {
    for (const auto& block : blocks) {
        if (line >= block.first_line && line <= block.last_line) {
            return true;
        }
    }
    return false;
}

// A key after a block (before any header) belongs to the table the block ends with, or, for a
// block without a header, to the table before it. shimkeeper appends its blocks at the end, so such
// a key was written or moved there by hand; rewriting or dropping the block would carry it into
// another table, so the file is refused. Blocks in a row count as one; the error names the last.
util::Expected<void> refuse_keys_after_blocks(const std::vector<Statement>& statements,
                                              const std::vector<ManagedBlock>& blocks,
                                              const EditTarget& target) {
    for (const auto& block : std::views::reverse(blocks)) {
        auto next = std::ranges::find_if(statements, [&](const Statement& st) {
            return st.first_line > block.last_line && !inside_block(blocks, st.first_line);
        });
        if (next != statements.end() && next->kind == StatementKind::key_value) {
            return util::fail(
                ErrorCode::conflict,
                at_line(target.label, next->first_line) + ": " + render_path(next->path) +
                    " follows shimkeeper's block for shim " + block.shim + " (lines " +
                    std::to_string(block.first_line + 1) + "-" +
                    std::to_string(block.last_line + 1) +
                    ") with no table header between them, so shimkeeper cannot rewrite or remove "
                    "that block without moving the key into another table; move the key above "
                    "the block or under a table header of its own");
        }
    }
    return {};
}

// The user's definitions of desired handlers, as lines to comment out on adoption.
using AdoptedLines = std::map<std::size_t, std::string>; // line -> shim

util::Expected<void> refuse_inline_parents(const std::vector<Statement>& statements,
                                           const std::vector<ManagedBlock>& blocks,
                                           const EditTarget& target) {
    for (const auto& st : statements) {
        if (inside_block(blocks, st.first_line)) {
            continue;
        }
        bool parent_of_runtimes = starts_with(target.runtimes_path, st.path);
        if (st.kind == StatementKind::key_value && parent_of_runtimes) {
            return util::fail(ErrorCode::conflict,
                              at_line(target.label, st.first_line) + ": " + render_path(st.path) +
                                  " is written as an inline value; shimkeeper adds [" +
                                  render_path(target.runtimes_path) +
                                  ".<handler>] tables and never reformats your file: rewrite it "
                                  "as [" +
                                  render_path(st.path) + "] sections first");
        }
        if (st.kind == StatementKind::array_table &&
            (parent_of_runtimes || starts_with(st.path, target.runtimes_path))) {
            return util::fail(ErrorCode::conflict,
                              at_line(target.label, st.first_line) + ": [[" + render_path(st.path) +
                                  "]] makes containerd's runtimes an array of tables, which "
                                  "containerd does not read; fix the file first");
        }
    }
    return {};
}

// Finds user definitions of desired handlers: an error, or lines to adopt.
// A line of a multi-line value that holds a marker cannot be commented out (the grammar in
// managed_block.hpp leaves such a line as it is), and once the statement's first line is a
// comment that line would stand at statement level as a marker: such an adoption is refused.
util::Expected<void> refuse_adopting_marker_lines(const AdoptedLines& adopted,
                                                  const std::vector<std::string>& lines,
                                                  const EditTarget& target) {
    const std::vector<bool> inside_value = continuation_lines(lines, target.masking);
    for (const auto& [line, shim] : adopted) {
        if (line < lines.size() && inside_value[line] && holds_marker(lines[line])) {
            return util::fail(ErrorCode::conflict,
                              at_line(target.label, line) +
                                  ": this line of a multi-line value in the definition that shim " +
                                  shim +
                                  " adopts looks like one of shimkeeper's marker comments; "
                                  "shimkeeper cannot comment it out without changing what it "
                                  "means: change that value by hand, or remove adopt = true");
        }
    }
    return {};
}

util::Expected<AdoptedLines> find_user_handlers(const std::vector<Statement>& statements,
                                                const std::vector<ManagedBlock>& blocks,
                                                const std::vector<std::string>& lines,
                                                const EditTarget& target,
                                                const std::vector<DesiredRuntime>& desired) {
    const std::size_t line_count = lines.size();
    AdoptedLines adopted;
    for (std::size_t s = 0; s < statements.size(); ++s) {
        const Statement& st = statements[s];
        if (inside_block(blocks, st.first_line)) {
            continue;
        }
        for (const auto& runtime : desired) {
            KeyPath handler_path = target.runtimes_path;
            handler_path.push_back(runtime.handler);
            if (!starts_with(st.path, handler_path)) {
                continue;
            }
            if (!runtime.adopt) {
                return util::fail(ErrorCode::conflict,
                                  at_line(target.label, st.first_line) + ": runtime handler \"" +
                                      runtime.handler +
                                      "\" is already defined here, outside shimkeeper's blocks; "
                                      "shimkeeper never overwrites it: remove it, pick another "
                                      "handler for shim " +
                                      runtime.shim_name +
                                      ", or set adopt = true on that shim to take it over");
            }
            std::size_t last = st.last_line;
            if (st.kind == StatementKind::table) {
                // The whole section: up to the next header or managed block.
                last = line_count - 1;
                for (std::size_t n = s + 1; n < statements.size(); ++n) {
                    if (statements[n].kind != StatementKind::key_value) {
                        last = statements[n].first_line - 1;
                        break;
                    }
                }
                for (const auto& block : blocks) {
                    if (block.first_line > st.first_line && block.first_line <= last) {
                        last = block.first_line - 1;
                    }
                }
            }
            for (std::size_t line = st.first_line; line <= last; ++line) {
                adopted.emplace(line, runtime.shim_name);
            }
        }
    }
    TRY(refuse_adopting_marker_lines(adopted, lines, target));
    return adopted;
}

util::Expected<void> check_desired(const std::vector<DesiredRuntime>& desired,
                                   const EditTarget& target) {
    std::set<std::string> shims;
    std::set<std::string> handlers;
    for (const auto& runtime : desired) {
        if (!shims.insert(runtime.shim_name).second || !handlers.insert(runtime.handler).second) {
            return util::fail(ErrorCode::invalid_input,
                              target.label + ": shim " + runtime.shim_name + " (handler \"" +
                                  runtime.handler +
                                  "\") is listed twice or shares its handler; give every shim "
                                  "its own name and handler");
        }
        if (target.root_config != nullptr && !runtime.adopt) {
            KeyPath handler_path = target.runtimes_path;
            handler_path.push_back(runtime.handler);
            if (const auto* node = find_node(*target.root_config, handler_path)) {
                return util::fail(ErrorCode::conflict,
                                  "the root config defines runtime handler \"" + runtime.handler +
                                      "\" (line " + std::to_string(node->source().begin.line) +
                                      "); shimkeeper never overrides it from " + target.label +
                                      ": remove it, pick another handler for shim " +
                                      runtime.shim_name + ", or set adopt = true on that shim");
            }
        }
    }
    return {};
}

// shimkeeper writes its block markers ("# shimkeeper:begin/end/created ...") at the start of a
// line; an indented one was moved or forged, and since the block reader trims lines it would be
// taken for a block boundary, so the file is refused; inside a multi-line value it is the value's
// text and no marker at all. (Adopted-line look-alikes need no refusal:
// the grammar in managed_block.hpp makes any of them plainly the user's text.)
util::Expected<void> refuse_indented_block_markers(const std::vector<std::string>& lines,
                                                   const std::string& label, Masking masking) {
    const std::vector<bool> inside_value = continuation_lines(lines, masking);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::string_view line = lines[i];
        if (inside_value[i] || line.starts_with("# shimkeeper:")) {
            continue;
        }
        line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
        if (line.starts_with("# shimkeeper:")) {
            return util::fail(util::ErrorCode::conflict,
                              label + ":" + std::to_string(i + 1) +
                                  ": this line holds one of shimkeeper's markers where shimkeeper "
                                  "never writes one; restore or remove it by hand");
        }
    }
    return {};
}

// The lines of every block this edit drops (its shim is not written, or an earlier block has the
// same shim) turned into comments, so that the file is read as the edit leaves it: a user's line
// restored above may define again what a dropped block defined. The line count stays the same.
std::vector<std::string> mask_dropped_blocks(std::vector<std::string> lines,
                                             const std::vector<ManagedBlock>& blocks,
                                             const std::set<std::string>& written) {
    std::set<std::string> seen;
    for (const auto& block : blocks) {
        if (written.contains(block.shim) && seen.insert(block.shim).second) {
            continue;
        }
        for (std::size_t i = block.first_line; i <= block.last_line && i < lines.size(); ++i) {
            lines[i].insert(0, "#");
        }
    }
    return lines;
}

} // namespace

util::Expected<std::string> edit_config_text(std::string_view before, const EditTarget& target,
                                             const std::vector<DesiredRuntime>& desired) {
    TRY(check_desired(desired, target));
    TRY(refuse_indented_block_markers(split_lines(before), target.label, target.masking));
    // The file as it is must be TOML: shimkeeper never rewrites a file it cannot parse, even one
    // that restoring adopted lines would repair.
    if (auto as_is =
            parse_toml(join_lines(mask_lines(split_lines(before), target.masking)), target.label);
        !as_is) {
        return std::unexpected(std::move(as_is).error());
    }
    // The user's lines adopted by shims no longer desired come back first, and only then is the
    // file read: a restored line may end or start a section that is adopted now. The engine's
    // check (user_lines) restores with the same function and the same set of kept shims.
    std::set<std::string> keep;
    for (const auto& runtime : desired) {
        keep.insert(runtime.shim_name);
    }
    const std::vector<std::string> lines =
        restore_adopted(split_lines(before), keep, target.masking);
    const auto blocks = TRY(find_blocks(lines, target.label, target.masking));
    const bool default_runtime = needs_default_runtime(lines, target, desired);
    std::set<std::string> written = keep;
    if (default_runtime) {
        written.insert(std::string(k_default_runtime_block));
    }
    const std::string masked =
        join_lines(mask_dropped_blocks(mask_lines(lines, target.masking), blocks, written));
    const toml::table tree = TRY(parse_toml(masked, target.label));
    const auto statements = TRY(scan_statements(masked, target.label));
    if (!desired.empty()) {
        TRY(refuse_inline_parents(statements, blocks, target));
    }
    TRY(refuse_keys_after_blocks(statements, blocks, target));
    const AdoptedLines adopted =
        TRY(find_user_handlers(statements, blocks, lines, target, desired));

    const toml::table& defaults = target.root_config != nullptr ? *target.root_config : tree;
    const std::string eol = dominant_line_ending(lines);
    // Blocks by name, in the order new ones are appended.
    std::vector<std::string> order;
    std::map<std::string, std::vector<std::string>> rendered;
    std::vector<IntendedRuntime> intended;
    auto add_block = [&](const std::string& name, const std::string& digest,
                         const std::string& handler, toml::table value) {
        IntendedRuntime entry{target.runtimes_path, std::move(value)};
        entry.path.push_back(handler);
        rendered[name] = render_block(name, digest, entry.path, entry.value, eol);
        order.push_back(name);
        intended.push_back(std::move(entry));
    };
    if (default_runtime) {
        toml::table runc;
        runc.insert("runtime_type", std::string(k_runc_v2_type));
        add_block(std::string(k_default_runtime_block), "", "runc", std::move(runc));
    }
    for (const auto& runtime : desired) {
        add_block(runtime.shim_name, runtime.digest, runtime.handler,
                  runtime_table(runtime, target.pointing, defaults, target.runtimes_path));
    }

    std::vector<std::string> out;
    std::set<std::string> placed;
    std::size_t next_block = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (next_block < blocks.size() && i == blocks[next_block].first_line) {
            const ManagedBlock& block = blocks[next_block++];
            if (rendered.contains(block.shim) && placed.insert(block.shim).second) {
                const auto& fresh = rendered[block.shim];
                out.insert(out.end(), fresh.begin(), fresh.end());
            }
            i = block.last_line;
            continue;
        }
        const std::string& line = lines[i];
        if (auto it = adopted.find(i); it != adopted.end()) {
            out.push_back(adopt_line(it->second, line));
            continue;
        }
        out.push_back(line);
    }
    for (const auto& name : order) {
        if (placed.contains(name)) {
            continue;
        }
        if (!out.empty() && !out.back().ends_with('\n')) {
            out.back() += eol;
        }
        const auto& fresh = rendered[name];
        out.insert(out.end(), fresh.begin(), fresh.end());
    }

    std::string after = join_lines(out);
    if (after == before) {
        return after;
    }
    TRY(check_edit(std::string(before), after, target.masking, intended, keep, target.label));
    return after;
}

} // namespace shimkeeper::containerd

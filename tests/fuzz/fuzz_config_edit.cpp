// Fuzzes the containerd config edit: arbitrary config text x arbitrary shim sets, both derived
// from the input. The engine must either refuse with an error or produce text that
//   - parses with toml++ (template lines masked as the engine masks them),
//   - holds every desired runtime pointing where it should,
//   - keeps every other key with its value (containerd's default runc may be added),
//   - is a fixed point (editing it again changes nothing),
//   - and, when the input had no shimkeeper content, gives the input back once every shim is
//     removed again.
// Anything else aborts.
//
// Input layout: byte 0 = flags (bits 0-1 shim count, bit 2 runtime_path pointing, bit 3 Go
// template masking, bits 4-5 config version - 1, bit 6 adopt, bit 7 first shim runc-typed);
// then one byte per shim (handler and options choice); the rest is the config text.
#include "shimkeeper/containerd/config_edit.hpp"
#include "shimkeeper/containerd/config_facts.hpp"
#include "shimkeeper/containerd/toml_tree.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace sc = shimkeeper::containerd;

namespace {

void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "fuzz_config_edit: %s\n", what);
        std::abort();
    }
}

using Leaves = std::map<std::string, std::string>;

// Every non-table value by its rendered key path.
void flatten(const toml::table& table, const sc::KeyPath& at, Leaves& out) {
    for (const auto& [key, value] : table) {
        sc::KeyPath path = at;
        path.emplace_back(key.str());
        if (const auto* child = value.as_table()) {
            flatten(*child, path, out);
        } else {
            out[sc::render_path(path)] = sc::format_value(value);
        }
    }
}

std::optional<toml::table> parse(const std::string& text, sc::Masking masking) {
    auto tree =
        sc::parse_toml(sc::join_lines(sc::mask_lines(sc::split_lines(text), masking)), "fuzz");
    return tree ? std::optional<toml::table>(std::move(*tree)) : std::nullopt;
}

Leaves user_leaves(const toml::table& tree, const std::vector<sc::KeyPath>& managed) {
    Leaves all;
    flatten(tree, {}, all);
    Leaves out;
    for (const auto& [path, value] : all) {
        bool skip = false;
        for (const auto& handler : managed) {
            std::string prefix = sc::render_path(handler);
            skip = skip || path == prefix || path.starts_with(prefix + ".");
        }
        if (!skip) {
            out[path] = value;
        }
    }
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) {
        return 0;
    }
    static const char* const k_handlers[] = {"spin", "runc", "a.b", "wasm-time", "x", "\"q\""};
    const std::uint8_t flags = data[0];
    const std::size_t count = flags & 3u;
    if (size < 1 + count) {
        return 0;
    }
    sc::EditTarget target;
    target.label = "fuzz.toml";
    target.runtimes_path = sc::runtimes_path(((flags >> 4) & 3) + 1);
    target.pointing = (flags & 4u) ? sc::Pointing::runtime_path : sc::Pointing::absolute_type;
    target.masking = (flags & 8u) ? sc::Masking::go_template : sc::Masking::none;

    std::vector<sc::DesiredRuntime> desired;
    for (std::size_t i = 0; i < count; ++i) {
        std::uint8_t pick = data[1 + i];
        sc::DesiredRuntime r;
        r.shim_name = "shim" + std::to_string(i);
        r.handler = k_handlers[pick % 6];
        r.runtime_type = (i == 0 && (flags & 128u)) ? "io.containerd.runc.v2"
                                                    : "io.containerd.s" + std::to_string(i) + ".v2";
        r.binary_node_path = "/var/lib/shimkeeper/bin/containerd-shim-s" + std::to_string(i);
        r.digest = std::string(64, static_cast<char>('a' + i));
        r.adopt = (flags & 64u) != 0;
        if (pick & 8u) {
            r.options.insert("BinaryName", "/usr/bin/crun");
        }
        if (pick & 16u) {
            r.options.insert("Nested", toml::table{{"k", "v\n\"x"}});
        }
        desired.push_back(std::move(r));
    }
    const std::string before(reinterpret_cast<const char*>(data + 1 + count), size - 1 - count);

    auto after = sc::edit_config_text(before, target, desired);
    if (!after) {
        // Refusing is fine; the engine's own after-edit check failing means an engine bug.
        if (after.error().code() == shimkeeper::util::ErrorCode::internal) {
            std::fprintf(stderr, "%s\n", after.error().message().c_str());
        }
        check(after.error().code() != shimkeeper::util::ErrorCode::internal,
              "the engine's own check caught a wrong edit");
        return 0;
    }
    auto before_tree = parse(before, target.masking);
    auto after_tree = parse(*after, target.masking);
    check(before_tree.has_value(), "accepted an input toml++ cannot parse");
    check(after_tree.has_value(), "produced text toml++ cannot parse");

    std::vector<sc::KeyPath> managed;
    for (const auto& r : desired) {
        sc::KeyPath path = target.runtimes_path;
        path.push_back(r.handler);
        managed.push_back(path);
        const auto* entry = sc::find_table(*after_tree, path);
        check(entry != nullptr, "a desired runtime is missing");
        std::string expected_type =
            target.pointing == sc::Pointing::runtime_path ? r.runtime_type : r.binary_node_path;
        check(entry->get("runtime_type") != nullptr &&
                  entry->get("runtime_type")->value_or(std::string()) == expected_type,
              "a desired runtime points at the wrong place");
    }
    // The engine may add containerd's default runc runtime when the input lacks it.
    sc::KeyPath runc = target.runtimes_path;
    runc.emplace_back("runc");
    if (sc::find_node(*before_tree, runc) == nullptr) {
        managed.push_back(runc);
    }
    bool had_ours = before.find("shimkeeper:") != std::string::npos;
    if (!had_ours) {
        check(user_leaves(*before_tree, managed) == user_leaves(*after_tree, managed),
              "a key outside the managed runtimes changed");
    }

    auto again = sc::edit_config_text(*after, target, desired);
    check(again.has_value() && *again == *after, "editing twice is not a fixed point");

    auto removed = sc::edit_config_text(*after, target, {});
    // Forged shimkeeper comments in the input may hide invalid TOML that a removal restores.
    check(removed.has_value() || had_ours, "removing the shims again failed");
    check(removed.has_value() || removed.error().code() != shimkeeper::util::ErrorCode::internal,
          "the engine's own check caught a wrong removal");
    if (!had_ours && *removed != before) {
        // The one byte an edit cannot take back: a final line ending added before a block.
        check(!before.empty() && !before.ends_with('\n') &&
                  *removed == before + sc::dominant_line_ending(sc::split_lines(before)),
              "removing the shims does not give the input back");
    }
    return 0;
}

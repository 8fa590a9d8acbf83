#include "shimkeeper/spec/shim_toml.hpp"

#include "shimkeeper/spec/grammar.hpp"
#include "shimkeeper/util/toml_quote.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

namespace shimkeeper::spec {

using util::toml_key;
using util::toml_quoted;

namespace {

// The shortest text that reads back as exactly this double, always a float in TOML (to_chars
// writes 5.0 as "5", which TOML reads as an integer).
std::string toml_float(double value) {
    if (std::isnan(value)) {
        return "nan";
    }
    if (std::isinf(value)) {
        return value < 0 ? "-inf" : "inf";
    }
    char buffer[64];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    std::string text(buffer, ec == std::errc() ? end : buffer);
    if (text.find_first_of(".e") == std::string::npos) {
        text += ".0";
    }
    return text;
}

// One value on the right of '=': strings, numbers and booleans as the loader reads them; arrays
// inline. (A Shim object's options hold no dates; toml++ writes them should a file's spec.)
std::string toml_value(const toml::node& node) {
    if (const auto* text = node.as_string()) {
        return toml_quoted(text->get());
    }
    if (const auto* integer = node.as_integer()) {
        return std::to_string(integer->get());
    }
    if (const auto* floating = node.as_floating_point()) {
        return toml_float(floating->get());
    }
    if (const auto* boolean = node.as_boolean()) {
        return boolean->get() ? "true" : "false";
    }
    if (const auto* array = node.as_array()) {
        std::string out = "[";
        for (const toml::node& element : *array) {
            out += (out.size() == 1 ? "" : ", ") + toml_value(element);
        }
        return out + "]";
    }
    if (const auto* table = node.as_table()) {
        std::string out = "{";
        for (const auto& [key, value] : *table) {
            out += (out.size() == 1 ? " " : ", ") + toml_key(key.str()) + " = " + toml_value(value);
        }
        return out + (out.size() == 1 ? "}" : " }");
    }
    std::ostringstream out;
    out << toml::toml_formatter{node, toml::format_flags::none};
    return out.str();
}

// A table under `header` ("shim.options"): its values, then each subtable under its own header.
void write_table(std::string& out, const std::string& header, const toml::table& table) {
    out += "[" + header + "]\n";
    for (const auto& [key, value] : table) {
        if (!value.is_table()) {
            out += toml_key(key.str()) + " = " + toml_value(value) + "\n";
        }
    }
    for (const auto& [key, value] : table) {
        if (const auto* child = value.as_table()) {
            write_table(out, header + "." + toml_key(key.str()), *child);
        }
    }
}

void write_source(std::string& out, const FetchSource& source) {
    if (source.oci.empty()) {
        out += "url = " + toml_quoted(source.url) + "\n";
        if (source.sha256) {
            out += "sha256 = " + toml_quoted(*source.sha256) + "\n";
        }
    } else {
        out += "oci = " + toml_quoted(source.oci) + "\n";
        if (!source.path.empty()) {
            out += "path = " + toml_quoted(source.path) + "\n";
        }
    }
}

} // namespace

std::string shims_d_toml_of(const ShimSpec& shim, const std::string& arch, FetchForm form) {
    std::string out = "[[shim]]\n";
    out += "name = " + toml_quoted(shim.name) + "\n";
    out += "handler = " + toml_quoted(shim.handler) + "\n";
    out += "runtime_type = " + toml_quoted(shim.runtime_type) + "\n";
    if (shim.binary != default_binary_for(shim.runtime_type)) {
        out += "binary = " + toml_quoted(shim.binary) + "\n";
    }
    if (!shim.version.empty()) {
        out += "version = " + toml_quoted(shim.version) + "\n";
    }
    if (shim.allow_unverified) {
        out += "allow_unverified = true\n";
    }
    if (shim.adopt) {
        out += "adopt = true\n";
    }
    if (!shim.options.empty()) {
        write_table(out, "shim.options", shim.options);
    }
    if (form == FetchForm::single) {
        out += "[shim.fetch]\n";
    } else {
        out += "[[shim.fetch.platform]]\narch = " + toml_quoted(arch) + "\n";
    }
    write_source(out, shim.fetch);
    if (shim.runtime_class) {
        out += "[shim.runtime_class]\nname = " + toml_quoted(shim.runtime_class->name) + "\n";
    }
    return out;
}

} // namespace shimkeeper::spec

// The API server's grammar for label keys and values (apimachinery's IsQualifiedName and
// IsValidLabelValue). The RuntimeClass's nodeSelector, a toleration's key and value, and an
// extended resource's name all follow it; the node's own name grammar (spec/grammar.hpp) is wider.
#pragma once

#include <string_view>

namespace shimkeeper::cluster::model {

// 1 to 63 of [A-Za-z0-9-_.], starting and ending with a letter or digit.
bool is_label_name(std::string_view text);

// A label name, optionally after a DNS subdomain prefix and '/' ("example.com/gpu").
bool is_label_key(std::string_view key);

// Empty, or a label name.
bool is_label_value(std::string_view value);

} // namespace shimkeeper::cluster::model

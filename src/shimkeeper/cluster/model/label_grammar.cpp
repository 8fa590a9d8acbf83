#include "shimkeeper/cluster/model/label_grammar.hpp"

#include <regex>
#include <string>

namespace shimkeeper::cluster::model {

bool is_label_name(std::string_view text) {
    static const std::regex k_name("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");
    return !text.empty() && text.size() <= 63 && std::regex_match(std::string(text), k_name);
}

bool is_label_key(std::string_view key) {
    static const std::regex k_subdomain(
        "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    const auto slash = key.find('/');
    if (slash == std::string_view::npos) {
        return is_label_name(key);
    }
    const std::string prefix(key.substr(0, slash));
    return prefix.size() <= 253 && std::regex_match(prefix, k_subdomain) &&
           is_label_name(key.substr(slash + 1));
}

bool is_label_value(std::string_view value) {
    return value.empty() || is_label_name(value);
}

} // namespace shimkeeper::cluster::model

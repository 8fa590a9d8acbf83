#include "shimkeeper/daemon/status_text.hpp"

#include <algorithm>
#include <cctype>

namespace shimkeeper::daemon {

namespace {

constexpr std::string_view k_ellipsis = "...";

bool is_space(char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}

} // namespace

std::string one_line(std::string_view text, std::size_t max_chars) {
    std::string out;
    out.reserve(std::min(text.size(), max_chars));
    bool pending_space = false;
    for (char c : text) {
        if (is_space(c)) {
            pending_space = !out.empty();
            continue;
        }
        if (pending_space) {
            out += ' ';
            pending_space = false;
        }
        out += c;
    }
    if (out.size() > max_chars) {
        std::size_t keep = max_chars > k_ellipsis.size() ? max_chars - k_ellipsis.size() : 0;
        // Never cut a UTF-8 sequence in half: back off over continuation bytes.
        while (keep > 0 && (static_cast<unsigned char>(out[keep]) & 0xC0) == 0x80) {
            --keep;
        }
        out.resize(keep);
        out += k_ellipsis;
    }
    return out;
}

std::string duration_text(std::chrono::milliseconds duration) {
    long long seconds = duration.count() <= 0 ? 0 : (duration.count() + 999) / 1000;
    long long hours = seconds / 3600;
    long long minutes = seconds % 3600 / 60;
    long long rest = seconds % 60;
    std::string out;
    if (hours > 0) {
        out += std::to_string(hours) + "h";
    }
    if (minutes > 0) {
        out += std::to_string(minutes) + "m";
    }
    if (rest > 0 || out.empty()) {
        out += std::to_string(rest) + "s";
    }
    return out;
}

std::string converged_status(const std::vector<std::string>& handlers, std::uint64_t generation) {
    std::string out = "converged: ";
    if (handlers.empty()) {
        out += "no shims";
    } else {
        out += std::to_string(handlers.size()) + (handlers.size() == 1 ? " shim (" : " shims (");
        for (std::size_t i = 0; i < handlers.size(); ++i) {
            out += (i == 0 ? "" : ", ") + handlers[i];
        }
        out += ")";
    }
    out += ", generation " + std::to_string(generation);
    return one_line(out);
}

std::string failing_status(std::string_view reason, std::chrono::milliseconds retry_in) {
    std::string why = one_line(reason.empty() ? std::string_view("unknown reason") : reason);
    return "failing: " + why + "; retry in " + duration_text(retry_in);
}

} // namespace shimkeeper::daemon

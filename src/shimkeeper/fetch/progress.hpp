// Download progress on stderr: a redrawn bar on a terminal (label, bytes, percent, rate),
// plain start/retry/done lines otherwise, nothing for `none`.
#pragma once

#include "shimkeeper/fetch/downloader.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace shimkeeper::fetch {

// "12.3 MiB", "512 B": for humans, not for parsing.
std::string format_bytes(std::uint64_t bytes);

class Progress {
public:
    Progress(ProgressStyle style, std::string label);

    void start(std::string_view url);
    // Called often from the transfer; redraws at most every 100 ms. `total` is 0 if unknown.
    void update(std::uint64_t received, std::uint64_t total);
    void retrying(int failed_attempt, std::string_view reason, std::chrono::milliseconds wait);
    void done(std::uint64_t size, std::string_view sha256);
    // Ends a bar's line without a summary (the error is reported by the caller).
    void abandon();

private:
    void draw(std::uint64_t received, std::uint64_t total);
    void end_bar_line();

    using Clock = std::chrono::steady_clock;

    ProgressStyle m_style;
    std::string m_label;
    Clock::time_point m_started;
    Clock::time_point m_last_draw;
    bool m_bar_drawn = false;
};

} // namespace shimkeeper::fetch

#include "shimkeeper/fetch/progress.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <iterator>
#include <unistd.h>

namespace shimkeeper::fetch {

namespace {

constexpr std::chrono::milliseconds k_redraw_interval{100};
constexpr int k_bar_width = 24;

// printf into a std::string (GCC 12's libstdc++ has no std::format).
__attribute__((format(printf, 1, 2))) std::string sprintf_string(const char* format, ...) {
    char buffer[512];
    va_list args;
    va_start(args, format);
    int n = std::vsnprintf(buffer, sizeof buffer, format, args);
    va_end(args);
    if (n < 0) {
        return {};
    }
    return std::string(buffer, std::min(static_cast<size_t>(n), sizeof buffer - 1));
}

void write_stderr(std::string_view text) {
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

ProgressStyle progress_style_for_stderr() {
    return ::isatty(STDERR_FILENO) == 1 ? ProgressStyle::bar : ProgressStyle::lines;
}

std::string format_bytes(std::uint64_t bytes) {
    static constexpr const char* k_units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) {
        return sprintf_string("%llu B", static_cast<unsigned long long>(bytes));
    }
    double value = static_cast<double>(bytes);
    size_t unit = 0;
    while (value >= 1024 && unit + 1 < std::size(k_units)) {
        value /= 1024;
        ++unit;
    }
    return sprintf_string("%.1f %s", value, k_units[unit]);
}

Progress::Progress(ProgressStyle style, std::string label)
    : m_style(style), m_label(std::move(label)) {}

void Progress::start(std::string_view url) {
    m_started = Clock::now();
    m_last_draw = Clock::time_point{};
    if (m_style == ProgressStyle::lines) {
        write_stderr("fetch " + m_label + ": downloading " + std::string(url) + "\n");
    }
}

void Progress::update(std::uint64_t received, std::uint64_t total) {
    if (m_style != ProgressStyle::bar) {
        return;
    }
    auto now = Clock::now();
    if (now - m_last_draw < k_redraw_interval) {
        return;
    }
    m_last_draw = now;
    draw(received, total);
}

void Progress::draw(std::uint64_t received, std::uint64_t total) {
    double elapsed = seconds_since(m_started);
    auto rate =
        static_cast<std::uint64_t>(elapsed > 0 ? static_cast<double>(received) / elapsed : 0.0);
    std::string line = "\r\x1b[2K" + m_label + " ";
    if (total > 0) {
        double fraction = std::min(1.0, static_cast<double>(received) / static_cast<double>(total));
        int filled = static_cast<int>(fraction * k_bar_width);
        line += '[' + std::string(static_cast<size_t>(filled), '#') +
                std::string(static_cast<size_t>(k_bar_width - filled), ' ') + ']';
        line += sprintf_string(" %3.0f%% %s / %s", fraction * 100, format_bytes(received).c_str(),
                               format_bytes(total).c_str());
    } else {
        line += format_bytes(received);
    }
    line += "  " + format_bytes(rate) + "/s";
    write_stderr(line);
    m_bar_drawn = true;
}

void Progress::end_bar_line() {
    if (m_bar_drawn) {
        write_stderr("\n");
        m_bar_drawn = false;
    }
}

void Progress::retrying(int failed_attempt, std::string_view reason,
                        std::chrono::milliseconds wait) {
    if (m_style == ProgressStyle::none) {
        return;
    }
    end_bar_line();
    write_stderr("fetch " + m_label + ": attempt " + std::to_string(failed_attempt) + " failed (" +
                 std::string(reason) + "); retrying in " +
                 sprintf_string("%.1f", static_cast<double>(wait.count()) / 1000) + " s\n");
}

void Progress::done(std::uint64_t size, std::string_view sha256) {
    if (m_style == ProgressStyle::none) {
        return;
    }
    if (m_style == ProgressStyle::bar) {
        draw(size, size);
        end_bar_line();
    }
    double elapsed = seconds_since(m_started);
    write_stderr("fetch " + m_label + ": " + format_bytes(size) + " in " +
                 sprintf_string("%.1f", elapsed) + " s, sha256 " + std::string(sha256) + "\n");
}

void Progress::abandon() {
    end_bar_line();
}

} // namespace shimkeeper::fetch

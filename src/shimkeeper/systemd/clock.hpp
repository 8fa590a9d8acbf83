// The time seam: wall-clock time and waiting. Restart timestamps outlive the process (they are
// kept in a file), so this is the realtime clock; tests inject a fake that jumps instead of
// waiting.
#pragma once

#include <chrono>

namespace shimkeeper::systemd {

class Clock {
public:
    using time_point = std::chrono::system_clock::time_point;

    virtual ~Clock() = default;
    virtual time_point now() const = 0;
    virtual void sleep_until(time_point when) = 0;
};

// std::chrono::system_clock and std::this_thread::sleep_until.
class RealClock final : public Clock {
public:
    time_point now() const override;
    void sleep_until(time_point when) override;
};

} // namespace shimkeeper::systemd

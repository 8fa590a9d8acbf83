#include "shimkeeper/systemd/clock.hpp"

#include <thread>

namespace shimkeeper::systemd {

Clock::time_point RealClock::now() const {
    return std::chrono::system_clock::now();
}

void RealClock::sleep_until(time_point when) {
    std::this_thread::sleep_until(when);
}

} // namespace shimkeeper::systemd

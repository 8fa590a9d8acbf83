// Owning handles for sd-event objects, and the one place where sd-event's negative return codes
// become util::Error. Nothing outside daemon/ sees a raw sd_event pointer or a raw rc.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <memory>
#include <string>
#include <systemd/sd-event.h>

namespace shimkeeper::daemon {

struct SdEventDeleter {
    void operator()(sd_event* event) const { sd_event_unref(event); }
};

// Disabling before the unref matters: the loop may still hold a reference to a source, and a
// source we dropped must never fire again.
struct SdEventSourceDeleter {
    void operator()(sd_event_source* source) const { sd_event_source_disable_unref(source); }
};

using SdEvent = std::unique_ptr<sd_event, SdEventDeleter>;
using SdEventSource = std::unique_ptr<sd_event_source, SdEventSourceDeleter>;

// rc < 0 (a negative errno, sd-event's convention) -> Error naming what we were doing.
inline util::Expected<int> sd_check(int rc, const std::string& what) {
    if (rc < 0) {
        return std::unexpected(util::Error::from_errno(util::ErrorCode::external, what, -rc));
    }
    return rc;
}

} // namespace shimkeeper::daemon

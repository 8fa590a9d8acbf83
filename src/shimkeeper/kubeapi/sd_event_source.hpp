// Owners for the sd-event objects kubeapi/ creates (the daemon has its own in daemon/; kubeapi/
// may not depend on daemon/).
#pragma once

#include <memory>
#include <systemd/sd-event.h>

namespace shimkeeper::kubeapi {

// Disabled before the unref: a source we dropped must never fire, even if the loop still
// holds a reference while dispatching it.
struct SdSourceDeleter {
    void operator()(sd_event_source* source) const { sd_event_source_disable_unref(source); }
};
using SdSource = std::unique_ptr<sd_event_source, SdSourceDeleter>;

struct SdEventDeleter {
    void operator()(sd_event* event) const { sd_event_unref(event); }
};
using SdEventRef = std::unique_ptr<sd_event, SdEventDeleter>;

} // namespace shimkeeper::kubeapi

// Staging ahead of rollout slots (stage_ahead.hpp) on a thread of its own, so that `shimkeeper
// run` keeps answering while an artifact downloads: a slot granted for another Shim is taken at
// once, and a halt or a deleted Shim stops the download it no longer needs.
//
// Each Shim is staged on a thread of its own, with edges of its own (a downloader, copies of the
// settings, the containerd detection and the store's paths), so that a slow download delays no
// other Shim's staging. Like `shimkeeper fetch` it changes only the content-addressed store, but
// without the node lock, so a transaction may run meanwhile: an artifact enters the store by one
// rename of a complete folder (Store::commit_artifact, which tolerates the same digest arriving
// twice), and a transaction's garbage collection keeps what staging ahead stages
// (staged_ahead_digests, Node::keep_artifacts). A node asks for a Shim's slot once its staging
// has ended, stored or failed (the transaction then fetches again and reports what it meets); a
// staging that ended is not started again for the same version of that Shim.
#pragma once

#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/fetch/downloader.hpp"
#include "shimkeeper/reconcile/node.hpp"
#include "shimkeeper/spec/agent_settings.hpp"
#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/store/store.hpp"
#include "shimkeeper/util/fd.hpp"
#include "shimkeeper/util/log.hpp"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace shimkeeper::reconcile {

class BackgroundStaging {
public:
    using MakeDownloader = std::function<std::unique_ptr<fetch::Downloader>()>;

    // `make_downloader`: one for each staging's thread.
    BackgroundStaging(util::Log log, MakeDownloader make_downloader);
    // Stops the downloads in progress (each within about a second) and waits for their threads.
    ~BackgroundStaging();
    BackgroundStaging(const BackgroundStaging&) = delete;
    BackgroundStaging& operator=(const BackgroundStaging&) = delete;

    // Readable when a staging has ended: then take_ended().
    int fd() const { return m_ended_signal.get(); }
    // Clears fd(); true when a staging ended since the last call.
    bool take_ended();

    // `shims`: what the rollout gate finds worth staging ahead at `node`. Starts staging each
    // one that pins its content, is not in the store yet and has not been staged at this
    // version before; stops the download of any version no longer among them. Returns the names
    // whose staging has not ended: the node asks no slot for them yet. Called from one thread.
    std::set<std::string> stage(const Node& node, const std::vector<spec::ShimSpec>& shims);

private:
    struct Job {
        spec::ShimSpec shim;
        util::HostRoot root;
        spec::AgentSettings settings;
        containerd::Detection detection;
        store::Store store;
    };
    struct Running {
        std::string name;
        std::atomic<bool> stop{false};
        std::atomic<bool> ended{false};
        std::thread thread;
    };

    void stage_one(const Job& job, Running& running);
    void collect_ended();

    util::Log m_log;
    MakeDownloader m_make_downloader;
    util::Fd m_ended_signal; // an eventfd
    // By version_key: the stagings started and not yet collected, and those that ended (stored
    // or failed) while still wanted.
    std::map<std::string, std::unique_ptr<Running>> m_running;
    std::set<std::string> m_ended;
};

} // namespace shimkeeper::reconcile

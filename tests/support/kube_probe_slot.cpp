// kube-probe's rollout-slot commands: shimkeeper's SlotKeeper (cluster/agent/slot_keeper.hpp)
// taking and keeping a granted slot as node NODE (on its own Node), for
// tests/cluster/slot_keeper_writes.sh. A held slot is JSON {"target": {"shim", "uid",
// "generation", "slots"}, "lease": <the grant as last read>, "hold": <the entry last written>,
// "lost": "...", "committing": seconds}.
//
//   slot NS NODE take LEASE               takes the grant LEASE (read as NODE) at once; prints the
//                                         held slot
//   slot NS NODE renew < held             one renewal; prints the held slot after it (its
//                                         "lost" set when the slot is lost), exit 1 when it failed
//   slot NS NODE fail REASON < held       says failed; prints the grant's name
//   slot NS NODE release < held           says done
#include "kube_probe.hpp"

#include "shimkeeper/cluster/agent/slot_keeper.hpp"
#include "shimkeeper/kubeapi/resource.hpp"

#include <iostream>

using namespace shimkeeper;
using nlohmann::json;

namespace {

json held_to_json(const cluster::agent::HeldSlot& held) {
    return {{"target",
             {{"shim", held.target.shim},
              {"uid", held.target.uid},
              {"generation", held.target.generation},
              {"slots", held.target.slots}}},
            {"lease", held.lease},
            {"hold", cluster::model::format_slot_hold(held.hold)},
            {"lost", held.lost},
            {"committing", held.committing.count()}};
}

cluster::agent::HeldSlot held_from_stdin() {
    const json in = json::parse(std::cin);
    const json& target = in.at("target");
    cluster::agent::HeldSlot held{
        {target.at("shim"), target.at("uid"), target.at("generation"), target.at("slots")},
        in.at("lease"),
        std::chrono::steady_clock::now(), // taken: `take` printed it
        std::chrono::steady_clock::now(),
        in.value("lost", std::string()),
        std::chrono::seconds(in.value("committing", 0L))};
    held.hold = cluster::model::slot_hold_of(in.at("hold").get<std::string>()).value();
    return held;
}

} // namespace

int slot_command(kubeapi::Client& client, const std::vector<std::string>& args) {
    const std::string& ns = args.at(1);
    const std::string& node = args.at(2);
    const std::string& what = args.at(3);
    cluster::agent::SlotKeeper keeper(client, ns, node);
    if (what == "take") {
        auto lease = client.get(kubeapi::leases_resource(), ns, args.at(4));
        if (!lease) {
            return probe_fail(lease.error());
        }
        const cluster::model::SlotSeen grant{cluster::model::slot_lease_of(*lease),
                                             std::chrono::steady_clock::now()};
        const cluster::model::RolloutTarget target{grant.lease.shim, grant.lease.uid,
                                                   grant.lease.generation, 1};
        cluster::model::SlotDecision decision;
        decision.kind = cluster::model::SlotDecision::Kind::hold;
        decision.index = cluster::model::slot_index_of(grant.lease.name);
        decision.existing = &grant;
        auto taken = keeper.take(target, decision);
        if (!taken) {
            return probe_fail(taken.error());
        }
        if (!*taken) {
            std::fprintf(stderr, "the grant was no longer this node's\n");
            return 1;
        }
        std::cout << held_to_json(**taken).dump() << "\n";
        return 0;
    }
    cluster::agent::HeldSlot held = held_from_stdin();
    if (what == "renew") {
        auto renewed = keeper.renew(held);
        std::cout << held_to_json(held).dump() << "\n";
        return renewed ? 0 : probe_fail(renewed.error());
    }
    if (what == "fail") {
        auto marked = keeper.fail(held, args.at(4));
        if (!marked) {
            return probe_fail(marked.error());
        }
        std::cout << *marked << "\n";
        return 0;
    }
    if (what == "release") {
        auto released = keeper.release(held);
        return released ? 0 : probe_fail(released.error());
    }
    return probe_fail(util::Error(util::ErrorCode::invalid_input, "unknown slot command " + what));
}

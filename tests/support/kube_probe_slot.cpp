// kube-probe's rollout-slot commands: shimkeeper's SlotKeeper (cluster/agent/slot_keeper.hpp)
// writing slot Leases as node NODE, for tests/cluster/slot_keeper_writes.sh. A held slot is JSON
// {"target": {"shim", "uid", "generation", "slots"}, "lease": <the Lease>, "lost": "..."}.
//
//   slot NS NODE take SHIM UID GENERATION SLOTS INDEX   creates slot INDEX; prints the held slot
//   slot NS NODE renew < held                            one renewal; prints the held slot after
//                                                        it (its "lost" set when the slot is lost),
//                                                        exit 1 when the renewal failed
//   slot NS NODE fail REASON < held                      marks it failed; prints the Lease marked
#include "kube_probe.hpp"

#include "shimkeeper/cluster/agent/slot_keeper.hpp"

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
            {"lost", held.lost}};
}

cluster::agent::HeldSlot held_from_stdin() {
    const json in = json::parse(std::cin);
    const json& target = in.at("target");
    return {{target.at("shim"), target.at("uid"), target.at("generation"), target.at("slots")},
            in.at("lease"),
            std::chrono::steady_clock::now(),
            in.value("lost", std::string())};
}

} // namespace

int slot_command(kubeapi::Client& client, const std::vector<std::string>& args) {
    const std::string& ns = args.at(1);
    const std::string& node = args.at(2);
    const std::string& what = args.at(3);
    cluster::agent::SlotKeeper keeper(client, ns, node);
    if (what == "take") {
        const cluster::model::RolloutTarget target{args.at(4), args.at(5), std::stol(args.at(6)),
                                                   std::stoi(args.at(7))};
        cluster::model::SlotDecision decision;
        decision.kind = cluster::model::SlotDecision::Kind::take;
        decision.index = std::stoi(args.at(8));
        auto taken = keeper.take(target, decision);
        if (!taken) {
            return probe_fail(taken.error());
        }
        if (!*taken) {
            std::fprintf(stderr, "another node was first\n");
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
    return probe_fail(util::Error(util::ErrorCode::invalid_input, "unknown slot command " + what));
}

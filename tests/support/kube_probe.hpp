// Shared between kube-probe's one-shot calls and its long-running commands.
#pragma once

#include "shimkeeper/kubeapi/client.hpp"

#include <string>
#include <vector>

shimkeeper::util::Expected<shimkeeper::kubeapi::Resource> probe_resource(const std::string& name);
int probe_fail(const shimkeeper::util::Error& error);
// watch, lease, event: runs until done; the exit code.
int probe_loop_command(shimkeeper::kubeapi::Client& client, const std::vector<std::string>& args);
// coordinator: runs shimkeeper's coordinator (kube_probe_coordinator.cpp).
int coordinator_command(shimkeeper::kubeapi::Client& client, const std::vector<std::string>& args);
// slot: a node's rollout-slot writes (kube_probe_slot.cpp).
int slot_command(shimkeeper::kubeapi::Client& client, const std::vector<std::string>& args);

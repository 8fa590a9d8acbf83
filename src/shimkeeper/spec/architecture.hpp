// Architecture names as Kubernetes and Go spell them (the `kubernetes.io/arch` node label):
// amd64, arm64, arm, 386, ppc64le, s390x, riscv64, loong64, mips64le. Artifact URLs and
// [[shim.fetch.platform]] entries use either these or the kernel's names (x86_64, aarch64, ...);
// both are folded onto one spelling so that a match never depends on which was written.
#pragma once

#include <string>
#include <string_view>

namespace shimkeeper::spec {

// Lowercases and maps aliases: x86_64/x86-64/amd64 -> amd64, aarch64/arm64 -> arm64,
// armv7l/armv7/armv6l/armhf/arm -> arm, i386..i686/x86/386 -> 386, ... Unknown names are
// returned lowercased, unchanged otherwise.
std::string normalise_architecture(std::string_view name);

// This node's architecture: uname(2)'s machine, normalised.
std::string node_architecture();

} // namespace shimkeeper::spec

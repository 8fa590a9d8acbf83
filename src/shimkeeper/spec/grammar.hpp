// What the desired state's strings may look like. Each value lands in another format — a shim
// name becomes a store file name and a node label key, a handler becomes a TOML key in
// containerd's config and a RuntimeClass handler, a binary becomes a file name under
// /var/lib/shimkeeper/bin — so each checker accepts exactly what every one of those formats
// accepts. The `*_problem` functions return nullopt when the value is fine, otherwise a reason
// the loader prefixes with the value's file:line:column.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace shimkeeper::spec {

inline constexpr std::size_t k_max_name_length = 63;
inline constexpr std::size_t k_max_file_name_length = 255;

// [a-z0-9]([-a-z0-9._]*[a-z0-9])?, at most 63 characters. Used for shim names, handlers and
// RuntimeClass names.
// [a-z0-9]: what names, tags and repository components begin and end with.
bool is_lower_alnum(char c);

bool is_valid_name(std::string_view name);

// A Kubernetes Node name (DNS-1123 subdomain): lowercase alphanumerics, '-' and '.', starting and
// ending alphanumeric, at most 253 characters.
bool is_valid_node_name(std::string_view name);

// The shim binary containerd looks for, following containerd's own rule (runtime/v2/shim
// BinaryName: the last two dot-separated parts): io.containerd.spin.v2 ->
// containerd-shim-spin-v2. For an absolute path, its last component. Empty when neither form
// applies.
std::string default_binary_for(std::string_view runtime_type);

// The same rule read backwards, for a Shim object that names no runtime type: a binary named
// containerd-shim-<name>-v<N> says io.containerd.<name>.v<N> (containerd-shim-kata-qemu-v2 ->
// io.containerd.kata-qemu.v2). nullopt when the name does not have that shape.
std::optional<std::string> runtime_type_said_by_binary(std::string_view binary);

// runtime_type is one of:
//   shim-name := "io.containerd." segment { "." segment } "." version
//     segment := [a-z0-9] { [a-z0-9_-] }     (lowercase; e.g. "spin", "kata-qemu")
//     version := "v" digit { digit }          (e.g. "v1", "v2")
//   abs-path  := "/" ... with no ".." component, no trailing "/", no whitespace, no quote
//                (' " `) and no control character
// Both at most 4096 characters.
std::optional<std::string> runtime_type_problem(std::string_view runtime_type);

// A plain file name: not empty, at most 255 bytes, no '/', no "..", no control character,
// no whitespace.
std::optional<std::string> binary_problem(std::string_view binary);

// Printable ASCII (space to '~'), at most 128 characters.
std::optional<std::string> version_problem(std::string_view version);

// scheme "https", "http" or "file" (case-insensitive) followed by "://"; http(s) needs a host,
// file needs an absolute path (file:///...). No whitespace or control character anywhere.
std::optional<std::string> url_problem(std::string_view url);

// Exactly 64 hexadecimal digits; returns them lowercased, or nullopt when malformed.
std::optional<std::string> normalise_sha256(std::string_view digest);

// An absolute path without control characters (for agent settings such as [store] dir).
std::optional<std::string> absolute_path_problem(std::string_view path);

} // namespace shimkeeper::spec

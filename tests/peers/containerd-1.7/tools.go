//go:build tools

// Pins containerd 1.7's commands for the real-node tests; scripts/build-peers builds them from
// this module. Never compiled into anything (the tools build tag is never set).
package peers

import (
	_ "github.com/containerd/containerd/cmd/containerd"
	_ "github.com/containerd/containerd/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/cmd/ctr"
)

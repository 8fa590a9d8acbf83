// shimkeeper: keeps a node's set of containerd shims in a declared state.
#include "shimkeeper/cli/app.hpp"

int main(int argc, char** argv) {
    return shimkeeper::cli::run_app(argc, argv);
}

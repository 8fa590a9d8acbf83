// Probe 0: an empty C++ program, the floor the two transports are measured against.
#include "rss.hpp"

int main() {
    print_memory("baseline (no transport)", "-");
    return 0;
}

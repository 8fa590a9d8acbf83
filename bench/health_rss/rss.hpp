// Prints this process's memory figures from /proc/self/status: what a daemon holding this
// transport costs after one call.
#pragma once

#include <fstream>
#include <iostream>
#include <string>

inline void print_memory(const char* probe, const std::string& version) {
    std::ifstream status("/proc/self/status");
    std::string line;
    std::cout << probe << "\tversion=" << version;
    while (std::getline(status, line)) {
        if (line.starts_with("VmRSS:") || line.starts_with("VmHWM:") ||
            line.starts_with("RssAnon:") || line.starts_with("RssFile:") ||
            line.starts_with("Threads:")) {
            std::string value = line.substr(line.find(':') + 1);
            value.erase(0, value.find_first_not_of(" \t"));
            std::cout << "\t" << line.substr(0, line.find(':')) << "=" << value;
        }
    }
    // Pss shares each shared-library page among the processes mapping it: the fairer figure
    // for file-backed pages on a node where other programs load the same libraries.
    std::ifstream rollup("/proc/self/smaps_rollup");
    while (std::getline(rollup, line)) {
        if (line.starts_with("Pss:")) {
            std::string value = line.substr(line.find(':') + 1);
            value.erase(0, value.find_first_not_of(" \t"));
            std::cout << "\tPss=" << value;
        }
    }
    std::cout << "\n";
}

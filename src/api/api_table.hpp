#pragma once

namespace odnn::api {

struct ApiEntry {
    const char* name;
    const char* sublibrary;  // graph, ops, cnn, adv
    const void* address;     // the exported function
    const void* stub;        // its NOT_SUPPORTED stub (nullptr: no stub exists)
    bool implemented() const { return address != stub; }
};

extern const ApiEntry kApiTable[];
extern const int kApiCount;

}  // namespace odnn::api

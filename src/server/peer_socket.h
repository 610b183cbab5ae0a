// Noticing that an HTTP client went away while its request waits on a generation. cpp-httplib
// (0.11) does not expose a request's socket, so it is found by its peer address among this
// process's descriptors; the connection's descriptor stays open until the handler returns.
#pragma once

#include <string>

namespace clover::server {

// Returns the descriptor of the connected TCP socket whose peer is `address`:`port`, or -1.
int FindPeerSocket(const std::string& address, int port);

// Returns true when the peer of `fd` has closed or reset the connection.
bool PeerClosed(int fd);

}  // namespace clover::server

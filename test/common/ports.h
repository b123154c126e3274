//===- test/common/ports.h - Loopback ports that parallel tests never share ===//
//
// For tests that must name a port before a child process binds it (a node file's
// base_port + i, a server's --grpc-port). A port handed out here lies below the kernel's
// ephemeral range (so no bind to port 0 anywhere takes it), binds on loopback at the time,
// and is locked (flock on a file in <temp dir>/rs_test_ports/) until this test process
// exits, so two tests run in parallel by ctest never get the same port. In-process servers
// bind port 0 instead (WorkerOptions::ephemeral_ports) and need none of this.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace rs::testing {

/// The first of `n` consecutive free loopback ports, reserved for this process's lifetime;
/// 0 when none is found.
int reservePorts(int n);

/// One free loopback port, reserved for this process's lifetime; 0 when none is found.
inline int freePort() { return reservePorts(1); }

} // namespace rs::testing

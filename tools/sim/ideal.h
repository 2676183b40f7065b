// The yardstick of a simulated operation (issue #32's "ideal"): the
// slowest domain's own library doing the operation's share inside the
// domain, plus the bytes that must cross into or out of the busiest
// domain over all of its NICs at once (or, for pretend hosts, over the
// one loopback) after one transfer's latency. It is not a bound: a pipelined plan overlaps the two
// parts, and a one-shot plan may reach a domain's ranks over the links
// without its library (the ring of sends and receives never uses one).
// Bytes that must cross,
// for S bytes (the operation's size as hetccl-sim takes it), N ranks,
// a domain of n ranks and D domains:
//   all-reduce      2 (D-1)/D S each way (each domain's share of the
//                   combine goes out, the others' results come in);
//   all-gather      in: S (N-n)/N; out: S n/N (D-1);
//   reduce-scatter  the same, the other way round;
//   broadcast       out of the root's domain (D-1) S, into the others S;
//   reduce          the same, the other way round;
//   all-to-all      n S (N-n)/N each way;
//   send/recv ring  S each way, over one rank's NIC.
#pragma once

#include "cluster.h"
#include "simulation.h"

namespace hetccl::sim {

double idealSeconds(const ClusterSpec& cluster, const OpSpec& op);

}  // namespace hetccl::sim

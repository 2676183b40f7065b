// The cluster hetccl-sim simulates: vendor domains of hosts of GPUs (or
// CPU ranks), each host with its NICs, and what each domain's own library
// costs. Ranks are numbered domain by domain, host by host, GPU by GPU,
// as a job launched host by host numbers them; every host belongs to one
// domain (a node of one vendor).
#pragma once

#include <string>
#include <vector>

namespace hetccl::sim {

// A domain's own library (NCCL, RCCL, HetCCL's host collectives) as an
// alpha-beta model of bus bandwidth: a collective of S bytes takes
// alphaUs + (the ring's bus factor) * S / busGBps.
struct LibraryModel {
  std::string name;
  double busGBps = 0;     // bus bandwidth inside one host
  double alphaUs = 0;     // per collective
  double memoryGBps = 0;  // a rank's own reductions and copies
};

// Defaults from public figures: NCCL on 8 H100s over NVLink, RCCL on 8
// MI300Xs over xGMI (nccl-tests/rccl-tests all-reduce bus bandwidth at
// large sizes), HetCCL's host collectives on one host's memory. The
// name's model, or nothing for an unknown name.
bool libraryModel(const std::string& name, LibraryModel* model);

struct DomainSpec {
  LibraryModel library;
  int hosts = 1;
  int ranksPerHost = 8;
};

struct NicSpec {
  int perHost = 8;       // rails: a rank uses NIC (local index % perHost)
  double gbps = 400;     // each way
  double latencyUs = 2;  // per transfer
};

struct ClusterSpec {
  std::vector<DomainSpec> domains;
  NicSpec nics;
  // Hosts that are one machine pretending (HETCCL_HOSTID, the tests'
  // layouts): every transfer between hosts takes turns on that machine's
  // loopback, both ways together, at this rate (GB/s) instead of NICs.
  // 0: real hosts, NICs that send and receive at once.
  double loopbackGBps = 0;
  // The staged GPU engine: between hosts a GPU rank's transfer goes in
  // pieces (algo/pieced_link.h) that the GPU copies to pinned host memory
  // and back at this rate each way (GB/s), and each piece costs the
  // proxy's hand-over between the GPU's streams and the link (us).
  double copyGBps = 50;
  double pieceUs = 0;

  int nranks() const;
  int nhosts() const;
};

// Where a rank sits.
struct RankPlace {
  int domain;
  int host;        // global host index
  int localIndex;  // the rank's index on its host
  int domainRank;  // its index among its domain's ranks
};

std::vector<RankPlace> placeRanks(const ClusterSpec& cluster);

// "2 domains x 4 hosts x 8 ranks, 400 Gb/s NICs (8 per host)".
std::string describe(const ClusterSpec& cluster);

}  // namespace hetccl::sim

// Forced domain layouts (HETCCL_DOMAINS), so that cross-domain plans run on
// CPU ranks: one label per rank; ranks with equal labels share a domain.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "harness/run_ranks.h"
#include "nccl.h"

namespace hetccl::mp {

struct DomainLayout {
  std::vector<int> labels;  // empty: no forcing, one domain
  // Instead of labels: the ranks are on this many hosts (network
  // namespaces), a domain each (HETCCL_DOMAINS=host).
  int hosts = 0;
  // The ranks are GPU ranks emulated on the host (HETCCL_EMULATED_GPU):
  // the GPU engine runs their plans.
  bool emulatedGpus = false;
  // Further variables (HETCCL_HOSTID, HETCCL_TRANSPORT, UCX_TLS); a
  // non-empty "HETCCL_TRANSPORT" also names the layout.
  std::map<std::string, std::string> env;
  // Instead of emulatedGpus: only these ranks emulate GPUs, the others are CPU
  // ranks; with no labels the domains form by runtime.
  std::vector<int> emulatedGpuRanks;

  int count() const;         // hosts, else distinct labels (1 when empty)
  std::string spec() const;  // the HETCCL_DOMAINS value, e.g. "0,1,1", "host"
  std::string name() const;  // for test names, e.g. "domains011"
  void applyTo(RunOptions* options) const;
};

// gtest prints parameters in test listings (and so in ctest names).
void PrintTo(const DomainLayout& layout, std::ostream* out);

// One domain (no forcing).
DomainLayout oneDomain();
// A domain per host, for ranks on `hosts` real hosts.
DomainLayout domainPerHost(int hosts, bool emulatedGpus);
// Explicit labels, e.g. {0, 1, 0, 1} for two interleaved domains.
DomainLayout domainsByLabel(std::vector<int> labels);
// The same, the ranks emulating GPUs.
DomainLayout emulatedGpuDomains(std::vector<int> labels);
// Each domain a pretend host (HETCCL_HOSTID), linked by UCX over its tcp
// transport only, as between real hosts.
DomainLayout ucxBetweenPretendHosts(std::vector<int> labels);
// The same, the ranks emulating GPUs: their GPU buffers go to UCX as they
// are (an emulated GPU's memory is host memory, which UCX moves).
DomainLayout ucxGpuBuffersBetweenPretendHosts(std::vector<int> labels);
// The same linked by the net transport: over the stand-in NCCL net plugin
// (tests/net_plugin), or over the plugin HETCCL_NET_PLUGIN names in this
// process's environment (aws-ofi-nccl's runs set it).
DomainLayout netBetweenPretendHosts(std::vector<int> labels);

// Emulated GPU ranks joined over tcp (the staged GPU engine), every other
// launch said to be captured and run once at once, as a graph's replay
// (HETCCL_EMULATED_CAPTURES). Each rank must be its domain's only one:
// a domain of several GPUs refuses a capture.
DomainLayout emulatedCapturesOverTcp(std::vector<int> labels);

// Whether this build made the UCX module (libhetccl-ucx.so): layouts that
// force ucx are skipped without it.
bool ucxModuleBuilt();

// Fails the rank unless `comm` reports `expected` domains: a layout that
// the library silently ignored would otherwise test nothing new.
void checkDomainCount(ncclComm_t comm, int expected);

}  // namespace hetccl::mp

#include "harness/domains.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <utility>

#include "harness/check.h"
#include "hetccl.h"

namespace hetccl::mp {

int DomainLayout::count() const {
  if (hosts > 0) return hosts;
  if (labels.empty()) return 1;
  return static_cast<int>(std::set<int>(labels.begin(), labels.end()).size());
}

std::string DomainLayout::spec() const {
  if (hosts > 0) return "host";
  std::string text;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) text += ",";
    text += std::to_string(labels[i]);
  }
  return text;
}

std::string DomainLayout::name() const {
  if (!emulatedGpuRanks.empty()) return "CpuAndGpuRanks";
  if (labels.empty() && hosts == 0) return "OneDomain";
  std::string text = emulatedGpus ? "EmulatedGpuDomains" : "Domains";
  if (hosts > 0) return text + "PerHost" + std::to_string(hosts);
  auto transport = env.find("HETCCL_TRANSPORT");
  if (transport != env.end()) {
    text = transport->second + text;
    text[0] = static_cast<char>(toupper(text[0]));
  }
  for (int label : labels) text += std::to_string(label);
  if (env.count("HETCCL_EMULATED_CAPTURES")) text += "Captured";
  return text;
}

void DomainLayout::applyTo(RunOptions* options) const {
  if (!labels.empty() || hosts > 0) options->env["HETCCL_DOMAINS"] = spec();
  if (emulatedGpus) options->env["HETCCL_EMULATED_GPU"] = "1";
  for (const auto& [name, value] : env) options->env[name] = value;
  if (emulatedGpuRanks.empty()) return;
  options->rankEnv = [ranks = emulatedGpuRanks](int rank) {
    std::map<std::string, std::string> rankEnv;
    if (std::find(ranks.begin(), ranks.end(), rank) != ranks.end())
      rankEnv["HETCCL_EMULATED_GPU"] = "1";
    return rankEnv;
  };
}

void PrintTo(const DomainLayout& layout, std::ostream* out) {
  *out << layout.name();
}

DomainLayout oneDomain() { return DomainLayout(); }

DomainLayout domainPerHost(int hosts, bool emulatedGpus) {
  DomainLayout layout;
  layout.hosts = hosts;
  layout.emulatedGpus = emulatedGpus;
  return layout;
}

DomainLayout domainsByLabel(std::vector<int> labels) {
  DomainLayout layout;
  layout.labels = std::move(labels);
  return layout;
}

DomainLayout emulatedGpuDomains(std::vector<int> labels) {
  DomainLayout layout = domainsByLabel(std::move(labels));
  layout.emulatedGpus = true;
  return layout;
}

DomainLayout ucxBetweenPretendHosts(std::vector<int> labels) {
  DomainLayout layout = domainsByLabel(labels);
  std::string hosts;
  for (int label : labels)
    hosts +=
        std::string(hosts.empty() ? "" : ",") + "host" + std::to_string(label);
  layout.env = {{"HETCCL_HOSTID", hosts},
                {"HETCCL_TRANSPORT", "ucx"},
                {"UCX_TLS", "tcp"}};
  return layout;
}

DomainLayout ucxGpuBuffersBetweenPretendHosts(std::vector<int> labels) {
  DomainLayout layout = ucxBetweenPretendHosts(std::move(labels));
  layout.emulatedGpus = true;
  return layout;
}

DomainLayout netBetweenPretendHosts(std::vector<int> labels) {
  DomainLayout layout = ucxBetweenPretendHosts(std::move(labels));
  layout.env.erase("UCX_TLS");
  layout.env["HETCCL_TRANSPORT"] = "net";
  // A plugin the run was given (tests/net_plugin/with-aws-ofi-nccl.sh)
  // stands; the stand-in otherwise.
  if (getenv("HETCCL_NET_PLUGIN") == nullptr)
    layout.env["HETCCL_NET_PLUGIN"] = HETCCL_TEST_STANDIN_NET;
  return layout;
}

DomainLayout emulatedCapturesOverTcp(std::vector<int> labels) {
  DomainLayout layout = emulatedGpuDomains(std::move(labels));
  layout.env = {{"HETCCL_TRANSPORT", "tcp"}, {"HETCCL_EMULATED_CAPTURES", "1"}};
  return layout;
}

bool ucxModuleBuilt() {
#ifdef HETCCL_TEST_UCX_MODULE
  return true;
#else
  return false;
#endif
}

void checkDomainCount(ncclComm_t comm, int expected) {
  int ndomains = 0;
  int domain = -1;
  MP_CHECK_NCCL(hetcclCommDomains(comm, &ndomains, &domain));
  MP_CHECK(ndomains == expected)
      << "the communicator has " << ndomains << " domains, expected "
      << expected << " (HETCCL_DOMAINS ignored?)";
  MP_CHECK(domain >= 0 && domain < ndomains) << "domain index " << domain;
}

}  // namespace hetccl::mp

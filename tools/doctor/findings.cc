#include "doctor/findings.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "kit/json_text.h"
#include "perf/perf_error.h"

namespace hetccl {
namespace doctor {
namespace {

using perf::strprintf;

std::string probeName(const Probe& probe) {
  return probe.domainB < 0
             ? strprintf("domain %d", probe.domainA)
             : strprintf("domains %d and %d", probe.domainA, probe.domainB);
}

// As HetCCL counts them (its map's first line: "4 ranks, 2 domains, 2
// hosts"): ranks of one machine in other network namespaces, or that
// HETCCL_HOSTID puts on hosts of their own, share a host name.
int hostsOf(const Findings& findings) {
  int ranks = 0, domains = 0, hosts = 0;
  if (std::sscanf(findings.topology.c_str(), "%d %*[a-z], %d %*[a-z], %d",
                  &ranks, &domains, &hosts) == 3)
    return hosts;
  std::set<std::string> names;
  for (const perf::RankInfo& rank : findings.ranks) names.insert(rank.host);
  return static_cast<int>(names.size());
}

// What to do about an init that failed, from what the library said.
std::string adviceFor(const std::string& failure) {
  if (failure.find("never arrived") != std::string::npos)
    return "start every rank of the job, and make sure each reaches rank 0's "
           "host (HETCCL_COMM_ID, or the launcher's MASTER_ADDR and port)";
  if (failure.find("no NCCL found") != std::string::npos ||
      failure.find("no RCCL found") != std::string::npos)
    return "install the vendor library on that node, or set "
           "HETCCL_NCCL_LIBRARY / HETCCL_RCCL_LIBRARY to its path there";
  if (failure.find("release") != std::string::npos ||
      failure.find("protocol") != std::string::npos)
    return "install the same HetCCL release on every node";
  return "the message above says what failed";
}

// "0,1,3".
std::string rankList(const std::vector<int>& ranks) {
  std::string text;
  for (int rank : ranks)
    text += (text.empty() ? "" : ",") + std::to_string(rank);
  return text;
}

// The release part of a domain library's description ("NCCL 2.28.9" of
// "NCCL 2.28.9, /usr/lib/libnccl.so.2"): nodes may keep it in different
// places, but must run the same release.
std::string releasePart(const std::string& library) {
  return library.substr(0, library.find(", "));
}

// Domain by domain: each library description and the ranks that run it.
using DomainLibraries = std::map<int, std::map<std::string, std::vector<int>>>;

DomainLibraries librariesByDomain(const Findings& findings) {
  DomainLibraries domains;
  for (size_t r = 0; r < findings.domainLibraries.size(); ++r)
    domains[findings.ranks[r].domain][findings.domainLibraries[r]].push_back(
        static_cast<int>(r));
  return domains;
}

// Pair of domains (the lower first) by pair: each way their GPU ranks'
// buffers go, with the ranks (of either side) whose buffers go that way.
using GpuBufferPaths =
    std::map<std::pair<int, int>, std::map<std::string, std::vector<int>>>;

GpuBufferPaths gpuBufferPathsByPair(const Findings& findings) {
  GpuBufferPaths pairs;
  for (size_t r = 0; r < findings.gpuBuffers.size(); ++r) {
    const int own = findings.ranks[r].domain;
    std::istringstream lines(findings.gpuBuffers[r]);
    std::string line;
    while (std::getline(lines, line)) {
      int other = -1;
      const size_t colon = line.find(": ");
      if (std::sscanf(line.c_str(), "domain %d:", &other) != 1 ||
          colon == std::string::npos)
        continue;
      pairs[{std::min(own, other), std::max(own, other)}]
           [line.substr(colon + 2)]
               .push_back(static_cast<int>(r));
    }
  }
  return pairs;
}

void addLibraryProblems(const Findings& findings,
                        std::vector<std::string>& problems) {
  for (const auto& [domain, libraries] : librariesByDomain(findings)) {
    std::map<std::string, std::vector<int>> releases;
    for (const auto& [library, ranks] : libraries)
      for (int rank : ranks) releases[releasePart(library)].push_back(rank);
    if (releases.size() < 2) continue;
    std::string which;
    for (const auto& [release, ranks] : releases)
      which += strprintf("%s%s on rank(s) %s", which.empty() ? "" : ", ",
                         release.c_str(), rankList(ranks).c_str());
    problems.push_back(strprintf(
        "the ranks of domain %d run different library releases (%s): a "
        "domain's library needs the same release on every node; install one "
        "release everywhere or set HETCCL_NCCL_LIBRARY / HETCCL_RCCL_LIBRARY "
        "to it",
        domain, which.c_str()));
  }
}

void addSettingProblems(const Findings& findings,
                        std::vector<std::string>& problems) {
  for (size_t r = 0; r < findings.settingProblems.size(); ++r)
    if (!findings.settingProblems[r].empty())
      problems.push_back(strprintf("rank %zu (host %s): %s", r,
                                   findings.ranks[r].host,
                                   findings.settingProblems[r].c_str()));
}

void addProbeProblems(const Findings& findings,
                      std::vector<std::string>& problems) {
  for (const Probe& probe : findings.probes) {
    if (probe.failed) {
      problems.push_back(
          "the probe of " + probeName(probe) +
          " failed (the ranks that saw it say why on their stderr): the " +
          (probe.domainB < 0 ? "domain's library" : "link between them") +
          " does not work");
    } else if (probe.domainB >= 0 && probe.busbwGBps < findings.minLinkGBps) {
      problems.push_back(strprintf(
          "the link between %s carries %.3f GB/s, less than the %.3g GB/s "
          "expected of any link (--min-link-bandwidth): check the interface "
          "it uses (the topology above; HETCCL_SOCKET_IFNAME chooses it), "
          "its speed and what else loads it",
          probeName(probe).c_str(), probe.busbwGBps, findings.minLinkGBps));
    }
  }
}

}  // namespace

std::vector<std::string> problemsOf(const Findings& findings) {
  if (!findings.initFailure.empty())
    return {"the communicator could not be created: " + findings.initFailure +
            "; what to do: " + adviceFor(findings.initFailure)};
  std::vector<std::string> problems;
  if (findings.wrong > 0)
    problems.push_back(strprintf(
        "%lld wrong result element(s) in the collective checks: the ranks "
        "compute different results; run hetccl-perf --check 1 on the same "
        "ranks to see which collective, type and size",
        findings.wrong));
  if (findings.warnings > 0)
    problems.push_back(strprintf(
        "the library warned %lld time(s) on %d rank(s)%s%s; each warning "
        "says what to install or set (each rank printed its own: "
        "\"hetccl-doctor: rank R: the library warned: ...\")",
        findings.warnings, findings.warningRanks,
        findings.rankZeroWarnings.empty() ? "" : ", rank 0 first: ",
        findings.rankZeroWarnings.empty()
            ? ""
            : findings.rankZeroWarnings.front().c_str()));
  addLibraryProblems(findings, problems);
  addSettingProblems(findings, problems);
  addProbeProblems(findings, problems);
  return problems;
}

const Probe* slowestLink(const Findings& findings) {
  const Probe* slowest = nullptr;
  for (const Probe& probe : findings.probes)
    if (probe.domainB >= 0 && !probe.failed &&
        (!slowest || probe.busbwGBps < slowest->busbwGBps))
      slowest = &probe;
  return slowest;
}

std::string reportText(const Findings& findings) {
  const std::vector<std::string> problems = problemsOf(findings);
  std::string text =
      strprintf("hetccl-doctor (HetCCL %s)\n", findings.release.c_str());
  if (findings.initFailure.empty()) {
    text += strprintf("%d rank(s) on %d host(s) in %d domain(s)\n",
                      findings.nranks, hostsOf(findings), findings.ndomains);
    text += findings.topology + "\n";
    for (const perf::RankInfo& rank : findings.ranks)
      text += strprintf("  rank %d: %s pid %d, %s, domain %d\n", rank.rank,
                        rank.host, rank.pid, rank.device, rank.domain);
    if (!findings.domainLibraries.empty()) text += "domain libraries:\n";
    for (const auto& [domain, libraries] : librariesByDomain(findings))
      for (const auto& [library, ranks] : libraries)
        text += strprintf("  domain %d: %s (rank(s) %s)\n", domain,
                          library.c_str(), rankList(ranks).c_str());
    const GpuBufferPaths paths = gpuBufferPathsByPair(findings);
    if (!paths.empty()) text += "GPU buffers between domains:\n";
    for (const auto& [pair, ways] : paths)
      for (const auto& [way, ranks] : ways)
        text += strprintf("  domains %d and %d: %s (rank(s) %s)\n", pair.first,
                          pair.second, way.c_str(), rankList(ranks).c_str());
    text += strprintf("checks: %s: %lld wrong\n", findings.checks.c_str(),
                      findings.wrong);
    text += strprintf(
        "probes (all-reduce; latency of 8 bytes, busbw of %zu bytes):\n",
        findings.probeBytes);
    for (const Probe& probe : findings.probes)
      text += probe.failed ? strprintf("  %s (%d ranks): FAILED\n",
                                       probeName(probe).c_str(), probe.ranks)
                           : strprintf("  %s (%d ranks): %.1f us, %.2f GB/s\n",
                                       probeName(probe).c_str(), probe.ranks,
                                       probe.latencyUs, probe.busbwGBps);
    if (!findings.rankZeroWarnings.empty())
      text += "library warnings (rank 0):\n";
    for (const std::string& warning : findings.rankZeroWarnings)
      text += "  " + warning + "\n";
    if (const Probe* slowest = slowestLink(findings))
      text += strprintf("slowest link between domains: %s, %.2f GB/s\n",
                        probeName(*slowest).c_str(), slowest->busbwGBps);
  }
  for (const std::string& problem : problems)
    text += "PROBLEM: " + problem + "\n";
  text += problems.empty()
              ? "ready: every check passed\n"
              : strprintf("not ready: %zu problem(s)\n", problems.size());
  return text;
}

std::string reportJson(const Findings& findings) {
  const std::vector<std::string> problems = problemsOf(findings);
  std::string json = strprintf("{\"release\":%s,\"ready\":%s",
                               kit::jsonQuote(findings.release).c_str(),
                               problems.empty() ? "true" : "false");
  json += ",\"problems\":[";
  for (size_t i = 0; i < problems.size(); ++i)
    json += (i ? "," : "") + kit::jsonQuote(problems[i]);
  json += "]";
  if (findings.initFailure.empty()) {
    json += strprintf(
        ",\"ranks\":%d,\"hosts\":%d,\"domains\":%d,\"wrong\":%lld",
        findings.nranks, hostsOf(findings), findings.ndomains, findings.wrong);
    json += ",\"topology\":" + kit::jsonQuote(findings.topology);
    json += strprintf(",\"warnings\":%lld,\"warning_ranks\":%d",
                      findings.warnings, findings.warningRanks);
    json += ",\"domain_libraries\":[";
    bool first = true;
    for (const auto& [domain, libraries] : librariesByDomain(findings))
      for (const auto& [library, ranks] : libraries) {
        json += strprintf(
            "%s{\"domain\":%d,\"library\":%s,\"ranks\":[%s]}", first ? "" : ",",
            domain, kit::jsonQuote(library).c_str(), rankList(ranks).c_str());
        first = false;
      }
    json += "]";
    json += ",\"gpu_buffers\":[";
    first = true;
    for (const auto& [pair, ways] : gpuBufferPathsByPair(findings))
      for (const auto& [way, ranks] : ways) {
        json += strprintf("%s{\"domains\":[%d,%d],\"path\":%s,\"ranks\":[%s]}",
                          first ? "" : ",", pair.first, pair.second,
                          kit::jsonQuote(way).c_str(), rankList(ranks).c_str());
        first = false;
      }
    json += "]";
    json += strprintf(",\"probe_bytes\":%zu,\"probes\":[", findings.probeBytes);
    for (size_t i = 0; i < findings.probes.size(); ++i) {
      const Probe& p = findings.probes[i];
      json += strprintf(
          "%s{\"domains\":[%d%s],\"ranks\":%d,\"failed\":%s,"
          "\"latency_us\":%.3f,\"busbw_GBps\":%.4f}",
          i ? "," : "", p.domainA,
          p.domainB < 0 ? "" : strprintf(",%d", p.domainB).c_str(), p.ranks,
          p.failed ? "true" : "false", p.latencyUs, p.busbwGBps);
    }
    json += "]";
    if (const Probe* slowest = slowestLink(findings))
      json += strprintf(",\"slowest_link\":[%d,%d]", slowest->domainA,
                        slowest->domainB);
  }
  return json + "}";
}

}  // namespace doctor
}  // namespace hetccl

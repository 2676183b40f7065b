#include "doctor/findings.h"

#include <map>
#include <set>

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

int hostsOf(const Findings& findings) {
  std::set<std::string> hosts;
  for (const perf::RankInfo& rank : findings.ranks) hosts.insert(rank.host);
  return static_cast<int>(hosts.size());
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

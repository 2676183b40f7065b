// What hetccl-doctor found, judged and written out once by rank 0: the
// report a person reads and the JSON a script reads. Pure: the facts come
// in, so that every judgement is testable.
#pragma once

#include <string>
#include <vector>

#include "doctor/probes.h"
#include "perf/report.h"

namespace hetccl {
namespace doctor {

struct Findings {
  int nranks = 0;
  int ndomains = 0;
  std::string release;   // HetCCL's ("0.1.0")
  std::string topology;  // hetcclCommTopology's lines
  std::vector<perf::RankInfo> ranks;
  // By rank: what runs its domain (hetcclCommDomainLibrary: "NCCL 2.28.9,
  // /path"), and what is wrong with its own settings (rank_settings.h;
  // empty: nothing).
  std::vector<std::string> domainLibraries;
  std::vector<std::string> settingProblems;
  // By rank: where a GPU rank's buffers go toward each other domain, one
  // line per domain (hetcclCommGpuBuffers: "domain 1: tcp, staged ...");
  // empty for a CPU rank.
  std::vector<std::string> gpuBuffers;
  std::string checks;     // what the collective checks covered
  long long wrong = 0;    // wrong result elements, all ranks
  size_t probeBytes = 0;  // the bandwidth probe's size
  std::vector<Probe> probes;
  // A link between domains slower than this (GB/s busbw) is a problem.
  double minLinkGBps = 0;
  // The library's WARN lines while the doctor ran (library_warnings.h):
  // how many, on how many ranks, and rank 0's own.
  long long warnings = 0;
  int warningRanks = 0;
  std::vector<std::string> rankZeroWarnings;
  // A failure before any of the above (the communicator's init): then the
  // report is this problem alone.
  std::string initFailure;
};

// Each problem found, with what to do about it; empty when all is right.
std::vector<std::string> problemsOf(const Findings& findings);
// The cross-domain probe of the lowest bandwidth; null without any.
const Probe* slowestLink(const Findings& findings);

std::string reportText(const Findings& findings);
// One JSON object (no newline inside).
std::string reportJson(const Findings& findings);

}  // namespace doctor
}  // namespace hetccl

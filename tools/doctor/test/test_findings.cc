// hetccl-doctor's judgement of what it found (doctor/findings.h): the
// problems and what to do about them, the slowest link, the report and its
// JSON.
#include "doctor/findings.h"

#include <gtest/gtest.h>

#include <cstring>

namespace hetccl {
namespace doctor {
namespace {

Findings healthy() {
  Findings f;
  f.nranks = 4;
  f.ndomains = 2;
  f.release = "0.1.0";
  f.topology = "4 ranks, 2 domains, 2 hosts";
  for (int r = 0; r < 4; ++r) {
    perf::RankInfo info{};
    info.rank = r;
    info.domain = r / 2;
    std::strcpy(info.host, r < 2 ? "nodeA" : "nodeB");
    std::strcpy(info.device, "host");
    f.ranks.push_back(info);
  }
  f.checks = "every collective";
  f.probeBytes = 4 << 20;
  f.probes = {{0, -1, 2, 10, 20, false},
              {1, -1, 2, 12, 18, false},
              {0, 1, 4, 40, 3.5, false}};
  return f;
}

TEST(DoctorFindings, AHealthyJobIsReady) {
  const Findings f = healthy();
  EXPECT_TRUE(problemsOf(f).empty());
  const std::string text = reportText(f);
  EXPECT_NE(text.find("4 rank(s) on 2 host(s) in 2 domain(s)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("slowest link between domains: domains 0 and 1, 3.50 "
                      "GB/s"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ready: every check passed"), std::string::npos);
  EXPECT_EQ(reportJson(f).rfind("{\"release\":\"0.1.0\",\"ready\":true,", 0),
            0u)
      << reportJson(f);
}

// HetCCL's map counts hosts as the library does; without it the host
// names count.
TEST(DoctorFindings, HostsAreCountedAsTheLibraryCountsThem) {
  Findings f = healthy();
  f.topology = "4 ranks, 2 domains, 3 hosts\nhost 0 (nodeA): ranks 0-1";
  EXPECT_NE(reportText(f).find("4 rank(s) on 3 host(s)"), std::string::npos);
  EXPECT_NE(reportJson(f).find("\"hosts\":3,"), std::string::npos);
  f.topology = "1 rank, 1 domain, 1 host";
  EXPECT_NE(reportJson(f).find("\"hosts\":1,"), std::string::npos);
  f.topology.clear();
  EXPECT_NE(reportJson(f).find("\"hosts\":2,"), std::string::npos);
}

TEST(DoctorFindings, WrongResultsAndFailedProbesAreProblems) {
  Findings f = healthy();
  f.wrong = 3;
  f.probes[2].failed = true;
  const std::vector<std::string> problems = problemsOf(f);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("3 wrong result element(s)"), std::string::npos);
  EXPECT_NE(problems[1].find("the probe of domains 0 and 1 failed"),
            std::string::npos);
  EXPECT_EQ(slowestLink(f), nullptr);  // the only link failed
  EXPECT_NE(reportText(f).find("not ready: 2 problem(s)"), std::string::npos);
  EXPECT_NE(reportJson(f).find("\"ready\":false"), std::string::npos);
}

TEST(DoctorFindings, TheLibrarysWarningsAreProblems) {
  Findings f = healthy();
  f.warnings = 2;
  f.warningRanks = 2;
  f.rankZeroWarnings = {"rank 0: links to 2 ranks on other hosts use tcp"};
  ASSERT_EQ(problemsOf(f).size(), 1u);
  EXPECT_NE(problemsOf(f)[0].find("the library warned 2 time(s) on 2 "
                                  "rank(s), rank 0 first: rank 0: links"),
            std::string::npos)
      << problemsOf(f)[0];
  EXPECT_NE(reportText(f).find("library warnings (rank 0):\n  rank 0: links"),
            std::string::npos);
  EXPECT_NE(reportJson(f).find("\"warnings\":2,\"warning_ranks\":2"),
            std::string::npos);
}

TEST(DoctorFindings, AnInitThatFailedSaysWhatToDo) {
  Findings f;
  f.release = "0.1.0";
  f.initFailure = "bootstrap: 3 of 4 rank(s) arrived; rank(s) 3 never arrived";
  ASSERT_EQ(problemsOf(f).size(), 1u);
  EXPECT_NE(problemsOf(f)[0].find("what to do: start every rank"),
            std::string::npos);
  f.initFailure =
      "rank 0 (host a) runs HetCCL 0.1.0 (protocol 6) and rank 1 "
      "(host b) runs HetCCL 0.2.0 (protocol 7): every node of a "
      "communicator needs the same HetCCL release";
  EXPECT_NE(problemsOf(f)[0].find("install the same HetCCL release"),
            std::string::npos);
  f.initFailure = "no NCCL found (set HETCCL_NCCL_LIBRARY to its path)";
  EXPECT_NE(problemsOf(f)[0].find("HETCCL_NCCL_LIBRARY / HETCCL_RCCL_LIBRARY"),
            std::string::npos);
}

TEST(DoctorFindings, EachDomainsLibraryIsReported) {
  Findings f = healthy();
  f.domainLibraries = {"NCCL 2.28.9, /a/libnccl.so.2",
                       "NCCL 2.28.9, /b/libnccl.so.2",
                       "RCCL 2.22.3, /opt/rocm/lib/librccl.so.1",
                       "RCCL 2.22.3, /opt/rocm/lib/librccl.so.1"};
  EXPECT_TRUE(problemsOf(f).empty());  // the same release in two places
  const std::string text = reportText(f);
  EXPECT_NE(text.find("domain libraries:\n"
                      "  domain 0: NCCL 2.28.9, /a/libnccl.so.2 (rank(s) 0)\n"
                      "  domain 0: NCCL 2.28.9, /b/libnccl.so.2 (rank(s) 1)\n"
                      "  domain 1: RCCL 2.22.3, /opt/rocm/lib/librccl.so.1 "
                      "(rank(s) 2,3)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(reportJson(f).find("{\"domain\":1,\"library\":\"RCCL 2.22.3, "
                               "/opt/rocm/lib/librccl.so.1\",\"ranks\":[2,3]}"),
            std::string::npos)
      << reportJson(f);
}

// Each pair of domains: every way its GPU ranks' buffers go, seen from
// either side, with the ranks that said it; CPU ranks say nothing.
TEST(DoctorFindings, WhereGpuBuffersGoIsReportedPerPairOfDomains) {
  Findings f = healthy();
  const std::string staged = "tcp, staged through host memory (why)";
  f.gpuBuffers = {"domain 1: " + staged, "domain 1: " + staged,
                  "domain 0: " + staged, ""};
  const std::string text = reportText(f);
  EXPECT_NE(text.find("GPU buffers between domains:\n  domains 0 and 1: " +
                      staged + " (rank(s) 0,1,2)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(reportJson(f).find("\"gpu_buffers\":[{\"domains\":[0,1],"
                               "\"path\":\"" +
                               staged + "\",\"ranks\":[0,1,2]}]"),
            std::string::npos)
      << reportJson(f);
  EXPECT_TRUE(problemsOf(f).empty());
  f.gpuBuffers = {"", "", "", ""};
  EXPECT_EQ(reportText(f).find("GPU buffers"), std::string::npos);
  EXPECT_NE(reportJson(f).find("\"gpu_buffers\":[]"), std::string::npos);
}

TEST(DoctorFindings, ADomainOfTwoLibraryReleasesIsAProblem) {
  Findings f = healthy();
  f.domainLibraries = {"NCCL 2.28.9, /a/libnccl.so.2",
                       "NCCL 2.27.3, /a/libnccl.so.2", "RCCL 2.22.3, /r",
                       "RCCL 2.22.3, /r"};
  ASSERT_EQ(problemsOf(f).size(), 1u);
  EXPECT_NE(problemsOf(f)[0].find("the ranks of domain 0 run different "
                                  "library releases (NCCL 2.27.3 on rank(s) "
                                  "1, NCCL 2.28.9 on rank(s) 0)"),
            std::string::npos)
      << problemsOf(f)[0];
}

TEST(DoctorFindings, ARanksSettingProblemNamesTheRankAndHost) {
  Findings f = healthy();
  f.settingProblems = {"", "", "", "HETCCL_NCCL_LIBRARY=/x is not a file"};
  ASSERT_EQ(problemsOf(f).size(), 1u);
  EXPECT_EQ(problemsOf(f)[0],
            "rank 3 (host nodeB): HETCCL_NCCL_LIBRARY=/x is not a file");
}

TEST(DoctorFindings, ALinkBelowTheMinimumIsAProblem) {
  Findings f = healthy();
  f.minLinkGBps = 3.5;  // the link's 3.5 GB/s is enough
  EXPECT_TRUE(problemsOf(f).empty());
  f.minLinkGBps = 4;
  ASSERT_EQ(problemsOf(f).size(), 1u);
  EXPECT_NE(problemsOf(f)[0].find("the link between domains 0 and 1 carries "
                                  "3.500 GB/s, less than the 4 GB/s"),
            std::string::npos)
      << problemsOf(f)[0];
  f.probes[2].failed = true;  // a failed probe is one problem, not two
  ASSERT_EQ(problemsOf(f).size(), 1u);
  EXPECT_NE(problemsOf(f)[0].find("failed"), std::string::npos);
}

TEST(DoctorFindings, JsonEscapesWhatItQuotes) {
  Findings f = healthy();
  f.topology = "a \"quoted\" line\nand a second";
  const std::string json = reportJson(f);
  EXPECT_NE(
      json.find("\"topology\":\"a \\\"quoted\\\" line\\u000aand a second\""),
      std::string::npos)
      << json;
  EXPECT_EQ(json.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace doctor
}  // namespace hetccl

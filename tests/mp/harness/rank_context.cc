#include "harness/rank_context.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "harness/check.h"

namespace hetccl::mp {
namespace {

using Clock = std::chrono::steady_clock;

void writeFileAtomically(const std::string& path, const std::string& data) {
  std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    MP_CHECK(out.good()) << "cannot write " << partial;
  }
  // Readers look for `path` only, so they never see a half-written file.
  MP_CHECK(std::rename(partial.c_str(), path.c_str()) == 0)
      << "cannot rename " << partial;
}

bool readFile(const std::string& path, std::string* data) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream contents;
  contents << in.rdbuf();
  *data = contents.str();
  return true;
}

}  // namespace

RankContext::RankContext(int rank, int nranks, const ncclUniqueId& id,
                         std::string tempDir, double timeoutSeconds)
    : rank_(rank),
      nranks_(nranks),
      id_(id),
      tempDir_(std::move(tempDir)),
      timeoutSeconds_(timeoutSeconds) {}

std::vector<std::string> RankContext::exchange(const std::string& mine) {
  std::string prefix =
      tempDir_ + "/exchange" + std::to_string(exchangeCount_++) + ".rank";
  writeFileAtomically(prefix + std::to_string(rank_), mine);

  std::vector<std::string> all(nranks_);
  auto deadline = Clock::now() + std::chrono::duration<double>(timeoutSeconds_);
  for (int peer = 0; peer < nranks_; ++peer) {
    std::string path = prefix + std::to_string(peer);
    while (!readFile(path, &all[peer])) {
      MP_CHECK(Clock::now() < deadline)
          << "rank " << peer << " never reached exchange " << prefix;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  return all;
}

void RankContext::barrier() { exchange(std::string()); }

void RankContext::checkSameOnAllRanks(
    const std::vector<uint64_t>& values,
    const std::function<std::string(size_t index)>& describe) {
  std::string mine(reinterpret_cast<const char*>(values.data()),
                   values.size() * sizeof(uint64_t));
  std::vector<std::string> all = exchange(mine);
  for (int peer = 0; peer < nranks_; ++peer) {
    MP_CHECK(all[peer].size() == mine.size())
        << "rank " << peer << " reported " << all[peer].size() / 8
        << " values, this rank " << values.size();
    if (all[peer] == mine) continue;
    for (size_t i = 0; i < values.size(); ++i) {
      uint64_t theirs;
      std::memcpy(&theirs, all[peer].data() + i * sizeof(uint64_t),
                  sizeof(theirs));
      MP_CHECK(theirs == values[i])
          << "result differs between rank " << rank_ << " and rank " << peer
          << " (hash " << std::hex << values[i] << " vs " << theirs << std::dec
          << ") in " << describe(i);
    }
  }
}

ncclComm_t RankContext::initComm() const {
  ncclComm_t comm = nullptr;
  MP_CHECK_NCCL(ncclCommInitRank(&comm, nranks_, id_, rank_));
  MP_CHECK(comm != nullptr) << "ncclCommInitRank gave a null communicator";
  return comm;
}

ncclUniqueId RankContext::shareNewUniqueId() {
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  std::string mine;
  if (rank_ == 0) {
    MP_CHECK_NCCL(ncclGetUniqueId(&id));
    mine.assign(id.internal, sizeof(id.internal));
  }
  std::vector<std::string> all = exchange(mine);
  MP_CHECK(all[0].size() == sizeof(id.internal))
      << "rank 0 shared " << all[0].size() << " id bytes";
  std::memcpy(id.internal, all[0].data(), sizeof(id.internal));
  return id;
}

}  // namespace hetccl::mp

// A stand-in for NVIDIA's NCCL, loaded by HetCCL as the vendor library of
// a pass-through communicator in tests without a GPU. It keeps the one
// rule of NCCL that decides whether a group over several communicators of
// one process can work: a group end returns only once every rank of each
// of its collectives has arrived. Collectives issued outside a group are a
// group of one. "Device" buffers are host memory and streams are ignored
// (everything completes inside the group end). Only all-reduce (sum of
// float32 or int32) is there; where real NCCL would wait forever, this one
// gives up after a few seconds with ncclSystemError.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "nccl.h"

extern "C" int cudaGetDevice(int* device);

namespace {

constexpr auto kGiveUp = std::chrono::seconds(5);

struct Contribution {
  const void* send;
  void* recv;
};

// The ranks of one unique id. Collective number n of every rank meets in
// slot n.
struct Clique {
  int nranks = 0;
  std::mutex mutex;
  std::condition_variable changed;
  struct Slot {
    size_t count;
    ncclDataType_t type;
    std::vector<Contribution> contributions;
    int arrived = 0;
    bool done = false;
  };
  std::map<uint64_t, Slot> slots;
};

struct FakeComm {
  std::shared_ptr<Clique> clique;
  int rank;
  int device;
  uint64_t issued = 0;
};

struct Registry {
  std::mutex mutex;
  uint64_t nextKey = 1;
  std::map<uint64_t, std::shared_ptr<Clique>> cliques;
};

Registry& registry() {
  static Registry shared;
  return shared;
}

struct Pending {
  FakeComm* comm;
  const void* send;
  void* recv;
  size_t count;
  ncclDataType_t type;
};

thread_local int groupDepth = 0;
thread_local std::vector<Pending> pending;

template <typename T>
void sumInto(Clique::Slot& slot, size_t count) {
  std::vector<T> total(count, T{});
  for (const Contribution& c : slot.contributions)
    for (size_t i = 0; i < count; ++i)
      total[i] += static_cast<const T*>(c.send)[i];
  for (const Contribution& c : slot.contributions)
    std::memcpy(c.recv, total.data(), count * sizeof(T));
}

// Every pending collective arrives; the last rank of a slot computes it.
// Then waits for all of them, as NCCL's group end does.
ncclResult_t launchGroup() {
  std::vector<Pending> group;
  group.swap(pending);
  std::vector<std::pair<Clique*, uint64_t>> waits;
  for (const Pending& p : group) {
    Clique& clique = *p.comm->clique;
    const uint64_t number = p.comm->issued++;
    std::lock_guard<std::mutex> lock(clique.mutex);
    Clique::Slot& slot = clique.slots[number];
    slot.count = p.count;
    slot.type = p.type;
    slot.contributions.resize(clique.nranks);
    slot.contributions[p.comm->rank] = {p.send, p.recv};
    if (++slot.arrived == clique.nranks) {
      if (p.type == ncclFloat32)
        sumInto<float>(slot, p.count);
      else
        sumInto<int32_t>(slot, p.count);
      slot.done = true;
      clique.changed.notify_all();
    }
    waits.push_back({&clique, number});
  }
  for (auto [clique, number] : waits) {
    std::unique_lock<std::mutex> lock(clique->mutex);
    if (!clique->changed.wait_for(lock, kGiveUp, [&, number = number] {
          return clique->slots[number].done;
        }))
      return ncclSystemError;
  }
  return ncclSuccess;
}

FakeComm* fake(ncclComm_t comm) { return reinterpret_cast<FakeComm*>(comm); }

}  // namespace

extern "C" {

#define FAKE_API __attribute__((visibility("default")))

FAKE_API ncclResult_t ncclGetVersion(int* version) {
  *version = 22809;
  return ncclSuccess;
}

FAKE_API const char* ncclGetErrorString(ncclResult_t) {
  return "fake NCCL error";
}

FAKE_API ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  const uint64_t key = registry().nextKey++;
  registry().cliques[key] = std::make_shared<Clique>();
  std::memset(id, 0, sizeof(*id));
  std::memcpy(id->internal, &key, sizeof(key));
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks,
                                       ncclUniqueId id, int rank) {
  uint64_t key;
  std::memcpy(&key, id.internal, sizeof(key));
  std::lock_guard<std::mutex> lock(registry().mutex);
  auto found = registry().cliques.find(key);
  if (found == registry().cliques.end()) return ncclInvalidArgument;
  found->second->nranks = nranks;
  auto* created = new FakeComm{found->second, rank, 0};
  cudaGetDevice(&created->device);
  *comm = reinterpret_cast<ncclComm_t>(created);
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  delete fake(comm);
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return ncclCommDestroy(comm);
}

FAKE_API ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  *count = fake(comm)->clique->nranks;
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  *rank = fake(comm)->rank;
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  *device = fake(comm)->device;
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclGroupStart() {
  ++groupDepth;
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclGroupEnd() {
  if (groupDepth == 0) return ncclInvalidUsage;
  return --groupDepth > 0 ? ncclSuccess : launchGroup();
}

FAKE_API ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count,
                                    ncclDataType_t type, ncclRedOp_t op,
                                    ncclComm_t comm, cudaStream_t) {
  if (op != ncclSum || (type != ncclFloat32 && type != ncclInt32))
    return ncclInvalidUsage;
  pending.push_back({fake(comm), send, recv, count, type});
  return groupDepth > 0 ? ncclSuccess : launchGroup();
}

FAKE_API ncclResult_t ncclBroadcast(const void*, void*, size_t, ncclDataType_t,
                                    int, ncclComm_t, cudaStream_t) {
  return ncclInvalidUsage;
}

FAKE_API ncclResult_t ncclReduce(const void*, void*, size_t, ncclDataType_t,
                                 ncclRedOp_t, int, ncclComm_t, cudaStream_t) {
  return ncclInvalidUsage;
}

FAKE_API ncclResult_t ncclAllGather(const void*, void*, size_t, ncclDataType_t,
                                    ncclComm_t, cudaStream_t) {
  return ncclInvalidUsage;
}

FAKE_API ncclResult_t ncclReduceScatter(const void*, void*, size_t,
                                        ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                        cudaStream_t) {
  return ncclInvalidUsage;
}

FAKE_API ncclResult_t ncclSend(const void*, size_t, ncclDataType_t, int,
                               ncclComm_t, cudaStream_t) {
  return ncclInvalidUsage;
}

FAKE_API ncclResult_t ncclRecv(void*, size_t, ncclDataType_t, int, ncclComm_t,
                               cudaStream_t) {
  return ncclInvalidUsage;
}

}  // extern "C"

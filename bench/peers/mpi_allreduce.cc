// OpenMPI's MPI_Allreduce over the host sweep, for comparison with HetCCL.
// Run under mpirun, e.g. on one host with shared memory (vader):
//   mpirun --allow-run-as-root --oversubscribe -np 4 --mca btl self,vader
//     build/bench/peer-mpi-allreduce -b 1K -e 256M -f 2 --json mpi.jsonl
#include <mpi.h>

#include <climits>
#include <cstdio>
#include <exception>
#include <stdexcept>

#include "allreduce_sweep.h"
#include "sweep_options.h"

namespace hetccl::bench {
namespace {

// MPI errors abort the job by default (MPI_ERRORS_ARE_FATAL), which is
// what a benchmark wants: mpirun then ends every rank.
class MpiCommunicator : public HostCommunicator {
 public:
  MpiCommunicator() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

  void allreduceSum(const float* send, float* recv, size_t count) override {
    if (count > static_cast<size_t>(INT_MAX))
      throw std::invalid_argument("count exceeds MPI's int range");
    MPI_Allreduce(send, recv, static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
  }

  double maxOverRanks(double value) override {
    double result = 0;
    MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return result;
  }

 private:
  int rank_ = 0;
  int size_ = 1;
};

// MPI_Init/MPI_Finalize as a scope.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv) { MPI_Init(argc, argv); }
  ~MpiSession() { MPI_Finalize(); }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

}  // namespace
}  // namespace hetccl::bench

int main(int argc, char** argv) {
  using namespace hetccl::bench;
  MpiSession session(&argc, &argv);
  SweepOptions options = parseSweepOptions(argc, argv, /*acceptNp=*/false);
  try {
    MpiCommunicator comm;
    return runAllreduceSweep(comm, "openmpi", options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "peer-mpi-allreduce: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}

// What the staged GPU engine's domain-step marks cost (DomainStepLog,
// src/engine/gpu/proxy/domain_step_log.h): in a domain of several GPUs the
// engine's stream writes a pinned host word before and after each domain
// step (two stream memory operations), so that a stall inside the vendor
// library can be told from one outside it. On one GPU, a stand-in for the
// step: a kernel that runs for about `step` microseconds. Rounds alternate
// launches without and with the two writes; prints the median time per
// step of each and the difference.
//
// Build and run (nvcc, an NVIDIA GPU):
//   nvcc -O2 -std=c++17 -arch=native -o gpu_step_marks_cost \
//     bench/gpu_step_marks_cost.cu -lcuda
//   ./gpu_step_marks_cost [step microseconds, default 0 and 10] [rounds, 9]
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
  std::exit(1);
}

void check(CUresult status, const char* what) {
  if (status == CUDA_SUCCESS) return;
  const char* text = "?";
  cuGetErrorString(status, &text);
  std::fprintf(stderr, "%s: %s\n", what, text);
  std::exit(1);
}

// Spins for about `cycles` clock cycles: the domain step's stand-in.
__global__ void step(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

double microsecondsPerStep(cudaStream_t stream, uint64_t* word, int steps,
                           long long cycles, bool marked) {
  check(cudaStreamSynchronize(stream), "sync");
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) {
    if (marked)
      check(cuStreamWriteValue64(reinterpret_cast<CUstream>(stream),
                                 reinterpret_cast<CUdeviceptr>(word),
                                 2 * i + 1, 0),
            "write before");
    step<<<1, 1, 0, stream>>>(cycles);
    if (marked)
      check(cuStreamWriteValue64(reinterpret_cast<CUstream>(stream),
                                 reinterpret_cast<CUdeviceptr>(word),
                                 2 * i + 2, 0),
            "write after");
  }
  check(cudaStreamSynchronize(stream), "sync");
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - start)
             .count() /
         steps;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> stepMicroseconds{0, 10};
  if (argc > 1) stepMicroseconds = {std::atof(argv[1])};
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 9;
  constexpr int kSteps = 5000;
  check(cudaSetDevice(0), "cudaSetDevice");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  uint64_t* word = nullptr;
  check(cudaHostAlloc(reinterpret_cast<void**>(&word), sizeof(uint64_t),
                      cudaHostAllocMapped),
        "cudaHostAlloc");
  int clockKhz = 0;
  check(cudaDeviceGetAttribute(&clockKhz, cudaDevAttrClockRate, 0), "clock");
  for (double micros : stepMicroseconds) {
    const long long cycles = static_cast<long long>(micros * clockKhz / 1000);
    microsecondsPerStep(stream, word, kSteps, cycles, true);  // warm-up
    std::vector<double> plain, marked;
    for (int round = 0; round < rounds; ++round) {
      plain.push_back(microsecondsPerStep(stream, word, kSteps, cycles, false));
      marked.push_back(microsecondsPerStep(stream, word, kSteps, cycles, true));
    }
    std::printf(
        "step of ~%g us: %.2f us per step without marks, %.2f with two "
        "(+%.2f us), median of %d rounds of %d steps; word %llu\n",
        micros, median(plain), median(marked), median(marked) - median(plain),
        rounds, kSteps, static_cast<unsigned long long>(*word));
  }
  cudaFreeHost(word);
  cudaStreamDestroy(stream);
  return 0;
}

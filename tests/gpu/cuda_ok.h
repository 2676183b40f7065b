// CUDA_OK(call): for the GPU check programs, a CUDA runtime call that must
// succeed; otherwise the program prints a FAIL line naming the call and
// exits 1 (a check that cannot set itself up has nothing else to report).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CUDA_OK(call)                                                   \
  do {                                                                  \
    cudaError_t status_ = (call);                                       \
    if (status_ != cudaSuccess) {                                       \
      std::printf("FAIL %s: %s\n", #call, cudaGetErrorString(status_)); \
      std::exit(1);                                                     \
    }                                                                   \
  } while (0)

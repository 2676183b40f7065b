// A stand-in for the CUDA runtime's device calls, linked into a test
// program so that HetCCL, which asks the runtime the program loaded, takes
// the process for one with two GPUs. Nothing else of CUDA is there: only
// what a communicator handed whole to the vendor library needs.
#include <cstdint>

namespace {
constexpr int kDevices = 2;
thread_local int currentDevice = 0;
}  // namespace

extern "C" {

__attribute__((visibility("default"))) int cudaGetDeviceCount(int* count) {
  *count = kDevices;
  return 0;
}

__attribute__((visibility("default"))) int cudaGetDevice(int* device) {
  *device = currentDevice;
  return 0;
}

__attribute__((visibility("default"))) int cudaSetDevice(int device) {
  if (device < 0 || device >= kDevices) return 101;  // invalid device
  currentDevice = device;
  return 0;
}

}  // extern "C"

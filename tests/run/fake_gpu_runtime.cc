// A GPU runtime that reports one device and nothing more, for hetccl-run's
// tests of how it decides a rank's vendor on a machine without GPUs: built
// as libcuda.so.1 (FAKE_CUDA) or libamdhip64.so.6, each alone in a folder
// that a test puts first on LD_LIBRARY_PATH. Every call says so on stderr,
// so that a test can check that HETCCL_FORCE_CPU=1 asks none.
#include <cstdio>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

int said(const char* function) {
  std::fprintf(stderr, "fake GPU runtime: %s\n", function);
  return 0;
}

}  // namespace

#ifdef FAKE_CUDA
FAKE_EXPORT int cuInit(unsigned) { return said("cuInit"); }
FAKE_EXPORT int cuDriverGetVersion(int* version) {
  *version = 13000;
  return said("cuDriverGetVersion");
}
FAKE_EXPORT int cuDeviceGetCount(int* count) {
  *count = 1;
  return said("cuDeviceGetCount");
}
#else
FAKE_EXPORT int hipRuntimeGetVersion(int* version) {
  *version = 60200000;
  return said("hipRuntimeGetVersion");
}
FAKE_EXPORT int hipGetDeviceCount(int* count) {
  *count = 1;
  return said("hipGetDeviceCount");
}
#endif

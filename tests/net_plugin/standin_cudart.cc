// A stand-in CUDA runtime (libcudart.so) for running aws-ofi-nccl on a
// machine without a GPU driver. Built with --enable-cudart-dynamic, the
// plugin dlopens "libcudart.so" at init, asks it for its version and for
// the driver's entry points by name, and fails its init unless every name
// resolves and cuDriverGetVersion answers, even when it only ever moves
// host memory. This library answers as a driver with no device would:
// there is no context, and every other driver call fails with
// CUDA_ERROR_NO_DEVICE. It exports only the runtime's three entry points,
// so a program (or HetCCL) that probes it for devices
// (cudaGetDeviceCount) finds none.
//
// The tests put its folder first on LD_LIBRARY_PATH (tests/CMakeLists.txt).
#include <cstring>

namespace {

// The CUDA values this file uses (the driver API's CUresult and the
// runtime's entry-point query results).
constexpr int kSuccess = 0;
constexpr int kNoDevice = 100;        // CUDA_ERROR_NO_DEVICE
constexpr int kInvalidContext = 201;  // CUDA_ERROR_INVALID_CONTEXT
constexpr int kSymbolFound = 0;       // cudaDriverEntryPointSuccess
constexpr int kSymbolNotFound = 1;    // cudaDriverEntryPointSymbolNotFound
// The version this stand-in claims for the runtime and the driver: 13.0.
constexpr int kVersion = 13000;

int driverGetVersion(int* version) {
  *version = kVersion;
  return kSuccess;
}

const char* errorName(int result) {
  switch (result) {
    case kSuccess:
      return "CUDA_SUCCESS";
    case kNoDevice:
      return "CUDA_ERROR_NO_DEVICE";
    case kInvalidContext:
      return "CUDA_ERROR_INVALID_CONTEXT";
    default:
      return nullptr;
  }
}

int getErrorName(int result, const char** name) {
  *name = errorName(result);
  return *name != nullptr ? kSuccess : 1;  // CUDA_ERROR_INVALID_VALUE
}

int getErrorString(int result, const char** text) {
  *text = result == kNoDevice ? "no CUDA-capable device is detected "
                                "(HetCCL's stand-in CUDA runtime)"
                              : errorName(result);
  return *text != nullptr ? kSuccess : 1;
}

// No context is ever current; making none current is fine.
int ctxGetCurrent(void** context) {
  *context = nullptr;
  return kSuccess;
}
int ctxSetCurrent(void* context) {
  return context == nullptr ? kSuccess : kInvalidContext;
}
int ctxGetDevice(int*) { return kInvalidContext; }

// Every other driver function: no device. The caller holds a pointer typed
// for the real function's parameters; a function that reads none of them
// and returns an int-sized result is called correctly through it on the
// platforms HetCCL builds for (x86-64 and AArch64: the caller owns its
// arguments).
int noDevice() { return kNoDevice; }

struct Entry {
  const char* name;
  void* function;
};
const Entry kEntries[] = {
    {"cuDriverGetVersion", reinterpret_cast<void*>(driverGetVersion)},
    {"cuGetErrorName", reinterpret_cast<void*>(getErrorName)},
    {"cuGetErrorString", reinterpret_cast<void*>(getErrorString)},
    {"cuCtxGetCurrent", reinterpret_cast<void*>(ctxGetCurrent)},
    {"cuCtxSetCurrent", reinterpret_cast<void*>(ctxSetCurrent)},
    {"cuCtxGetDevice", reinterpret_cast<void*>(ctxGetDevice)},
};

int lookUp(const char* symbol, void** function, int* status) {
  *function = nullptr;
  if (symbol != nullptr && strncmp(symbol, "cu", 2) == 0) {
    *function = reinterpret_cast<void*>(noDevice);
    for (const Entry& entry : kEntries)
      if (strcmp(symbol, entry.name) == 0) *function = entry.function;
  }
  if (status != nullptr)
    *status = *function != nullptr ? kSymbolFound : kSymbolNotFound;
  return kSuccess;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int cudaRuntimeGetVersion(int* version) {
  *version = kVersion;
  return kSuccess;
}

// Before 13.0 a runtime has only this one; the plugin picks by version.
__attribute__((visibility("default"))) int cudaGetDriverEntryPoint(
    const char* symbol, void** function, unsigned long long, int* status) {
  return lookUp(symbol, function, status);
}

__attribute__((visibility("default"))) int cudaGetDriverEntryPointByVersion(
    const char* symbol, void** function, unsigned int, unsigned long long,
    int* status) {
  return lookUp(symbol, function, status);
}

}  // extern "C"

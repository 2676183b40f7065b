#include "runtime/cuda/cuda_dma_buf.h"

#include <cuda.h>  // driver types and values only; libcuda is not linked
#include <cuda_runtime_api.h>
#include <unistd.h>

#include "runtime/cuda/cuda_driver.h"

namespace hetccl {
namespace cuda {
namespace {

struct DmaBufFunctions {
  CUresult (*deviceGet)(CUdevice*, int) = nullptr;
  CUresult (*deviceGetAttribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*memGetAddressRange)(CUdeviceptr*, size_t*, CUdeviceptr) = nullptr;
  CUresult (*memGetHandleForAddressRange)(void*, CUdeviceptr, size_t,
                                          CUmemRangeHandleType,
                                          unsigned long long) = nullptr;
  int error = cudaSuccess;  // why they could not be found
};

template <typename Function>
void find(DmaBufFunctions& functions, const char* name, Function* function) {
  void* address = nullptr;
  if (functions.error == cudaSuccess)
    functions.error = findDriverFunction(name, &address);
  *function = reinterpret_cast<Function>(address);
}

// Found once: a driver does not appear in a running process.
const DmaBufFunctions& dmaBufFunctions() {
  static const DmaBufFunctions functions = [] {
    DmaBufFunctions f;
    find(f, "cuDeviceGet", &f.deviceGet);
    find(f, "cuDeviceGetAttribute", &f.deviceGetAttribute);
    find(f, "cuMemGetAddressRange", &f.memGetAddressRange);
    find(f, "cuMemGetHandleForAddressRange", &f.memGetHandleForAddressRange);
    return f;
  }();
  return functions;
}

// The allocation that holds `pointer`, widened to whole host pages (the
// driver's requirement; small cudaMalloc allocations share pages, so the
// range may take in a neighbour's bytes, which the plugin never touches).
int exportRange(const DmaBufFunctions& f, const void* pointer, int* fd,
                uint64_t* offset) {
  CUdeviceptr base = 0;
  size_t bytes = 0;
  const auto address = reinterpret_cast<CUdeviceptr>(pointer);
  if (const CUresult error = f.memGetAddressRange(&base, &bytes, address))
    return error;
  const auto page = static_cast<CUdeviceptr>(sysconf(_SC_PAGESIZE));
  const CUdeviceptr begin = base / page * page;
  const CUdeviceptr end = (base + bytes + page - 1) / page * page;
  if (const CUresult error = f.memGetHandleForAddressRange(
          fd, begin, end - begin, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0))
    return error;
  *offset = address - begin;
  return cudaSuccess;
}

}  // namespace

int dmaBufSupported(int* supported) {
  *supported = 0;
  const DmaBufFunctions& f = dmaBufFunctions();
  if (f.error != cudaSuccess) return f.error;
  int ordinal = 0;
  if (const cudaError_t error = cudaGetDevice(&ordinal)) return error;
  CUdevice device = 0;
  if (const CUresult error = f.deviceGet(&device, ordinal)) return error;
  return f.deviceGetAttribute(supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
                              device);
}

// The driver calls need the allocation's context current, and the caller
// may be a thread of its own (the GPU engine's proxy): the pointer's device
// is made current for them, and the caller's device afterwards.
int exportDmaBuf(const void* pointer, int* fd, uint64_t* offset) {
  const DmaBufFunctions& f = dmaBufFunctions();
  if (f.error != cudaSuccess) return f.error;
  cudaPointerAttributes attributes{};
  if (const cudaError_t error = cudaPointerGetAttributes(&attributes, pointer))
    return error;
  if (attributes.type != cudaMemoryTypeDevice) return cudaErrorInvalidValue;
  int previous = 0;
  if (const cudaError_t error = cudaGetDevice(&previous)) return error;
  if (const cudaError_t error = cudaSetDevice(attributes.device)) return error;
  const int result = exportRange(f, pointer, fd, offset);
  if (previous != attributes.device) cudaSetDevice(previous);
  return result;
}

}  // namespace cuda
}  // namespace hetccl

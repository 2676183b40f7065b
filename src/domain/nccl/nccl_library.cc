#include "domain/nccl/nccl_library.h"

#include "domain/vendor_library_search.h"
#include "util/error.h"

namespace hetccl {
namespace {

constexpr const char* kSoname = "libnccl.so.2";

// PyTorch wheels ship NCCL in site-packages/nvidia/nccl/lib; when another
// NVIDIA package of the wheel is mapped already, NCCL sits beside it.
std::vector<std::string> wheelCandidates() {
  std::vector<std::string> found;
  const std::string marker = "/site-packages/nvidia/";
  for (const std::string& file : mappedFiles()) {
    size_t at = file.find(marker);
    if (at == std::string::npos) continue;
    appendUnique(found,
                 file.substr(0, at + marker.size()) + "nccl/lib/" + kSoname);
  }
  return found;
}

}  // namespace

std::vector<std::string> NcclLibrary::candidatePaths() {
  if (auto forced = readString(kNcclLibrary)) return {*forced};
  std::vector<std::string> paths = wheelCandidates();
  for (const char* dir :
       {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
        "/usr/lib", "/usr/local/lib", "/usr/local/nccl/lib"})
    paths.push_back(std::string(dir) + "/" + kSoname);
  if (auto cudaHome = environmentValue("CUDA_HOME"))
    paths.push_back(*cudaHome + "/lib64/" + kSoname);
  paths.push_back(std::string("/usr/local/cuda/lib64/") + kSoname);
  return paths;
}

std::unique_ptr<NcclLibrary> NcclLibrary::load() {
  std::unique_ptr<NcclLibrary> loaded;
  searchVendorLibrary({"NCCL", kNcclLibrary.name, candidatePaths()},
                      [&](SharedLibrary library) {
                        loaded.reset(new NcclLibrary(std::move(library)));
                      });
  return loaded;
}

}  // namespace hetccl

#include "util/module_path.h"

#include <dlfcn.h>
#include <unistd.h>

namespace hetccl {
namespace {

std::string directoryOfThisLibrary() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&directoryOfThisLibrary), &info) == 0 ||
      info.dli_fname == nullptr)
    return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

}  // namespace

std::string modulePath(const ParamSpec& variable, const char* fileName) {
  if (auto chosen = readString(variable)) return *chosen;
  const std::string directory = directoryOfThisLibrary();
  // Beside the library; one directory up (the drop-in copies installed in
  // lib/hetccl/); and for the tools, which link HetCCL statically, lib/
  // beside bin/ when installed and src/ beside tools/ in a build tree.
  for (const std::string& candidate :
       {directory + fileName, directory + "../" + fileName,
        directory + "../lib/" + fileName, directory + "../src/" + fileName})
    if (access(candidate.c_str(), R_OK) == 0) return candidate;
  return fileName;
}

}  // namespace hetccl

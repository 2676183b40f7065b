#include "util/module_path.h"

#include <dlfcn.h>
#include <unistd.h>

#include "hetccl_version.h"

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

std::vector<std::string> moduleCandidates(const char* fileName) {
  const std::string directory = directoryOfThisLibrary();
  // Beside the library (a build tree's src/, and the drop-in copies
  // installed in lib/hetccl/ with the modules); in hetccl/ below it (the
  // installed libhetccl.so); and for the tools, which link HetCCL
  // statically, the installed modules' folder seen from bin/ and src/
  // beside tools/ in a build tree.
  return {directory + fileName, directory + "hetccl/" + fileName,
          directory + HETCCL_MODULE_DIR_FROM_BIN "/" + fileName,
          directory + "../src/" + fileName};
}

std::string modulePath(const ParamSpec& variable, const char* fileName) {
  if (auto chosen = readString(variable)) return *chosen;
  for (const std::string& candidate : moduleCandidates(fileName))
    if (access(candidate.c_str(), R_OK) == 0) return candidate;
  return fileName;
}

}  // namespace hetccl

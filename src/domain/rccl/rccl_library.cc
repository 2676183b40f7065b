#include "domain/rccl/rccl_library.h"

#include <glob.h>

#include <algorithm>
#include <cstring>

#include "domain/vendor_library_search.h"

namespace hetccl {
namespace {

constexpr const char* kSoname = "librccl.so.1";

bool startsWith(const std::string& text, const char* prefix) {
  return text.compare(0, std::strlen(prefix), prefix) == 0;
}

// A PyTorch ROCm wheel bundles RCCL in torch/lib (as librccl.so, keeping
// the soname librccl.so.1) next to libtorch* and libamdhip64*; a program
// that loaded RCCL itself has it mapped already.
std::vector<std::string> besideMappedLibraries() {
  std::vector<std::string> found;
  for (const std::string& file : mappedFiles()) {
    std::string name = fileNameOf(file);
    if (!startsWith(name, "libtorch") && !startsWith(name, "libamdhip64") &&
        !startsWith(name, "librccl"))
      continue;
    for (const std::string& rccl :
         filesStartingWith(directoryOf(file), "librccl.so"))
      appendUnique(found, rccl);
  }
  return found;
}

// /opt/rocm-<version> directories, the newest version first.
std::vector<std::string> versionedRocmDirectories() {
  std::vector<std::string> dirs;
  glob_t matches{};
  if (glob("/opt/rocm-*", GLOB_ONLYDIR, nullptr, &matches) == 0)
    dirs.assign(matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
  globfree(&matches);
  std::sort(dirs.begin(), dirs.end(),
            [](const std::string& a, const std::string& b) {
              return strverscmp(a.c_str(), b.c_str()) > 0;
            });
  return dirs;
}

}  // namespace

std::vector<std::string> RcclLibrary::candidatePaths() {
  if (auto forced = readString(kRcclLibrary)) return {*forced};
  std::vector<std::string> paths = besideMappedLibraries();
  std::vector<std::string> rocmDirs;
  if (auto rocmPath = environmentValue("ROCM_PATH"))
    rocmDirs.push_back(*rocmPath);
  rocmDirs.push_back("/opt/rocm");
  for (const std::string& dir : versionedRocmDirectories())
    rocmDirs.push_back(dir);
  for (const std::string& dir : rocmDirs)
    appendUnique(paths, dir + "/lib/" + kSoname);
  paths.push_back(kSoname);
  return paths;
}

std::unique_ptr<RcclLibrary> RcclLibrary::load() {
  std::unique_ptr<RcclLibrary> loaded;
  searchVendorLibrary({"RCCL", kRcclLibrary.name, candidatePaths()},
                      [&](SharedLibrary library) {
                        loaded.reset(new RcclLibrary(std::move(library)));
                      });
  return loaded;
}

}  // namespace hetccl

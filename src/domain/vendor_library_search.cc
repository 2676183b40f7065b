#include "domain/vendor_library_search.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>

#include "util/error.h"

namespace hetccl {
namespace {

// Exported by every HetCCL build and by no vendor library.
constexpr const char* kHetcclMarker = "hetcclStreamCreate";

bool isBareName(const std::string& path) {
  return path.find('/') == std::string::npos;
}

// Why `candidate` could not be opened, in a few words.
std::string openFailure(const std::string& candidate, const Error& error) {
  std::string message = error.what();
  if (isBareName(candidate) &&
      message.find("cannot open shared object file") != std::string::npos)
    return "not on the loader's search path";
  return message;
}

}  // namespace

bool isHetccl(const SharedLibrary& library) {
  return library.find(kHetcclMarker) != nullptr;
}

void searchVendorLibrary(const VendorLibrarySearch& search,
                         const std::function<void(SharedLibrary)>& use) {
  std::ostringstream looked;
  for (const std::string& candidate : search.candidates) {
    looked << "\n  " << candidate << ": ";
    if (!isBareName(candidate) && access(candidate.c_str(), R_OK) != 0) {
      looked << "not found";
      continue;
    }
    try {
      SharedLibrary library = SharedLibrary::open(candidate);
      if (isHetccl(library)) {
        looked << "this is HetCCL, not " << search.vendor;
        continue;
      }
      use(std::move(library));
      return;
    } catch (const Error& e) {
      looked << openFailure(candidate, e);
    }
  }
  fail(ncclSystemError, "no %s found (set %s to its path); looked in:%s",
       search.vendor, search.overrideVariable, looked.str().c_str());
}

std::vector<std::string> mappedFiles() {
  std::vector<std::string> files;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  // A line is "range perms offset dev inode path"; only file mappings have
  // a path, and it is the first field that starts with '/'.
  while (std::getline(maps, line)) {
    size_t slash = line.find('/');
    if (slash != std::string::npos) appendUnique(files, line.substr(slash));
  }
  return files;
}

std::vector<std::string> filesStartingWith(const std::string& directory,
                                           const std::string& prefix) {
  std::vector<std::string> names;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(directory.c_str()), closedir);
  if (!dir) return names;
  while (dirent* entry = readdir(dir.get())) {
    std::string name = entry->d_name;
    if (name.compare(0, prefix.size(), prefix) == 0) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  for (std::string& name : names) name = directory + "/" + name;
  return names;
}

std::string directoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::string fileNameOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void appendUnique(std::vector<std::string>& paths, const std::string& path) {
  if (std::find(paths.begin(), paths.end(), path) == paths.end())
    paths.push_back(path);
}

}  // namespace hetccl

// Finding the real vendor collective library (NVIDIA's NCCL, AMD's RCCL)
// that HetCCL hands a domain's work to. Both vendors' searches follow the
// rules here: the candidates are tried in order, HetCCL's own drop-in copy
// (which carries the vendor library's file name) is passed over, and a
// failure names every place looked in and why each was passed over.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "util/shared_library.h"

namespace hetccl {

struct VendorLibrarySearch {
  const char* vendor;            // "NCCL", "RCCL": for messages
  const char* overrideVariable;  // "HETCCL_RCCL_LIBRARY": named on failure
  // Absolute paths, or a bare file name ("librccl.so.1") that the dynamic
  // loader looks up on its own search path.
  std::vector<std::string> candidates;
};

// Opens the candidates in order and hands each one that loads and is not
// HetCCL to `use`, until `use` returns normally; `use` throws hetccl::Error
// to pass a library over (a library that lacks functions, say), and its
// message is reported. Throws ncclSystemError when no candidate is taken:
// "no RCCL found (set HETCCL_RCCL_LIBRARY to its path); looked in:" and a
// line for each candidate with the reason it was passed over.
void searchVendorLibrary(const VendorLibrarySearch& search,
                         const std::function<void(SharedLibrary)>& use);

// Whether `library` is a copy of HetCCL rather than the vendor's library.
bool isHetccl(const SharedLibrary& library);

// The files mapped into this process (from /proc/self/maps), each once, in
// the order of their first mapping: a framework's wheel keeps the vendor
// library beside libraries that are mapped already.
std::vector<std::string> mappedFiles();

// The files of `directory` whose names start with `prefix`, as full paths
// in name order; empty when the directory cannot be read.
std::vector<std::string> filesStartingWith(const std::string& directory,
                                           const std::string& prefix);

// "/a/b/c.so" -> "/a/b"; "" for a bare file name.
std::string directoryOf(const std::string& path);
// "/a/b/c.so" -> "c.so".
std::string fileNameOf(const std::string& path);

// Appends `path` unless `paths` holds it already.
void appendUnique(std::vector<std::string>& paths, const std::string& path);

}  // namespace hetccl

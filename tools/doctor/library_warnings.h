// The warnings the library logs while the doctor runs (a slower transport
// than the machine could have, a loopback or container interface, a
// fallback): the doctor sends the library's log to a file of its own
// (HETCCL_DEBUG_FILE, set before the library reads its settings) and
// reads the WARN lines back, so that its report names them as problems.
#pragma once

#include <string>
#include <vector>

namespace hetccl {
namespace doctor {

class LibraryWarnings {
 public:
  // Before the first call into the library. Where the user chose a log
  // file already, nothing is captured (capturing() is false).
  LibraryWarnings();
  ~LibraryWarnings();  // removes the file
  LibraryWarnings(const LibraryWarnings&) = delete;
  LibraryWarnings& operator=(const LibraryWarnings&) = delete;

  bool capturing() const { return !path_.empty(); }
  // The messages of the WARN lines logged so far, each once, in order.
  std::vector<std::string> read() const;

 private:
  std::string path_;
};

}  // namespace doctor
}  // namespace hetccl

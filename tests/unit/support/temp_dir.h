// A fresh directory under the system's temporary directory, removed with
// everything in it at the end of the scope.
#pragma once

#include <filesystem>
#include <string>

namespace hetccl {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path() const { return path_.string(); }

  // The full path of `relative`, its directories created.
  std::string place(const std::string& relative) const;

  // `relative` made a symbolic link to `target`, with its directories.
  std::string link(const std::string& relative,
                   const std::string& target) const;

 private:
  std::filesystem::path path_;
};

}  // namespace hetccl

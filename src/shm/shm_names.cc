#include "shm/shm_names.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

constexpr const char* kShmDirectory = "/dev/shm";
constexpr const char* kPrefix = "hetccl";
constexpr size_t kNonceDigits = 16;

bool allOf(const std::string& text, const char* characters) {
  return !text.empty() &&
         text.find_first_not_of(characters) == std::string::npos;
}

// Splits off the last "-field" of `rest`, or returns false.
bool takeLastField(std::string& rest, std::string& field) {
  size_t dash = rest.rfind('-');
  if (dash == std::string::npos) return false;
  field = rest.substr(dash + 1);
  rest.resize(dash);
  return true;
}

// Whether `name` is one of this user's plain files in /dev/shm (not a
// link), so that only names HetCCL could have made are touched.
bool ownRegularFile(int directory, const char* name) {
  struct stat info {};
  return fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISREG(info.st_mode) && info.st_uid == geteuid();
}

bool creatorIsGone(const SegmentCreator& creator, uint64_t ownNamespace) {
  return ownNamespace != 0 && creator.pidNamespace == ownNamespace &&
         kill(creator.pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

uint64_t ownPidNamespace() {
  struct stat info {};
  if (stat("/proc/self/ns/pid", &info) != 0) return 0;
  return static_cast<uint64_t>(info.st_ino);
}

std::string uniqueSegmentName(const char* prefix) {
  uint64_t nonce = 0;
  if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce))
    failErrno("getrandom");
  return format("/%s-%d-%llu-%016llx", prefix, static_cast<int>(getpid()),
                static_cast<unsigned long long>(ownPidNamespace()),
                static_cast<unsigned long long>(nonce));
}

std::optional<SegmentCreator> segmentCreator(const std::string& name) {
  std::string rest = name, nonce, pidNamespace, pid;
  if (!takeLastField(rest, nonce) || !takeLastField(rest, pidNamespace) ||
      !takeLastField(rest, pid))
    return std::nullopt;
  const bool prefixed =
      rest == kPrefix || rest.rfind(std::string(kPrefix) + "-", 0) == 0;
  if (!prefixed || nonce.size() != kNonceDigits ||
      !allOf(nonce, "0123456789abcdef") || !allOf(pidNamespace, "0123456789") ||
      !allOf(pid, "0123456789") || pid.size() > 9 || pidNamespace.size() > 19)
    return std::nullopt;
  SegmentCreator creator{static_cast<pid_t>(std::stol(pid)),
                         std::stoull(pidNamespace)};
  // kill(0, ...) would mean this process group: never a creator.
  if (creator.pid <= 0) return std::nullopt;
  return creator;
}

size_t removeNamesOfGoneCreators() {
  const uint64_t ownNamespace = ownPidNamespace();
  if (ownNamespace == 0) return 0;  // no pid can be proven gone
  DIR* directory = opendir(kShmDirectory);
  if (directory == nullptr) return 0;
  std::vector<std::pair<std::string, pid_t>> stale;
  while (const dirent* entry = readdir(directory)) {
    const std::string name = entry->d_name;
    if (name.rfind(kPrefix, 0) != 0) continue;
    std::optional<SegmentCreator> creator = segmentCreator(name);
    if (creator && creatorIsGone(*creator, ownNamespace) &&
        ownRegularFile(dirfd(directory), name.c_str()))
      stale.emplace_back(name, creator->pid);
  }
  closedir(directory);
  size_t removed = 0;
  for (const auto& [name, pid] : stale) {
    // Another process may have removed it meanwhile: no matter.
    if (shm_unlink(("/" + name).c_str()) != 0) continue;
    ++removed;
    LOG_INFO(kLogShm, "removed %s/%s, left by process %d, which is gone",
             kShmDirectory, name.c_str(), static_cast<int>(pid));
  }
  return removed;
}

}  // namespace hetccl

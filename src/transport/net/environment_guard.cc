#include "transport/net/environment_guard.h"

#include <cstdlib>

extern char** environ;

namespace hetccl {
namespace {

std::map<std::string, std::string> currentEnvironment() {
  std::map<std::string, std::string> variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const size_t equals = text.find('=');
    if (equals != std::string::npos)
      variables.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return variables;
}

std::string shown(const std::optional<std::string>& value) {
  return value ? "=" + *value : " unset";
}

}  // namespace

EnvironmentGuard::EnvironmentGuard() : before_(currentEnvironment()) {}

std::vector<EnvironmentChange> EnvironmentGuard::restore() {
  const std::map<std::string, std::string> now = currentEnvironment();
  std::vector<EnvironmentChange> changes;
  for (const auto& [name, value] : now) {
    auto was = before_.find(name);
    if (was == before_.end()) {
      changes.push_back({name, std::nullopt, value});
      unsetenv(name.c_str());
    } else if (was->second != value) {
      changes.push_back({name, was->second, value});
      setenv(name.c_str(), was->second.c_str(), 1);
    }
  }
  for (const auto& [name, value] : before_)
    if (now.count(name) == 0) {
      changes.push_back({name, value, std::nullopt});
      setenv(name.c_str(), value.c_str(), 1);
    }
  return changes;
}

std::string describeChanges(const std::vector<EnvironmentChange>& changes) {
  std::string text;
  for (const EnvironmentChange& change : changes)
    text += (text.empty() ? "" : ", ") + change.name + shown(change.after) +
            " (was" + (change.before ? " " + *change.before : " unset") + ")";
  return text;
}

}  // namespace hetccl

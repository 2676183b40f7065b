#include "util/params.h"

#include <strings.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "util/comma_list.h"
#include "util/error.h"

namespace hetccl {
namespace {

std::vector<std::string> choicesOf(const ParamSpec& spec) {
  return splitCommaList(spec.accepted);
}

// The declared spelling of `text` among the choices, if it is one.
std::optional<std::string> matchChoice(const ParamSpec& spec,
                                       const std::string& text) {
  for (const std::string& choice : choicesOf(spec))
    if (strcasecmp(choice.c_str(), text.c_str()) == 0) return choice;
  return std::nullopt;
}

[[noreturn]] void failValue(const ParamSpec& spec, const std::string& text,
                            const char* variable) {
  const char* what = "";
  switch (spec.type) {
    case ParamType::Flag:
    case ParamType::Choice:
    case ParamType::String:
      break;
    case ParamType::Integer:
      what = "an integer from ";
      break;
    case ParamType::Size:
      what = "a size from ";
      break;
    case ParamType::Seconds:
      what = "seconds from ";
      break;
  }
  fail(ncclInvalidArgument, "%s=\"%s\": expected %s%s", variable, text.c_str(),
       what, describeAccepted(spec).c_str());
}

// The text to parse: the setting, else the declared default.
ParamSetting settingOrDefault(const ParamSpec& spec) {
  if (auto setting = paramSetting(spec)) return *setting;
  return {spec.defaultText, spec.name};
}

int64_t integerValue(const ParamSpec& spec, const ParamSetting& setting) {
  int64_t value = 0;
  bool parsed = spec.type == ParamType::Size
                    ? parseSize(setting.text, &value)
                    : parseInteger(setting.text, &value);
  if (!parsed || value < spec.min || value > spec.max)
    failValue(spec, setting.text, setting.variable);
  return value;
}

double secondsValue(const ParamSpec& spec, const ParamSetting& setting) {
  double value = 0;
  if (!parseSeconds(setting.text, &value) ||
      value < static_cast<double>(spec.min) ||
      value > static_cast<double>(spec.max))
    failValue(spec, setting.text, setting.variable);
  return value;
}

bool flagValue(const ParamSpec& spec, const ParamSetting& setting) {
  if (setting.text != "0" && setting.text != "1")
    failValue(spec, setting.text, setting.variable);
  return setting.text == "1";
}

std::string choiceValue(const ParamSpec& spec, const ParamSetting& setting) {
  auto choice = matchChoice(spec, setting.text);
  if (!choice) failValue(spec, setting.text, setting.variable);
  return *choice;
}

// Whether `text` is digits only, after an optional leading '-' when
// `allowMinus`; strtoll alone would take spaces, '+' and hex.
bool isDecimal(const std::string& text, bool allowMinus) {
  size_t start = allowMinus && !text.empty() && text[0] == '-' ? 1 : 0;
  if (start == text.size()) return false;
  for (size_t i = start; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return false;
  return true;
}

}  // namespace

std::string sizeText(int64_t value) {
  static const struct {
    int64_t scale;
    char suffix;
  } kUnits[] = {{int64_t{1} << 30, 'G'},
                {int64_t{1} << 20, 'M'},
                {int64_t{1} << 10, 'K'}};
  for (const auto& unit : kUnits)
    if (value != 0 && value % unit.scale == 0)
      return std::to_string(value / unit.scale) + unit.suffix;
  return std::to_string(value);
}

std::optional<std::string> environmentValue(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::optional<ParamSetting> paramSetting(const ParamSpec& spec) {
  if (auto value = environmentValue(spec.name))
    return ParamSetting{*value, spec.name};
  if (spec.ncclAlias != nullptr)
    if (auto value = environmentValue(spec.ncclAlias))
      return ParamSetting{*value, spec.ncclAlias};
  return std::nullopt;
}

std::string describeAccepted(const ParamSpec& spec) {
  switch (spec.type) {
    case ParamType::Flag:
      return "0 or 1";
    case ParamType::Integer:
    case ParamType::Seconds:
      return std::to_string(spec.min) + " to " + std::to_string(spec.max);
    case ParamType::Size:
      return sizeText(spec.min) + " to " + sizeText(spec.max);
    case ParamType::Choice: {
      std::vector<std::string> choices = choicesOf(spec);
      std::string text;
      for (size_t i = 0; i < choices.size(); ++i)
        text += (i == 0                    ? ""
                 : i + 1 == choices.size() ? " or "
                                           : ", ") +
                choices[i];
      return text;
    }
    case ParamType::String:
      return spec.accepted;
  }
  return "";
}

bool readFlag(const ParamSpec& spec) {
  return flagValue(spec, settingOrDefault(spec));
}

int64_t readInteger(const ParamSpec& spec) {
  return integerValue(spec, settingOrDefault(spec));
}

size_t readBytes(const ParamSpec& spec) {
  return static_cast<size_t>(readInteger(spec));
}

double readSeconds(const ParamSpec& spec) {
  return secondsValue(spec, settingOrDefault(spec));
}

std::string readChoice(const ParamSpec& spec) {
  return choiceValue(spec, settingOrDefault(spec));
}

std::optional<std::string> readString(const ParamSpec& spec) {
  auto setting = paramSetting(spec);
  if (!setting) return std::nullopt;
  return setting->text;
}

std::string readCanonical(const ParamSpec& spec) {
  switch (spec.type) {
    case ParamType::Flag:
      return readFlag(spec) ? "1" : "0";
    case ParamType::Integer:
    case ParamType::Size:
      return std::to_string(readInteger(spec));
    case ParamType::Seconds:
      return format("%.17g", readSeconds(spec));
    case ParamType::Choice:
      return readChoice(spec);
    case ParamType::String:
      return readString(spec).value_or(spec.defaultText);
  }
  return "";
}

void checkParamText(const ParamSpec& spec, const std::string& text,
                    const char* variable) {
  ParamSetting setting{text, variable};
  switch (spec.type) {
    case ParamType::Flag:
      flagValue(spec, setting);
      return;
    case ParamType::Integer:
    case ParamType::Size:
      integerValue(spec, setting);
      return;
    case ParamType::Seconds:
      secondsValue(spec, setting);
      return;
    case ParamType::Choice:
      choiceValue(spec, setting);
      return;
    case ParamType::String:
      return;
  }
}

bool parseInteger(const std::string& text, int64_t* value) {
  if (!isDecimal(text, true)) return false;
  errno = 0;
  long long parsed = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return false;
  *value = parsed;
  return true;
}

bool parseSize(const std::string& text, int64_t* value) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
    ++digits;
  if (digits == 0) return false;
  std::string rest = text.substr(digits);
  if (!rest.empty() && (rest.back() == 'B' || rest.back() == 'b'))
    rest.pop_back();
  int shift = 0;
  if (rest.size() == 1) {
    switch (rest[0]) {
      case 'k':
      case 'K':
        shift = 10;
        break;
      case 'm':
      case 'M':
        shift = 20;
        break;
      case 'g':
      case 'G':
        shift = 30;
        break;
      default:
        return false;
    }
  } else if (!rest.empty()) {
    return false;
  }
  int64_t number = 0;
  if (!parseInteger(text.substr(0, digits), &number)) return false;
  if (number > (INT64_MAX >> shift)) return false;  // the scaled value
  *value = number << shift;
  return true;
}

bool parseSeconds(const std::string& text, double* value) {
  if (text.empty() || text[0] == ' ' || text[0] == '\t') return false;
  char* end = nullptr;
  double parsed = std::strtod(text.c_str(), &end);
  // 1e400 parses as infinity; nan and inf parse too, and none is a
  // duration.
  if (end != text.c_str() + text.size() || !std::isfinite(parsed)) return false;
  *value = parsed;
  return true;
}

}  // namespace hetccl

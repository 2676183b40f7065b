// JSON text for the tools' --json outputs.
#pragma once

#include <string>

namespace hetccl {
namespace kit {

// A JSON string literal of `text`: quotes, backslashes and control
// characters escaped.
std::string jsonQuote(const std::string& text);

}  // namespace kit
}  // namespace hetccl

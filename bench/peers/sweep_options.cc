#include "sweep_options.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "kit/byte_size.h"

namespace hetccl::bench {
namespace {

void printUsage(const char* program, bool acceptNp) {
  std::fprintf(
      stderr,
      "usage: %s %s[-b MINBYTES] [-e MAXBYTES] [-f FACTOR] [-w WARMUP]\n"
      "          [-n ITERS] [--json FILE] [--timeout SECONDS]\n"
      "          [-c allreduce] [-d float32] [-o sum] [--check]\n"
      "Float32 sum all-reduce from MINBYTES (default 1K) to MAXBYTES\n"
      "(default 256M), out of place; every size is checked once, then timed\n"
      "over ITERS iterations (default 20) after WARMUP (default 5).\n"
      "-c, -d, -o and --check are accepted for hetccl-perf compatibility;\n"
      "only the values shown are supported (the result is always checked).\n",
      program, acceptNp ? "-np N " : "");
}

[[noreturn]] void usageError(const char* program, bool acceptNp,
                             const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program, message.c_str());
  printUsage(program, acceptNp);
  std::exit(2);
}

int parsePositiveInt(const std::string& text, const std::string& flag) {
  size_t end = 0;
  long value = std::stol(text, &end);
  if (end != text.size() || value < 0 || value > 1000000) {
    throw std::invalid_argument("bad value for " + flag + ": " + text);
  }
  return static_cast<int>(value);
}

size_t byteSize(const std::string& text) {
  const std::optional<size_t> bytes = kit::parseByteSize(text);
  if (!bytes) throw std::invalid_argument("bad size: " + text);
  return *bytes;
}

// Flags kept for hetccl-perf compatibility accept one value only.
void requireValue(const std::string& flag, const std::string& value,
                  const std::string& supported) {
  if (value != supported) {
    throw std::invalid_argument(flag + " " + value +
                                " is not supported (only " + supported + ")");
  }
}

}  // namespace

SweepOptions parseSweepOptions(int argc, char** argv, bool acceptNp) {
  SweepOptions options;
  const char* program = argv[0];
  try {
    for (int i = 1; i < argc; ++i) {
      std::string flag = argv[i];
      if (flag == "-h" || flag == "--help") {
        printUsage(program, acceptNp);
        std::exit(0);
      }
      if (flag == "--check") continue;
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      std::string value = argv[++i];
      if (flag == "-b") {
        options.minBytes = byteSize(value);
      } else if (flag == "-e") {
        options.maxBytes = byteSize(value);
      } else if (flag == "-f") {
        options.factor = parsePositiveInt(value, flag);
      } else if (flag == "-w") {
        options.warmupIters = parsePositiveInt(value, flag);
      } else if (flag == "-n") {
        options.timedIters = parsePositiveInt(value, flag);
      } else if (flag == "--json") {
        options.jsonPath = value;
      } else if (flag == "--timeout") {
        options.timeoutSeconds = parsePositiveInt(value, flag);
      } else if (flag == "-np" && acceptNp) {
        options.nranks = parsePositiveInt(value, flag);
      } else if (flag == "-c") {
        requireValue(flag, value, "allreduce");
      } else if (flag == "-d") {
        requireValue(flag, value, "float32");
      } else if (flag == "-o") {
        requireValue(flag, value, "sum");
      } else {
        throw std::invalid_argument("unknown flag " + flag);
      }
    }
  } catch (const std::exception& e) {
    usageError(program, acceptNp, e.what());
  }
  if (options.minBytes < sizeof(float) || options.maxBytes < options.minBytes)
    usageError(program, acceptNp, "need 4 <= MINBYTES <= MAXBYTES");
  if (options.factor < 2) usageError(program, acceptNp, "FACTOR must be >= 2");
  if (options.timedIters < 1)
    usageError(program, acceptNp, "ITERS must be >= 1");
  if (acceptNp && options.nranks < 1)
    usageError(program, acceptNp, "-np N (N >= 1) is required");
  return options;
}

}  // namespace hetccl::bench

#include "perf/options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "kit/byte_size.h"
#include "perf/perf_error.h"

namespace hetccl {
namespace perf {
namespace {

enum class ValueMode { kNone, kRequired, kOptional };

using Handler = void (*)(Options&, const std::string& value,
                         const std::string& flag);

struct OptionSpec {
  char shortName;  // 0: long form only
  const char* longName;
  ValueMode mode;
  Handler handle;
};

bool parseInteger(const std::string& text, long long* value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  *value = std::strtoll(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

int intInRange(const std::string& value, const std::string& flag, long long low,
               long long high) {
  long long parsed;
  if (!parseInteger(value, &parsed) || parsed < low || parsed > high) {
    perfFail("%s expects an integer from %lld to %lld, got '%s'", flag.c_str(),
             low, high, value.c_str());
  }
  return static_cast<int>(parsed);
}

size_t byteSize(const std::string& value, const std::string& flag) {
  const std::optional<size_t> bytes = kit::parseByteSize(value);
  if (!bytes) {
    perfFail("%s expects a size like 8, 64K, 16M or 1G, got '%s'", flag.c_str(),
             value.c_str());
  }
  return *bytes;
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const size_t end = comma == std::string::npos ? text.size() : comma;
    if (end > start) items.push_back(text.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

// Parses "a,b,c" or "all" against a table; `find` returns nullptr for an
// unknown name.
template <typename Item, typename Find, typename All>
std::vector<const Item*> parseNameList(const std::string& value,
                                       const std::string& flag,
                                       const char* what, Find find,
                                       const All& all) {
  std::vector<const Item*> items;
  for (const std::string& name : splitList(value)) {
    if (name == "all") {
      for (const Item& item : all) items.push_back(&item);
      continue;
    }
    const Item* item = find(name);
    if (!item) {
      std::string known;
      for (const Item& candidate : all) {
        known += std::string(known.empty() ? "" : " ") + candidate.name;
      }
      perfFail("%s: unknown %s '%s' (known: %s all)", flag.c_str(), what,
               name.c_str(), known.c_str());
    }
    items.push_back(item);
  }
  if (items.empty()) perfFail("%s needs at least one %s", flag.c_str(), what);
  return items;
}

void setCollectives(Options& o, const std::string& value,
                    const std::string& flag) {
  o.collectives = parseNameList<Collective>(value, flag, "collective",
                                            findCollective, allCollectives());
}

// nccl-tests uses -c for the check; scripts written for other tools use it
// for the collective. A number means the check, a name the collective.
void setCheckOrCollective(Options& o, const std::string& value,
                          const std::string& flag) {
  long long parsed;
  if (parseInteger(value, &parsed)) {
    o.checkIters = intInRange(value, flag, 0, 1000);
  } else {
    setCollectives(o, value, flag);
  }
}

void setPlacement(Options& o, const std::string& value,
                  const std::string& flag) {
  if (value != "both" && value != "out" && value != "in") {
    perfFail("%s expects out, in or both, got '%s'", flag.c_str(),
             value.c_str());
  }
  o.runOutOfPlace = value != "in";
  o.runInPlace = value != "out";
}

void rejectGpusPerThread(Options&, const std::string& value,
                         const std::string& flag) {
  if (value != "1") {
    perfFail(
        "%s: hetccl-perf drives one GPU per rank; run more ranks with -t N "
        "(threads), -np N or a launcher (mpirun, srun, torchrun)",
        flag.c_str());
  }
}

const std::vector<OptionSpec>& optionSpecs() {
  static const std::vector<OptionSpec> specs = {
      {'x', "coll", ValueMode::kRequired, setCollectives},
      {'c', "check", ValueMode::kOptional,
       [](Options& o, const std::string& v, const std::string& f) {
         setCheckOrCollective(o, v.empty() ? "1" : v, f);
       }},
      {'b', "minbytes", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         o.minBytes = byteSize(v, f);
       }},
      {'e', "maxbytes", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         o.maxBytes = byteSize(v, f);
       }},
      {'f', "stepfactor", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         char* end = nullptr;
         const double factor = std::strtod(v.c_str(), &end);
         if (v.empty() || *end != '\0' || !(factor > 1) || factor > 1024) {
           perfFail("%s expects a factor greater than 1, got '%s'", f.c_str(),
                    v.c_str());
         }
         o.stepFactor = factor;
         o.stepBytes = 0;
       }},
      {'i', "stepbytes", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         o.stepBytes = byteSize(v, f);
         if (o.stepBytes == 0) perfFail("%s must be positive", f.c_str());
       }},
      {'w', "warmup_iters", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         o.warmupIters = intInRange(v, f, 0, 1000000);
       }},
      {'n', "iters", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         o.iters = intInRange(v, f, 1, 1000000);
       }},
      {'m', "agg_iters", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         o.aggIters = intInRange(v, f, 1, 10000);
       }},
      {'d', "datatype", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         o.dataTypes = parseNameList<kit::DataType>(
             v, f, "datatype", kit::findDataType, kit::allDataTypes());
       }},
      {'o', "op", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         o.ops =
             parseNameList<ReduceOp>(v, f, "op", findReduceOp, allReduceOps());
       }},
      {'r', "root", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         o.root = intInRange(v, f, 0, 1 << 30);
       }},
      {'a', "average", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         o.average = static_cast<TimeAverage>(intInRange(v, f, 0, 3));
       }},
      {'z', "blocking", ValueMode::kOptional,
       [](Options& o, const std::string& v, const std::string& f) {
         o.blocking = v.empty() || intInRange(v, f, 0, 1) == 1;
       }},
      {0, "placement", ValueMode::kRequired, setPlacement},
      {0, "np", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         o.localRanks = intInRange(v, f, 1, 4096);
       }},
      {0, "timeout", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         char* end = nullptr;
         const double seconds = std::strtod(v.c_str(), &end);
         if (v.empty() || *end != '\0' || !(seconds >= 0)) {
           perfFail("%s expects seconds (0: no limit), got '%s'", f.c_str(),
                    v.c_str());
         }
         o.timeoutSec = seconds;
       }},
      {'D', "domains", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string&) {
         o.domainsGiven = true;
         o.domains = v;
       }},
      {0, "nccl-library", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         if (v.empty()) perfFail("%s needs a path", f.c_str());
         o.ncclLibrary = v;
       }},
      {0, "json", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         if (v.empty()) perfFail("%s needs a file name", f.c_str());
         o.jsonPath = v;
       }},
      {0, "progress", ValueMode::kNone,
       [](Options& o, const std::string&, const std::string&) {
         o.progress = true;
       }},
      {0, "explain", ValueMode::kNone,
       [](Options& o, const std::string&, const std::string&) {
         o.explain = true;
       }},
      {'t', "nthreads", ValueMode::kRequired,
       [](Options& o, const std::string& v, const std::string& f) {
         o.threadsPerProcess = intInRange(v, f, 1, 1024);
       }},
      {'g', "ngpus", ValueMode::kRequired, rejectGpusPerThread},
      {'h', "help", ValueMode::kNone,
       [](Options& o, const std::string&, const std::string&) {
         o.showHelp = true;
       }},
      {'V', "version", ValueMode::kNone,
       [](Options& o, const std::string&, const std::string&) {
         o.showVersion = true;
       }},
  };
  return specs;
}

const OptionSpec* findLong(const std::string& name) {
  for (const OptionSpec& spec : optionSpecs()) {
    if (name == spec.longName) return &spec;
  }
  return nullptr;
}

const OptionSpec* findShort(char name) {
  for (const OptionSpec& spec : optionSpecs()) {
    if (spec.shortName == name) return &spec;
  }
  return nullptr;
}

// Reads argv left to right: "--name value", "--name=value", "-x value",
// "-xvalue", and "-np N" (single dash, as mpirun spells it).
class ArgumentParser {
 public:
  ArgumentParser(int argc, char** argv) : argc_(argc), argv_(argv) {}

  Options parse() {
    Options options;
    options.collectives = {findCollective("allreduce")};
    options.dataTypes = {kit::findDataType("float32")};
    options.ops = {findReduceOp("sum")};
    for (index_ = 1; index_ < argc_; ++index_) parseOne(options);
    return options;
  }

 private:
  void parseOne(Options& options) {
    const std::string arg = argv_[index_];
    if (arg.size() < 2 || arg[0] != '-') {
      perfFail("unexpected argument '%s' (see --help)", arg.c_str());
    }
    if (arg.compare(0, 2, "--") == 0 || arg.compare(0, 3, "-np") == 0) {
      parseLong(options, arg.substr(arg[1] == '-' ? 2 : 1));
    } else {
      parseShort(options, arg);
    }
  }

  void parseLong(Options& options, const std::string& body) {
    const size_t equals = body.find('=');
    const std::string name = body.substr(0, equals);
    const OptionSpec* spec = findLong(name);
    if (!spec) perfFail("unknown option '--%s' (see --help)", name.c_str());
    const std::string flag = "--" + name;
    if (equals != std::string::npos) {
      if (spec->mode == ValueMode::kNone) {
        perfFail("%s takes no value", flag.c_str());
      }
      spec->handle(options, body.substr(equals + 1), flag);
      return;
    }
    spec->handle(options, takeValue(*spec, flag), flag);
  }

  void parseShort(Options& options, const std::string& arg) {
    const OptionSpec* spec = findShort(arg[1]);
    if (!spec) perfFail("unknown option '%s' (see --help)", arg.c_str());
    const std::string flag = arg.substr(0, 2);
    if (arg.size() > 2) {
      if (spec->mode == ValueMode::kNone) {
        perfFail("%s takes no value (in '%s')", flag.c_str(), arg.c_str());
      }
      spec->handle(options, arg.substr(2), flag);
      return;
    }
    spec->handle(options, takeValue(*spec, flag), flag);
  }

  // The option's value from the next argument. An optional value is taken
  // only when the next argument is a number or (for -c) not an option.
  std::string takeValue(const OptionSpec& spec, const std::string& flag) {
    if (spec.mode == ValueMode::kNone) return std::string();
    const bool haveNext = index_ + 1 < argc_;
    const std::string next = haveNext ? argv_[index_ + 1] : std::string();
    if (spec.mode == ValueMode::kOptional) {
      long long ignored;
      const bool takesNext =
          haveNext && (parseInteger(next, &ignored) ||
                       (spec.shortName == 'c' && flag == "-c" &&
                        !next.empty() && next[0] != '-'));
      if (!takesNext) return std::string();
    } else if (!haveNext) {
      perfFail("%s needs a value (see --help)", flag.c_str());
    }
    ++index_;
    return next;
  }

  int argc_;
  char** argv_;
  int index_ = 1;
};

void validate(const Options& options) {
  if (options.minBytes > options.maxBytes) {
    perfFail("-b/--minbytes (%zu) is larger than -e/--maxbytes (%zu)",
             options.minBytes, options.maxBytes);
  }
}

}  // namespace

Options parseOptions(int argc, char** argv) {
  Options options = ArgumentParser(argc, argv).parse();
  validate(options);
  return options;
}

std::string formatBytes(size_t bytes) {
  static const char* const kUnits[] = {"B", "KB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  if (value == std::floor(value)) {
    return strprintf("%.0f%s", value, kUnits[unit]);
  }
  return strprintf("%.1f%s", value, kUnits[unit]);
}

std::vector<size_t> sizeSweep(const Options& options) {
  std::vector<size_t> sizes;
  size_t size = options.minBytes;
  while (size <= options.maxBytes) {
    sizes.push_back(size);
    size_t next;
    if (options.stepBytes > 0) {
      next = size + options.stepBytes;
    } else {
      next = static_cast<size_t>(std::llround(size * options.stepFactor));
      if (next <= size) next = size + 1;  // 0, or a factor close to 1
    }
    if (next < size) break;  // overflow
    size = next;
  }
  return sizes;
}

std::string helpText(const char* program) {
  return strprintf(
      "Usage: %s [options]\n"
      "\n"
      "Bandwidth and correctness benchmark for HetCCL with nccl-tests\n"
      "semantics. Runs a sweep of message sizes for one or more collectives\n"
      "and prints, per size, the out-of-place and in-place time, algorithm\n"
      "bandwidth (size/time), bus bandwidth (algbw times the collective's\n"
      "factor: allreduce 2(n-1)/n; allgather, reducescatter, alltoall,\n"
      "gather, scatter (n-1)/n; broadcast, reduce, sendrecv 1) and the\n"
      "number of wrong result elements. The exit status is non-zero if any\n"
      "result was wrong.\n"
      "\n"
      "What to run:\n"
      "  -x, --coll NAME[,NAME]  allreduce allgather reducescatter broadcast\n"
      "                          reduce alltoall gather scatter sendrecv,\n"
      "                          or all\n"
      "                          (default allreduce). -c NAME also works.\n"
      "  -d, --datatype T[,T]    int8 uint8 int32 uint32 int64 uint64\n"
      "                          float16/half bfloat16 float32/float\n"
      "                          float64/double fp8e4m3 fp8e5m2, or all\n"
      "                          (default float32)\n"
      "  -o, --op OP[,OP]        sum prod max min avg premulsum, or all\n"
      "                          (default sum; premulsum multiplies by %g)\n"
      "  -r, --root N            root of broadcast, reduce, gather and\n"
      "                          scatter (default 0)\n"
      "\n"
      "Sizes (K, M, G suffixes are powers of 1024):\n"
      "  -b, --minbytes SIZE     first size (default 32M)\n"
      "  -e, --maxbytes SIZE     last size (default 32M)\n"
      "  -f, --stepfactor F      multiply the size by F each step (default 2)\n"
      "  -i, --stepbytes SIZE    add SIZE each step instead\n"
      "  The size is the buffer of allreduce, broadcast, reduce and sendrecv,\n"
      "  and the total (all ranks') buffer of allgather, reducescatter,\n"
      "  alltoall, gather and scatter, rounded down to whole elements per\n"
      "  rank.\n"
      "\n"
      "Measurement:\n"
      "  -w, --warmup_iters N    untimed launches per size (default 5)\n"
      "  -n, --iters N           timed launches per size (default 20)\n"
      "  -m, --agg_iters N       launches per iteration, in one group\n"
      "                          (default 1)\n"
      "  -c, --check N           verify the results N times per size;\n"
      "                          0 disables the check (default 1; --check\n"
      "                          alone means 1)\n"
      "  -a, --average N         combine the ranks' times: 0 rank 0's,\n"
      "                          1 mean, 2 min, 3 max (default 1)\n"
      "  -z, --blocking [0|1]    wait for each launch before the next\n"
      "  --placement WHICH       out, in or both (default both); alltoall\n"
      "                          and sendrecv have no in-place form\n"
      "\n"
      "Ranks:\n"
      "  -np N                   start N ranks on this host (this process\n"
      "                          serves the rendezvous and waits for them)\n"
      "  -t, --nthreads N        each process runs N ranks, one per thread\n"
      "                          (ranks process*N to process*N+N-1, GPU\n"
      "                          local rank*N+thread; default 1)\n"
      "  --timeout SEC           with -np, stop every rank after SEC seconds;\n"
      "                          otherwise stop this rank (default 0: none)\n"
      "  -D, --domains SPEC      force HetCCL's domains (sets HETCCL_DOMAINS,\n"
      "                          e.g. split:2 or 0,0,1,1)\n"
      "  Without -np the rank and size come from the launcher: torchrun\n"
      "  (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), mpirun\n"
      "  (OMPI_COMM_WORLD_*, or PMI_RANK/PMI_SIZE), srun (SLURM_PROCID,\n"
      "  SLURM_NTASKS, SLURM_LOCALID); without a launcher one rank runs.\n"
      "  The ranks meet at HETCCL_COMM_ID (or NCCL_COMM_ID) = host:port,\n"
      "  which rank 0 listens on; under torchrun it defaults to\n"
      "  MASTER_ADDR:(MASTER_PORT+1). GPU ranks use GPU LOCAL_RANK %% count.\n"
      "\n"
      "Library:\n"
      "  --nccl-library PATH     measure the NCCL-API library at PATH (e.g.\n"
      "                          NVIDIA's libnccl.so.2) instead of the linked\n"
      "                          HetCCL: it is loaded privately and every\n"
      "                          nccl* call goes to it. Unless it is a HetCCL\n"
      "                          build, every rank must be a GPU rank (no\n"
      "                          CPU ranks, -D or HETCCL_FORCE_CPU), and\n"
      "                          the ranks of a launcher meet at NCCL_COMM_ID\n"
      "                          (set from HETCCL_COMM_ID if missing).\n"
      "\n"
      "Output:\n"
      "  --json FILE             also write one JSON object per line for\n"
      "                          each size, type, op and placement\n"
      "  --progress              show progress on stderr even when it is\n"
      "                          not a terminal\n"
      "  --explain               after the run, print what HetCCL chose for\n"
      "                          the first op of each kind and size class on\n"
      "                          rank 0, and why (its decision log: this\n"
      "                          sets HETCCL_DEBUG=INFO, HETCCL_DEBUG_SUBSYS=\n"
      "                          TUNING and HETCCL_DEBUG_FILE for the ranks)\n"
      "  -h, --help              this text\n"
      "  -V, --version           the library version\n"
      "\n"
      "Exit status: 0 all results right, 1 some results wrong, 2 an error\n"
      "(a rank failed or died), 124 --timeout, 128+N stopped by signal N.\n"
      "\n"
      "Example:\n"
      "  %s -np 4 -x allreduce -b 1K -e 64M -f 4 -d float32 -o sum\n",
      program, kPreMulScalar, program);
}

}  // namespace perf
}  // namespace hetccl

#include "options.h"

#include <sstream>
#include <stdexcept>

#include "kit/byte_size.h"
#include "kit/dtype.h"

namespace hetccl::sim {
namespace {

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ','))
    if (!item.empty()) items.push_back(item);
  return items;
}

double positive(const std::string& flag, const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(value > 0))
    throw std::invalid_argument(flag + " needs a positive number, not \"" +
                                text + "\"");
  return value;
}

int count(const std::string& flag, const std::string& text) {
  const double value = positive(flag, text);
  if (value != static_cast<int>(value) || value > 1 << 20)
    throw std::invalid_argument(flag + " needs a whole number, not \"" + text +
                                "\"");
  return static_cast<int>(value);
}

size_t bytes(const std::string& flag, const std::string& text) {
  std::optional<size_t> value = kit::parseByteSize(text);
  if (!value || *value == 0)
    throw std::invalid_argument(
        flag + " needs a size such as 64K or 1G, not \"" + text + "\"");
  return *value;
}

// The per-domain libraries: "nccl,rccl" names domain 0's, 1's, and then
// repeats.
std::vector<LibraryModel> librariesOf(const std::string& text) {
  std::vector<LibraryModel> models;
  for (const std::string& name : splitList(text)) {
    LibraryModel model;
    if (!libraryModel(name, &model))
      throw std::invalid_argument("--library: unknown library \"" + name +
                                  "\" (nccl, rccl or host)");
    models.push_back(model);
  }
  if (models.empty()) throw std::invalid_argument("--library names none");
  return models;
}

}  // namespace

const char* usage() {
  return "usage: hetccl-sim [options]\n"
         "Runs HetCCL's own plans for every rank of a simulated cluster in\n"
         "virtual time and prints what each operation took.\n"
         "  --domains D        vendor domains (default 2)\n"
         "  --hosts H          hosts per domain (default 1)\n"
         "  --gpus G           ranks per host (default 8)\n"
         "  --library L[,L..]  each domain's library, repeated over the\n"
         "                     domains: nccl, rccl, host (default nccl,rccl)\n"
         "  --lib-gbps X       every library's bus bandwidth (GB/s)\n"
         "  --lib-alpha-us X   every library's time per collective (us)\n"
         "  --mem-gbps X       every rank's memory rate for its reductions "
         "and\n"
         "                     copies (GB/s)\n"
         "  --nic-gbps X       each NIC's rate each way (Gb/s, default 400)\n"
         "  --nics N           NICs per host (default: one per rank)\n"
         "  --nic-latency-us X a transfer's latency between hosts (default 2)\n"
         "  --loopback-gbps X  the hosts pretend (one machine): transfers\n"
         "                     between them share its loopback, both ways\n"
         "                     together, at X GB/s\n"
         "  --copy-gbps X      a GPU's copies to and from host memory between\n"
         "                     hosts, each way (GB/s, default 50)\n"
         "  --piece-us X       the staging proxy's hand-over per piece (us,\n"
         "                     default 0)\n"
         "  -x LIST            allreduce,allgather,reducescatter,broadcast,\n"
         "                     reduce,alltoall,sendrecv or all (default\n"
         "                     allreduce)\n"
         "  -b SIZE -e SIZE -f F  sizes from -b to -e, times F (8 to 1G, 2)\n"
         "  -d TYPE            data type (default float32)\n"
         "  --chunk SIZE       HETCCL_CHUNK (default 16M)\n"
         "  --one-shot-max SIZE  HETCCL_ONE_SHOT_MAX (default 32K)\n"
         "  --cost-model       choose each size's one-shot cut-off and chunk\n"
         "                     as a communicator of this cluster would (the\n"
         "                     cost model, its link the NICs'); --chunk and\n"
         "                     --one-shot-max, where given, still win\n"
         "  --json FILE        also one JSON object per operation and size\n";
}

Options parseOptions(const std::vector<std::string>& args) {
  Options options;
  int domains = 2, hosts = 1, gpus = 8, nics = 0;
  std::vector<LibraryModel> libraries = librariesOf("nccl,rccl");
  double libGbps = 0, libAlphaUs = -1, memGbps = 0;
  std::string collectives = "allreduce";
  bool costModel = false, chunkGiven = false, oneShotMaxGiven = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "-h" || flag == "--help") {
      options.help = true;
      continue;
    }
    if (flag == "--cost-model") {
      costModel = true;
      continue;
    }
    if (i + 1 >= args.size())
      throw std::invalid_argument("unknown option or missing value: " + flag);
    const std::string& value = args[++i];
    if (flag == "--domains")
      domains = count(flag, value);
    else if (flag == "--hosts")
      hosts = count(flag, value);
    else if (flag == "--gpus")
      gpus = count(flag, value);
    else if (flag == "--library")
      libraries = librariesOf(value);
    else if (flag == "--lib-gbps")
      libGbps = positive(flag, value);
    else if (flag == "--lib-alpha-us")
      libAlphaUs = positive(flag, value);
    else if (flag == "--mem-gbps")
      memGbps = positive(flag, value);
    else if (flag == "--nic-gbps")
      options.cluster.nics.gbps = positive(flag, value);
    else if (flag == "--loopback-gbps")
      options.cluster.loopbackGBps = positive(flag, value);
    else if (flag == "--copy-gbps")
      options.cluster.copyGBps = positive(flag, value);
    else if (flag == "--piece-us")
      options.cluster.pieceUs = positive(flag, value);
    else if (flag == "--nics")
      nics = count(flag, value);
    else if (flag == "--nic-latency-us")
      options.cluster.nics.latencyUs = positive(flag, value);
    else if (flag == "-x")
      collectives = value;
    else if (flag == "-b")
      options.minBytes = bytes(flag, value);
    else if (flag == "-e")
      options.maxBytes = bytes(flag, value);
    else if (flag == "-f")
      options.factor = positive(flag, value);
    else if (flag == "-d") {
      const kit::DataType* type = kit::findDataType(value);
      if (!type)
        throw std::invalid_argument("-d: unknown type \"" + value + "\"");
      options.dtype = type->nccl;
    } else if (flag == "--chunk") {
      options.knobs.chunkBytes = bytes(flag, value);
      chunkGiven = true;
    } else if (flag == "--one-shot-max") {
      options.knobs.oneShotMaxBytes = bytes(flag, value);
      oneShotMaxGiven = true;
    } else if (flag == "--json")
      options.jsonPath = value;
    else
      throw std::invalid_argument("unknown option: " + flag);
  }
  if (options.factor <= 1 && options.minBytes != options.maxBytes)
    throw std::invalid_argument("-f must be above 1");
  if (options.minBytes > options.maxBytes)
    throw std::invalid_argument("-b is above -e");
  for (int d = 0; d < domains; ++d) {
    DomainSpec domain;
    domain.library = libraries[d % libraries.size()];
    if (libGbps > 0) domain.library.busGBps = libGbps;
    if (libAlphaUs > 0) domain.library.alphaUs = libAlphaUs;
    if (memGbps > 0) domain.library.memoryGBps = memGbps;
    domain.hosts = hosts;
    domain.ranksPerHost = gpus;
    options.cluster.domains.push_back(domain);
  }
  options.cluster.nics.perHost = nics > 0 ? nics : gpus;
  if (collectives == "all")
    collectives =
        "allreduce,allgather,reducescatter,broadcast,reduce,alltoall,sendrecv";
  for (const std::string& name : splitList(collectives)) {
    SimCollective collective;
    if (!parseCollective(name, &collective))
      throw std::invalid_argument("-x: unknown collective \"" + name + "\"");
    options.collectives.push_back(collective);
  }
  if (costModel)
    options.knobs.tuning = std::make_shared<PlanTuning>(PlanTuning::fromModel(
        PlanCostModel(modelLayoutOf(options.cluster),
                      modelLinkOf(options.cluster)),
        options.knobs.chunkBytes, options.knobs.oneShotMaxBytes,
        oneShotMaxGiven, chunkGiven));
  return options;
}

}  // namespace hetccl::sim

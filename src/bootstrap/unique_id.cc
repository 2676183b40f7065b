#include "bootstrap/unique_id.h"

#include <cstring>
#include <vector>

#include "bootstrap/bootstrap_settings.h"
#include "util/error.h"
#include "util/log.h"
#include "util/wire.h"

namespace hetccl {
namespace {

constexpr uint32_t kIdMagic = 0x44494348;  // "HCID" in little-endian bytes
constexpr uint16_t kIdVersion = 1;
constexpr uint16_t kFlagFixedRoot = 1;
constexpr size_t kChecksumOffset = NCCL_UNIQUE_ID_BYTES - 8;

uint64_t idChecksum(const uint8_t* bytes) {
  return fnv1a64(bytes, kChecksumOffset);
}

}  // namespace

ncclUniqueId encodeUniqueId(const UniqueIdContents& contents) {
  std::vector<uint8_t> out;
  WireWriter w(&out);
  w.u32(kIdMagic);
  w.u16(kIdVersion);
  w.u16(contents.fixedRoot ? kFlagFixedRoot : 0);
  w.address(contents.root);
  w.bytes(contents.secret.data(), contents.secret.size());
  out.resize(kChecksumOffset, 0);
  w.u64(idChecksum(out.data()));
  ncclUniqueId id;
  static_assert(sizeof(id.internal) == NCCL_UNIQUE_ID_BYTES, "id size");
  std::memcpy(id.internal, out.data(), NCCL_UNIQUE_ID_BYTES);
  return id;
}

UniqueIdContents decodeUniqueId(const ncclUniqueId& id) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(id.internal);
  WireReader r(bytes, NCCL_UNIQUE_ID_BYTES);
  uint32_t magic = r.u32();
  if (magic != kIdMagic)
    fail(ncclInvalidArgument,
         "corrupted or foreign ncclUniqueId: bad magic 0x%08x (was it made "
         "by ncclGetUniqueId of this library?)",
         magic);
  uint16_t version = r.u16();
  uint16_t flags = r.u16();
  WireReader tail(bytes + kChecksumOffset, 8);
  if (tail.u64() != idChecksum(bytes))
    fail(ncclInvalidArgument,
         "corrupted or foreign ncclUniqueId: checksum mismatch (the id was "
         "changed after ncclGetUniqueId made it)");
  if (version != kIdVersion)
    fail(ncclInvalidArgument,
         "corrupted or foreign ncclUniqueId: format version %u, this "
         "library reads version %u",
         version, kIdVersion);
  UniqueIdContents contents;
  contents.fixedRoot = (flags & kFlagFixedRoot) != 0;
  try {
    contents.root = r.address();
  } catch (const Error& e) {
    fail(ncclInvalidArgument, "corrupted or foreign ncclUniqueId: %s",
         e.what());
  }
  r.bytes(contents.secret.data(), contents.secret.size());
  return contents;
}

std::optional<UniqueIdContents> fixedUniqueIdFromEnv() {
  auto text = readString(kCommId);
  if (!text) return std::nullopt;
  UniqueIdContents contents;
  try {
    contents.root = SocketAddress::parse(*text);
  } catch (const Error& e) {
    fail(ncclInvalidArgument, "HETCCL_COMM_ID/NCCL_COMM_ID=\"%s\": %s",
         text->c_str(), e.what());
  }
  // Rank 0 would listen on a port of the kernel's choosing, which the
  // other ranks, knowing only the variable, could never reach.
  if (contents.root.port() == 0)
    fail(ncclInvalidArgument,
         "HETCCL_COMM_ID/NCCL_COMM_ID=\"%s\": port 0 cannot be a fixed "
         "root address (every rank connects to the port given there); give "
         "a port, e.g. %s:29500, or unset it to pass the id from "
         "ncclGetUniqueId",
         text->c_str(), text->substr(0, text->rfind(':')).c_str());
  contents.fixedRoot = true;
  auto secret = readString(kCommSecret);
  contents.secret =
      deriveSecret(secret ? "secret:" + *secret : "address:" + *text);
  if (!secret)
    LOG_INFO(kLogBootstrap,
             "bootstrap root fixed at %s by COMM_ID; its secret is derived "
             "from the address (set HETCCL_COMM_SECRET to keep out anyone "
             "who knows the address)",
             contents.root.toString().c_str());
  return contents;
}

}  // namespace hetccl

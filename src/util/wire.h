// Little-endian encoding of fixed-layout messages (unique ids, bootstrap
// and tcp-link hellos, stripe headers), so that they mean the same on every
// host whatever its byte order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "util/error.h"
#include "util/socket_address.h"

namespace hetccl {

// An unsigned value's low `n` bytes at `out`, least significant first.
inline void storeLe(uint8_t* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint64_t loadLe(const uint8_t* in, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(in[i]) << (8 * i);
  return v;
}
inline void storeLe32(uint8_t* out, uint32_t v) { storeLe(out, v, 4); }
inline void storeLe64(uint8_t* out, uint64_t v) { storeLe(out, v, 8); }
inline uint32_t loadLe32(const uint8_t* in) {
  return static_cast<uint32_t>(loadLe(in, 4));
}
inline uint64_t loadLe64(const uint8_t* in) { return loadLe(in, 8); }

// Appends fields to a byte vector.
class WireWriter {
 public:
  explicit WireWriter(std::vector<uint8_t>* out) : out_(out) {}

  void u8(uint8_t v) { out_->push_back(v); }
  void u16(uint16_t v) { unsignedLe(v, 2); }
  void u32(uint32_t v) { unsignedLe(v, 4); }
  void u64(uint64_t v) { unsignedLe(v, 8); }
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void bytes(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    out_->insert(out_->end(), p, p + n);
  }
  void address(const SocketAddress& a) {
    size_t at = out_->size();
    out_->resize(at + SocketAddress::kEncodedBytes);
    a.encode(out_->data() + at);
  }

 private:
  void unsignedLe(uint64_t v, int n) {
    size_t at = out_->size();
    out_->resize(at + static_cast<size_t>(n));
    storeLe(out_->data() + at, v, n);
  }
  std::vector<uint8_t>* out_;
};

// Reads fields from a byte range; reading past its end is a bug in the
// caller (it must check sizes first), reported as ncclInternalError.
class WireReader {
 public:
  WireReader(const uint8_t* data, size_t size) : p_(data), left_(size) {}

  uint8_t u8() { return static_cast<uint8_t>(unsignedLe(1)); }
  uint16_t u16() { return static_cast<uint16_t>(unsignedLe(2)); }
  uint32_t u32() { return static_cast<uint32_t>(unsignedLe(4)); }
  uint64_t u64() { return unsignedLe(8); }
  int32_t i32() { return static_cast<int32_t>(u32()); }
  void bytes(void* out, size_t n) {
    need(n);
    std::memcpy(out, p_, n);
    advance(n);
  }
  SocketAddress address() {
    need(SocketAddress::kEncodedBytes);
    SocketAddress a = SocketAddress::decode(p_);
    advance(SocketAddress::kEncodedBytes);
    return a;
  }
  const uint8_t* position() const { return p_; }
  size_t left() const { return left_; }

 private:
  void need(size_t n) const {
    if (n > left_)
      fail(ncclInternalError,
           "message too short: need %zu more byte(s), have %zu", n, left_);
  }
  void advance(size_t n) {
    p_ += n;
    left_ -= n;
  }
  uint64_t unsignedLe(int n) {
    need(static_cast<size_t>(n));
    uint64_t v = loadLe(p_, n);
    advance(static_cast<size_t>(n));
    return v;
  }
  const uint8_t* p_;
  size_t left_;
};

// 64-bit FNV-1a: every single-byte change of the input changes the hash.
inline uint64_t fnv1a64(const void* data, size_t n,
                        uint64_t hash = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace hetccl

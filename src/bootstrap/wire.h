// Little-endian encoding of the bootstrap's fixed-layout messages, so that
// ids and hellos mean the same on every host whatever its byte order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "util/error.h"
#include "util/socket.h"

namespace hetccl {

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
    for (int i = 0; i < n; ++i)
      out_->push_back(static_cast<uint8_t>(v >> (8 * i)));
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
           "bootstrap message too short: need %zu more "
           "byte(s), have %zu",
           n, left_);
  }
  void advance(size_t n) {
    p_ += n;
    left_ -= n;
  }
  uint64_t unsignedLe(int n) {
    need(static_cast<size_t>(n));
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(p_[i]) << (8 * i);
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

// The 16-byte secrets that keep strangers out of a communicator: the
// bootstrap's (in the unique id) and each tcp link's.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace hetccl {

using Secret = std::array<uint8_t, 16>;

// 16 bytes from getrandom().
Secret randomSecret();
// A secret every process derives alike from `seed`. Not a cryptographic
// key derivation: it only keeps strangers and stale ranks out.
Secret deriveSecret(const std::string& seed);
// Compares without an early exit.
bool secretsEqual(const Secret& a, const Secret& b);

}  // namespace hetccl

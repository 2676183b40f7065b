#include "util/secret.h"

#include <sys/random.h>

#include <cerrno>

#include "util/error.h"
#include "util/wire.h"

namespace hetccl {

Secret randomSecret() {
  Secret secret{};
  size_t filled = 0;
  while (filled < secret.size()) {
    ssize_t n = getrandom(secret.data() + filled, secret.size() - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      failErrno("getrandom failed while making a bootstrap secret");
    }
    filled += static_cast<size_t>(n);
  }
  return secret;
}

Secret deriveSecret(const std::string& seed) {
  // Two differently-salted 64-bit hashes, each folded with the other, fill
  // the 16 bytes.
  std::string a = "hetccl-secret-a:" + seed;
  std::string b = "hetccl-secret-b:" + seed;
  uint64_t ha = fnv1a64(a.data(), a.size());
  uint64_t hb = fnv1a64(b.data(), b.size(), ha);
  ha = fnv1a64(&hb, sizeof(hb), ha);
  Secret secret{};
  for (int i = 0; i < 8; ++i) {
    secret[i] = static_cast<uint8_t>(ha >> (8 * i));
    secret[8 + i] = static_cast<uint8_t>(hb >> (8 * i));
  }
  return secret;
}

bool secretsEqual(const Secret& a, const Secret& b) {
  uint8_t diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

}  // namespace hetccl

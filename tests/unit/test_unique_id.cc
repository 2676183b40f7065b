// The 128-byte ncclUniqueId: round trips, corruption detection, and the
// fixed-address (HETCCL_COMM_ID / NCCL_COMM_ID) mode.
#include "bootstrap/unique_id.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <string>

#include "bootstrap/root.h"
#include "support/scoped_env.h"
#include "util/error.h"

namespace hetccl {
namespace {

// No fixed COMM_ID from the test's environment, and roots that give up
// quickly.
class UniqueIdTest : public ::testing::Test {
 protected:
  ScopedEnv commId_{"HETCCL_COMM_ID", nullptr};
  ScopedEnv ncclCommId_{"NCCL_COMM_ID", nullptr};
  ScopedEnv secret_{"HETCCL_COMM_SECRET", nullptr};
  ScopedEnv timeout_{"HETCCL_BOOTSTRAP_TIMEOUT", "5"};
};

UniqueIdContents sampleContents(const char* address, bool fixed) {
  UniqueIdContents contents;
  contents.root = SocketAddress::parse(address);
  contents.secret = randomSecret();
  contents.fixedRoot = fixed;
  return contents;
}

bool sameId(const ncclUniqueId& a, const ncclUniqueId& b) {
  return std::memcmp(a.internal, b.internal, sizeof(a.internal)) == 0;
}

TEST_F(UniqueIdTest, RoundTrips) {
  for (const char* address : {"10.0.0.7:41000", "[fd00::7]:41001"}) {
    for (bool fixed : {false, true}) {
      UniqueIdContents in = sampleContents(address, fixed);
      UniqueIdContents out = decodeUniqueId(encodeUniqueId(in));
      EXPECT_EQ(out.root, in.root) << address;
      EXPECT_EQ(out.root.toString(), in.root.toString());
      EXPECT_TRUE(secretsEqual(out.secret, in.secret));
      EXPECT_EQ(out.fixedRoot, fixed);
    }
  }
}

TEST_F(UniqueIdTest, EveryCorruptedByteIsDetected) {
  ncclUniqueId good = encodeUniqueId(sampleContents("10.0.0.7:41000", false));
  for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i) {
    for (uint8_t flip : {0x01, 0x80, 0xFF}) {
      ncclUniqueId bad = good;
      bad.internal[i] = static_cast<char>(bad.internal[i] ^ flip);
      try {
        decodeUniqueId(bad);
        ADD_FAILURE() << "byte " << i << " ^ " << int(flip) << " undetected";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ncclInvalidArgument);
        EXPECT_NE(std::string(e.what()).find("corrupted or foreign "
                                             "ncclUniqueId"),
                  std::string::npos)
            << e.what();
      }
    }
  }
}

TEST_F(UniqueIdTest, ForeignIdsAreRejected) {
  ncclUniqueId zeros;
  std::memset(&zeros, 0, sizeof(zeros));
  EXPECT_THROW(decodeUniqueId(zeros), Error);
  ncclUniqueId noise;
  for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i)
    noise.internal[i] = static_cast<char>(i * 37 + 11);
  EXPECT_THROW(decodeUniqueId(noise), Error);
}

TEST_F(UniqueIdTest, SecretsAreRandomOrDerived) {
  EXPECT_FALSE(secretsEqual(randomSecret(), randomSecret()));
  EXPECT_TRUE(secretsEqual(deriveSecret("abc"), deriveSecret("abc")));
  EXPECT_FALSE(secretsEqual(deriveSecret("abc"), deriveSecret("abd")));
}

TEST_F(UniqueIdTest, FreshIdsDifferAndNameALiveRoot) {
  ncclUniqueId a = createUniqueId();
  ncclUniqueId b = createUniqueId();
  EXPECT_FALSE(sameId(a, b));
  UniqueIdContents contents = decodeUniqueId(a);
  EXPECT_FALSE(contents.fixedRoot);
  EXPECT_NE(contents.root.port(), 0);
  // The roots are listening: each acknowledges a cancel.
  EXPECT_TRUE(cancelRoot(a, 5));
  EXPECT_TRUE(cancelRoot(b, 5));
}

TEST_F(UniqueIdTest, FixedCommIdGivesTheSameIdEverywhere) {
  ScopedEnv commId("HETCCL_COMM_ID", "127.0.0.1:29431");
  ncclUniqueId a = createUniqueId();
  ncclUniqueId b = createUniqueId();
  EXPECT_TRUE(sameId(a, b));
  UniqueIdContents contents = decodeUniqueId(a);
  EXPECT_TRUE(contents.fixedRoot);
  EXPECT_EQ(contents.root.toString(), "127.0.0.1:29431");
  EXPECT_TRUE(
      secretsEqual(contents.secret, deriveSecret("address:127.0.0.1:29431")));
}

TEST_F(UniqueIdTest, NcclCommIdIsHonoured) {
  ScopedEnv commId("NCCL_COMM_ID", "[::1]:29432");
  UniqueIdContents contents = decodeUniqueId(createUniqueId());
  EXPECT_TRUE(contents.fixedRoot);
  EXPECT_EQ(contents.root.toString(), "[::1]:29432");
}

TEST_F(UniqueIdTest, CommSecretChangesTheFixedId) {
  ScopedEnv commId("HETCCL_COMM_ID", "127.0.0.1:29433");
  ncclUniqueId plain = createUniqueId();
  ScopedEnv secret("HETCCL_COMM_SECRET", "s3cret");
  ncclUniqueId a = createUniqueId();
  ncclUniqueId b = createUniqueId();
  EXPECT_TRUE(sameId(a, b));
  EXPECT_FALSE(sameId(a, plain));
}

TEST_F(UniqueIdTest, BadCommIdIsAnInvalidArgument) {
  ScopedEnv commId("HETCCL_COMM_ID", "not-an-address");
  try {
    createUniqueId();
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ncclInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("not-an-address"), std::string::npos);
  }
}

// Port 0 would make rank 0 listen where no other rank can find it: every
// rank would wait out the bootstrap timeout.
TEST_F(UniqueIdTest, CommIdWithPortZeroIsAnInvalidArgument) {
  ScopedEnv commId("HETCCL_COMM_ID", "127.0.0.1:0");
  try {
    createUniqueId();
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ncclInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("port 0"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace hetccl

// Finding and loading AMD's RCCL, and asking for the current HIP device,
// on machines without either. RCCL exports NCCL's API, so the real NCCL of
// the CUDA toolkit (present on the development and CI machines) stands in
// for RCCL wherever a library must load and answer: placed under a fake
// ROCm tree or beside a fake PyTorch wheel library, it shows the search
// order through the real loader.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "api/hand_back.h"
#include "domain/domain_backend.h"
#include "domain/nccl_api/nccl_api_comm.h"
#include "domain/rccl/rccl_backend.h"
#include "domain/rccl/rccl_library.h"
#include "runtime/gpu_runtimes.h"
#include "support/in_process_oob.h"
#include "support/library_loading.h"
#include "support/mapped_file.h"
#include "support/scoped_env.h"
#include "support/temp_dir.h"
#include "util/error.h"

namespace hetccl {
namespace {

// HetCCL's own drop-in librccl.so.1, which the loader must pass over;
// tests/unit/CMakeLists.txt names it for this test.
#ifdef HETCCL_DROPIN_RCCL
const char* kDropIn = HETCCL_DROPIN_RCCL;
#else
const char* kDropIn = nullptr;
#endif

#define REQUIRE_STAND_IN() REQUIRE_TOOLKIT_NCCL() << " to stand in for RCCL"

std::string loadFailure() {
  return systemErrorOf([] { RcclLibrary::load(); });
}

size_t indexOf(const std::vector<std::string>& paths, const std::string& p) {
  for (size_t i = 0; i < paths.size(); ++i)
    if (paths[i] == p) return i;
  return paths.size();
}

TEST(RcclLibrary, TheOverrideVariableIsTheOnlyCandidate) {
  ScopedEnv forced("HETCCL_RCCL_LIBRARY", "/somewhere/librccl.so.1");
  EXPECT_EQ(RcclLibrary::candidatePaths(),
            std::vector<std::string>{"/somewhere/librccl.so.1"});
}

TEST(RcclLibrary, LoadsTheLibraryTheOverrideNames) {
  REQUIRE_STAND_IN();
  ScopedEnv forced("HETCCL_RCCL_LIBRARY", kToolkitNccl);
  auto rccl = RcclLibrary::load();
  EXPECT_EQ(rccl->path(), kToolkitNccl);
  EXPECT_STREQ(rccl->vendor(), "RCCL");
  EXPECT_GE(rccl->version(), 20000);
  // The table reaches the library's own functions, never HetCCL's exports.
  EXPECT_NE(reinterpret_cast<void*>(rccl->api().AllReduce),
            reinterpret_cast<void*>(&::ncclAllReduce));
  EXPECT_TRUE(rccl->contains(reinterpret_cast<void*>(rccl->api().AllReduce)));
  EXPECT_FALSE(rccl->contains(reinterpret_cast<void*>(&::ncclAllReduce)));
}

TEST(RcclLibrary, SearchesRocmPathThenOptRocmThenTheLoaderPath) {
  ScopedEnv forced("HETCCL_RCCL_LIBRARY", nullptr);
  ScopedEnv rocm("ROCM_PATH", "/my/rocm");
  auto paths = RcclLibrary::candidatePaths();
  size_t mine = indexOf(paths, "/my/rocm/lib/librccl.so.1");
  size_t opt = indexOf(paths, "/opt/rocm/lib/librccl.so.1");
  ASSERT_LT(mine, paths.size());
  ASSERT_LT(opt, paths.size());
  EXPECT_LT(mine, opt);
  EXPECT_EQ(paths.back(), "librccl.so.1");
}

TEST(RcclLibrary, FindsRcclUnderRocmPath) {
  REQUIRE_STAND_IN();
  TempDir rocm;
  std::string rccl = rocm.link("lib/librccl.so.1", kToolkitNccl);
  ScopedEnv forced("HETCCL_RCCL_LIBRARY", nullptr);
  ScopedEnv rocmPath("ROCM_PATH", rocm.path().c_str());
  EXPECT_EQ(RcclLibrary::load()->path(), rccl);
}

TEST(RcclLibrary, FindsRcclBesideAMappedPytorchLibraryFirst) {
  REQUIRE_STAND_IN();
  // torch/lib of a ROCm wheel: libtorch_hip.so, and RCCL as librccl.so.
  TempDir torchLib;
  MappedFile libtorch(torchLib.path() + "/libtorch_hip.so");
  std::string wheelRccl = torchLib.link("librccl.so", kToolkitNccl);
  TempDir rocm;
  rocm.link("lib/librccl.so.1", kToolkitNccl);
  ScopedEnv forced("HETCCL_RCCL_LIBRARY", nullptr);
  ScopedEnv rocmPath("ROCM_PATH", rocm.path().c_str());
  auto paths = RcclLibrary::candidatePaths();
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.front(), wheelRccl);
  EXPECT_EQ(RcclLibrary::load()->path(), wheelRccl);
}

TEST(RcclLibrary, PassesOverHetcclsOwnDropIn) {
  REQUIRE_STAND_IN();
  if (kDropIn == nullptr) GTEST_SKIP() << "built without HETCCL_DROPIN_RCCL";
  // The drop-in comes first (beside the "wheel"), the real one after it.
  TempDir torchLib;
  MappedFile libtorch(torchLib.path() + "/libtorch_hip.so");
  std::string dropIn = torchLib.link("librccl.so.1", kDropIn);
  TempDir rocm;
  std::string real = rocm.link("lib/librccl.so.1", kToolkitNccl);
  ScopedEnv forced("HETCCL_RCCL_LIBRARY", nullptr);
  ScopedEnv rocmPath("ROCM_PATH", rocm.path().c_str());
  ASSERT_EQ(RcclLibrary::candidatePaths().front(), dropIn);
  EXPECT_EQ(RcclLibrary::load()->path(), real);
}

TEST(RcclLibrary, RefusesHetcclItself) {
  SKIP_UNDER_ASAN();
  if (kDropIn == nullptr) GTEST_SKIP() << "built without HETCCL_DROPIN_RCCL";
  ScopedEnv forced("HETCCL_RCCL_LIBRARY", kDropIn);
  std::string message = loadFailure();
  EXPECT_NE(message.find(std::string(kDropIn) + ": this is HetCCL, not RCCL"),
            std::string::npos)
      << message;
}

TEST(RcclLibrary, RefusesALibraryWithoutTheNcclApi) {
  SKIP_UNDER_ASAN();
  Dl_info libc{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&getpid), &libc), 0);
  ScopedEnv forced("HETCCL_RCCL_LIBRARY", libc.dli_fname);
  std::string message = loadFailure();
  EXPECT_NE(message.find("is not a usable RCCL: it lacks ncclGetVersion"),
            std::string::npos)
      << message;
}

TEST(RcclLibrary, NamesWhatItTriedAndTheVariable) {
  ScopedEnv forced("HETCCL_RCCL_LIBRARY", "/nonexistent/librccl.so.1");
  std::string message = loadFailure();
  EXPECT_EQ(message.rfind("no RCCL found (set HETCCL_RCCL_LIBRARY to its path)"
                          "; looked in:",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("/nonexistent/librccl.so.1: not found"),
            std::string::npos)
      << message;
}

TEST(RcclLibrary, NamesEveryPlaceOfTheFullSearch) {
  SKIP_UNDER_ASAN();  // the search dlopens every candidate it finds
  TempDir emptyRocm;
  ScopedEnv forced("HETCCL_RCCL_LIBRARY", nullptr);
  ScopedEnv rocmPath("ROCM_PATH", emptyRocm.path().c_str());
  for (const std::string& path : RcclLibrary::candidatePaths())
    if (path.find('/') != std::string::npos && access(path.c_str(), R_OK) == 0)
      GTEST_SKIP() << "this machine has an RCCL: " << path;
  if (void* system = dlopen("librccl.so.1", RTLD_LAZY | RTLD_LOCAL)) {
    dlclose(system);
    GTEST_SKIP() << "this machine has an RCCL on the loader's path";
  }
  std::string message = loadFailure();
  EXPECT_NE(message.find(emptyRocm.path() + "/lib/librccl.so.1: not found"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("/opt/rocm/lib/librccl.so.1: not found"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("librccl.so.1: not on the loader's search path"),
            std::string::npos)
      << message;
}

TEST(RcclLibrary, TheProcessRcclHandsItsOwnCallsBack) {
  REQUIRE_STAND_IN();
  ScopedEnv forced("HETCCL_RCCL_LIBRARY", kToolkitNccl);
  const NcclApiBackend* backend = ncclApiBackendFor(RuntimeKind::Hip);
  ASSERT_EQ(backend, &rcclBackend());
  EXPECT_STREQ(backend->name(), "RCCL");
  const NcclApiLibrary* rccl = &backend->library();
  EXPECT_EQ(&backend->library(), rccl);  // loaded once
  EXPECT_EQ(backend->loadedLibrary(), rccl);
  EXPECT_STREQ(rccl->vendor(), "RCCL");
  // A return address inside RCCL is recognised; one inside HetCCL is not.
  auto inside = reinterpret_cast<const char*>(rccl->api().AllReduce) + 16;
  EXPECT_EQ(ncclCalling(inside), &rccl->api());
  EXPECT_EQ(ncclCalling(reinterpret_cast<void*>(&::ncclAllReduce)), nullptr);
}

TEST(RcclDomain, NeedsTheProgramsHipRuntime) {
  REQUIRE_STAND_IN();
  if (dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_NOLOAD) != nullptr)
    GTEST_SKIP() << "a HIP runtime is loaded already";
  ScopedEnv forced("HETCCL_RCCL_LIBRARY", kToolkitNccl);
  auto rccl = RcclLibrary::load();
  InProcessWorld world(1);
  InProcessOob oob(world, 0);
  try {
    NcclApiComm comm(
        oob, "RCCL", [&]() -> const NcclApiLibrary& { return *rccl; }, 0,
        [](int device) {
          setCurrentDevice(gpuRuntime(RuntimeKind::Hip), device);
        });
    ADD_FAILURE() << "an RCCL communicator without a HIP runtime";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ncclUnhandledCudaError);
    EXPECT_NE(std::string(e.what()).find("no HIP runtime is loaded"),
              std::string::npos)
        << e.what();
  }
}

bool hipRuntimeMapped() {
  void* handle = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_NOLOAD);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

TEST(HipProbe, NoRuntimeLoadedMeansNoDevice) {
  if (hipRuntimeMapped()) GTEST_SKIP() << "a HIP runtime is loaded already";
  EXPECT_EQ(currentDevice(gpuRuntime(RuntimeKind::Hip)), std::nullopt);
  // Asking never loads a runtime that the program did not load.
  EXPECT_FALSE(hipRuntimeMapped());
  try {
    setCurrentDevice(gpuRuntime(RuntimeKind::Hip), 0);
    ADD_FAILURE() << "made a HIP device current without a runtime";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ncclUnhandledCudaError);
    EXPECT_NE(std::string(e.what()).find("no HIP runtime is loaded"),
              std::string::npos)
        << e.what();
  }
}

TEST(HipProbe, ForceCpuWins) {
  ScopedEnv cpu("HETCCL_FORCE_CPU", "1");
  EXPECT_EQ(currentDevice(gpuRuntime(RuntimeKind::Hip)), std::nullopt);
}

// Runs last: it loads the HIP runtime (where the machine has one, as the
// CI machine has Debian's libamdhip64-5) privately, as a Python extension
// would, and the probe must find it there and ask it.
TEST(HipProbe, FindsAPrivatelyLoadedRuntimeAndAsksIt) {
  void* hip = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
  if (hip == nullptr) GTEST_SKIP() << "no HIP runtime: " << dlerror();
  using GetInt = int (*)(int*);
  auto getCount = reinterpret_cast<GetInt>(dlsym(hip, "hipGetDeviceCount"));
  ASSERT_NE(getCount, nullptr);
  int count = 0;
  bool anyDevice = getCount(&count) == 0 && count > 0;
  std::optional<int> device = currentDevice(gpuRuntime(RuntimeKind::Hip));
  EXPECT_EQ(device.has_value(), anyDevice);
  if (anyDevice) {
    EXPECT_NO_THROW(setCurrentDevice(gpuRuntime(RuntimeKind::Hip), *device));
  } else {
    // The runtime was found and answered: its refusal, not "no runtime".
    try {
      setCurrentDevice(gpuRuntime(RuntimeKind::Hip), 0);
      ADD_FAILURE() << "made HIP device 0 current without a device";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("hipSetDevice error"),
                std::string::npos)
          << e.what();
    }
  }
  // Kept loaded: a GPU runtime's threads may outlive a dlclose.
}

}  // namespace
}  // namespace hetccl

// Devices of the emulated module (several, each thread its own current
// one, streams and events tied to the device they were made on) and the
// CurrentDevice guard that makes a communicator's device current for a
// while.
#include <gtest/gtest.h>

#include <thread>

#include "runtime/device/current_device.h"
#include "runtime/host/emulated_device_module.h"
#include "util/error.h"

namespace hetccl {
namespace {

const hetcclDeviceModuleTable& api() { return emulatedDeviceModule().api(); }

int currentDevice() {
  int device = -1;
  EXPECT_EQ(api().getDevice(&device), 0);
  return device;
}

// Each test starts and ends with device 0 current on its thread.
class EmulatedDevices : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(api().setDevice(0), 0); }
};

TEST_F(EmulatedDevices, EachThreadHasItsOwnCurrentDevice) {
  int count = 0;
  ASSERT_EQ(api().deviceCount(&count), 0);
  ASSERT_GE(count, 4);
  ASSERT_EQ(api().setDevice(3), 0);
  int other = -1;
  std::thread([&] { api().getDevice(&other); }).join();
  EXPECT_EQ(other, 0);
  EXPECT_EQ(currentDevice(), 3);
  EXPECT_NE(api().setDevice(count), 0);
  EXPECT_NE(api().setDevice(-1), 0);
  EXPECT_EQ(currentDevice(), 3);
}

TEST_F(EmulatedDevices, AReductionNeedsItsStreamsDeviceCurrent) {
  ASSERT_EQ(api().setDevice(1), 0);
  void* stream = nullptr;
  ASSERT_EQ(api().streamCreate(&stream), 0);
  float value = 1, result = 0;
  hetcclDeviceReduction reduction{};
  reduction.dst = &result;
  reduction.srcs[0] = &value;
  reduction.nsrcs = 1;
  reduction.count = 1;
  reduction.dtype = ncclFloat32;
  reduction.op = ncclSum;
  ASSERT_EQ(api().setDevice(0), 0);
  EXPECT_EQ(api().reduceAsync(&reduction, stream), 400);
  ASSERT_EQ(api().setDevice(1), 0);
  EXPECT_EQ(api().reduceAsync(&reduction, stream), 0);
  ASSERT_EQ(api().streamSynchronize(stream), 0);
  EXPECT_EQ(result, 1.0f);
  EXPECT_EQ(api().streamDestroy(stream), 0);
}

TEST_F(EmulatedDevices, AnEventIsRecordedOnlyOnAStreamOfItsDevice) {
  void* eventOf0 = nullptr;
  ASSERT_EQ(api().eventCreate(&eventOf0), 0);
  ASSERT_EQ(api().setDevice(1), 0);
  void* streamOf1 = nullptr;
  ASSERT_EQ(api().streamCreate(&streamOf1), 0);
  EXPECT_EQ(api().eventRecord(eventOf0, streamOf1), 400);
  void* eventOf1 = nullptr;
  ASSERT_EQ(api().eventCreate(&eventOf1), 0);
  ASSERT_EQ(api().setDevice(0), 0);  // the current device does not matter
  EXPECT_EQ(api().eventRecord(eventOf1, streamOf1), 0);
  EXPECT_EQ(api().eventSynchronize(eventOf1), 0);
  api().eventDestroy(eventOf0);
  api().eventDestroy(eventOf1);
  api().streamDestroy(streamOf1);
}

TEST_F(EmulatedDevices, CurrentDeviceGuardRestoresTheCallersDevice) {
  ASSERT_EQ(api().setDevice(2), 0);
  {
    CurrentDevice guard(emulatedDeviceModule(), 5);
    EXPECT_EQ(currentDevice(), 5);
  }
  EXPECT_EQ(currentDevice(), 2);
  {
    CurrentDevice same(emulatedDeviceModule(), 2);
    EXPECT_EQ(currentDevice(), 2);
  }
  EXPECT_EQ(currentDevice(), 2);
  try {
    CurrentDevice missing(emulatedDeviceModule(), 99);
    ADD_FAILURE() << "device 99 was made current";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ncclUnhandledCudaError) << e.what();
  }
  EXPECT_EQ(currentDevice(), 2);
}

}  // namespace
}  // namespace hetccl

// Device names (core/util/device_name.h): one reading for the model commands and the studies.
#include "core/util/device_name.h"

#include <gtest/gtest.h>

namespace lmk {
namespace {

TEST(DeviceNameTest, ReadsCpuCudaAndCudaN) {
  EXPECT_FALSE(read_device_name("cpu")->cuda);
  EXPECT_TRUE(read_device_name("cuda")->cuda);
  EXPECT_EQ(read_device_name("cuda")->index, -1);
  EXPECT_EQ(read_device_name("cuda:0")->index, 0);
  EXPECT_EQ(read_device_name("cuda:7")->index, 7);
  EXPECT_EQ(read_device_name("cuda:12")->index, 12);
}

// What std::stoi lets through (a sign, leading space, trailing text) is no device name.
TEST(DeviceNameTest, RefusesWhatIsNotExactlyOne) {
  for (const char* bad : {"", "gpu", "CPU", "cuda:", "cuda:x", "cuda:-1", "cuda:+1", "cuda: 1",
                          "cuda:1 ", "cuda:0x", "cudax", "cuda0", " cuda", "cuda:1234567890"})
    EXPECT_FALSE(read_device_name(bad).has_value()) << "'" << bad << "'";
  EXPECT_EQ(bad_device_message("gpu"), "'gpu' is not a device (cpu, cuda or cuda:N)");
}

}  // namespace
}  // namespace lmk

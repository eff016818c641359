#include "core/eval/encode.h"

#include <gtest/gtest.h>

#include <ATen/Context.h>

#include "core/util/error.h"

namespace lmk {
namespace {

TEST(DeviceTest, ParsesCpuAndRejectsWhatIsNotADevice) {
  EXPECT_TRUE(parse_device("cpu").is_cpu());
  for (const char* bad : {"", "gpu", "cuda:", "cuda:x", "cuda:-1", "cuda:0x", "cudax"}) {
    try {
      parse_device(bad);
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--device"), std::string::npos) << bad;
    }
  }
}

TEST(DeviceTest, CudaNeedsALibTorchBuiltWithIt) {
  if (at::hasCUDA()) {
    EXPECT_TRUE(parse_device("cuda:0").is_cuda());
    EXPECT_EQ(parse_device("cuda:0").index(), 0);
    return;
  }
  try {
    parse_device("cuda:1");
    ADD_FAILURE() << "no CUDA here";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lmk

// The host's memory, without LibTorch (defined in runtime/device.cpp).
#pragma once

#include <cstdint>

namespace ts {

// The machine's physical memory in bytes (0 when unknown): what the CPU "device" holds.
int64_t systemMemoryBytes();
// The memory a new allocation can actually get, in bytes (0 when unknown): the kernel's
// MemAvailable, lowered by this process's cgroup limit (v2 memory.max less memory.current, or
// v1's limit less its usage) where one is set.
int64_t availableMemoryBytes();

}  // namespace ts

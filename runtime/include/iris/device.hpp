// The device primitives of the target being compiled for (see target.hpp): the
// CPU emulation's, or the GPU's (NVIDIA or AMD). Both have the same names and
// signatures, and share what is the same everywhere (device_core.hpp).
#pragma once

#include "iris/target.hpp"

#if IRIS_GPU
#include "iris/device_gpu.hpp"
#else
#include "iris/device_cpu.hpp"
#endif

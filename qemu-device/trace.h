#include "trace/trace-hw_qgpu.h"

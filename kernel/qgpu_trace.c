// SPDX-License-Identifier: GPL-2.0
/* qgpu: the tracepoints' definitions (the events are in qgpu_trace.h). */
#define CREATE_TRACE_POINTS
#include "qgpu_trace.h"

// Found through -I; includes a header of its own, which the dependency file
// must list too.
#include "detail/found_detail.h"

__device__ inline int found(int x) { return detail_offset + x; }

// Parses only with the flags of compile_commands.json (given with -p): the
// include directory and the macro come from there.
#include "cc_only.h"

__device__ inline int cc_value() { return CC_VALUE + cc_only; }

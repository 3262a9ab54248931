// Included by found.hip.
constexpr int detail_offset = 1;

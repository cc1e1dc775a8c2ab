/* The layout pins compiled as C++17 (the same file as the C11 test). */
#include "abi_layout_test.c"

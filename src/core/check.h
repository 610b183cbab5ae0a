// CLOVER_CHECK / CLOVER_DCHECK: programmer-error assertions, never reachable from input.
#pragma once

#include <cstdio>
#include <cstdlib>

#define CLOVER_CHECK(cond)                                                              \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: CLOVER_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)

#ifdef NDEBUG
#define CLOVER_DCHECK(cond) \
  do {                      \
  } while (0 && (cond))
#else
#define CLOVER_DCHECK(cond) CLOVER_CHECK(cond)
#endif

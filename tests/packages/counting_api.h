/*
 * Extra C exports of the "counting" test package (resolve them with dlsym).
 * The counters are process-wide (all containers of the package) and count
 * executions of launched work, i.e. inside the package:
 *   max_inflight  most executions that ever overlapped since the last reset
 *   completed     executions finished since the last reset
 *   reset         zeroes both (call it while no work is running)
 */
#ifndef AOTRUN_TEST_COUNTING_API_H_
#define AOTRUN_TEST_COUNTING_API_H_

#include <stdint.h>

typedef int64_t (*aotrun_test_counting_max_inflight_fn)(void);
typedef int64_t (*aotrun_test_counting_completed_fn)(void);
typedef void (*aotrun_test_counting_reset_fn)(void);

#define AOTRUN_TEST_COUNTING_SYM_MAX_INFLIGHT "aotrun_test_counting_max_inflight"
#define AOTRUN_TEST_COUNTING_SYM_COMPLETED "aotrun_test_counting_completed"
#define AOTRUN_TEST_COUNTING_SYM_RESET "aotrun_test_counting_reset"

#endif /* AOTRUN_TEST_COUNTING_API_H_ */

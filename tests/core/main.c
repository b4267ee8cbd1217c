// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - runs the core tests (tests/core/test_*.c) in order.
 *
 * Usage: test_core [substring-of-test-name]
 */
#define _GNU_SOURCE
#include "fixtures.h"

int th_failures, th_passed, th_failed;

/* Every test, in the order it runs. */
#define TESTS(X) \
	X(version_info) \
	X(capabilities) \
	X(capabilities_struct_rules) \
	X(device_config) \
	X(backing_files) \
	X(alloc_basic) \
	X(fragmentation_oom) \
	X(alloc_random) \
	X(memcpy_memset) \
	X(operand_validation) \
	X(stream_ordering) \
	X(cq_overflow) \
	X(parallel_streams) \
	X(priority) \
	X(events) \
	X(event_wait_next) \
	X(query_cancel) \
	X(sync) \
	X(watchdog) \
	X(error_recovery) \
	X(stream_continue) \
	X(close_in_flight) \
	X(ctx_reset) \
	X(notifications) \
	X(device_lost) \
	X(compute_smoke) \
	X(relu_grad) \
	X(train_ops) \
	X(strided_ops) \
	X(strided_chunks) \
	X(strided_refusals) \
	X(strided_doorbell) \
	X(matmul_simd_levels) \
	X(conv_block_checks) \
	X(conv_refused_block_touches_nothing) \
	X(conv_runs_and_chunks) \
	X(conv_batch1_is_shared_out) \
	X(conv_bias_relu_is_conv_add_relu) \
	X(conv_bias_operand_checks) \
	X(pool_block_checks) \
	X(pool_refused_block_touches_nothing) \
	X(pool_runs_and_chunks) \
	X(batch_norm_extents) \
	X(batch_norm_runs_and_chunks) \
	X(fill_block_checks) \
	X(index_out_of_range_touches_nothing) \
	X(index_add_order_and_chunks) \
	X(aipp_block_checks) \
	X(aipp_bad_config_touches_nothing) \
	X(aipp_runs_and_chunks) \
	X(adam_block_and_extents) \
	X(adam_runs_and_chunks) \
	X(sgd_momentum_block_extents_and_chunks) \
	X(jpegd_samples) \
	X(jpegd_truncated) \
	X(jpegd_corrupt_bytes) \
	X(jpegd_bad_headers) \
	X(vpc_block_checks) \
	X(vpc_runs_inside_exact_buffers) \
	X(vpc_mutated_blocks) \
	X(jpege_roundtrip) \
	X(jpege_refused) \
	X(jpege_noise_bound) \
	X(pngd_samples) \
	X(pngd_truncated) \
	X(pngd_corrupt_bytes) \
	X(pngd_bad_headers) \
	X(misaligned_operands) \
	X(mmap) \
	X(malformed) \
	X(blocking_waits) \
	X(alloc_failures) \
	X(stress) \
	X(mgmt_list_info) \
	X(mgmt_privilege) \
	X(mgmt_ecc_reset) \
	X(mgmt_hang) \
	X(mgmt_lost_throttle) \
	X(mgmt_events) \
	X(mgmt_reset_in_flight) \
	X(ioctl_copy_rules) \
	X(context_limits) \
	X(lock_order) \
	X(map_holds) \
	X(interruptible_waits) \
	X(lock_assertions) \
	X(polled_rings) \
	X(polled_need_wakeup) \
	X(polled_doorbell_clears_need_wakeup) \
	X(polled_doorbell_only_when_asleep) \
	X(polled_doorbell_wakes_one) \
	X(polled_idle_time_rule) \
	X(polled_idle_time_follows_the_host) \
	X(polled_faults) \
	X(polled_short_tasks_spread) \
	X(polled_take_in_depth) \
	X(graphs) \
	X(trace_ring) \
	X(trace_take_ins) \
	X(trace_owners)

#define DECLARE(name) void test_##name(void);
TESTS(DECLARE)

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;

#define RUN(name) th_run(#name, test_##name, filter);
	TESTS(RUN)
	printf("%d passed, %d failed\n", th_passed, th_failed);
	return th_failed ? 1 : 0;
}

/*
 * Layout pins for every public struct of aotrun.h and package_abi.h (and the
 * DLPack structs they embed), compiled as C11 (this file) and as C++17
 * (abi_layout_test.cpp includes it), against the current headers and against
 * each frozen copy in compat/abi/<version>/.
 *
 * Two independent pins per field:
 *   - the offset the C layout rules give for the declared field order and
 *     types (portable: holds on any ABI, not just x86-64), and
 *   - on LP64 targets, the literal byte offset as released.
 * A failure is an ABI break: the fix is to restore the layout, never to
 * update the pin (new fields go at the end, in a new version).
 *
 * At run time it compares every *_STRUCT_SIZE constant with sizeof, checks
 * enum values and the package symbol names, prints what it checked and
 * exits non-zero on a mismatch.
 */
#include <aotrun/aotrun.h>
#include <aotrun/package_abi.h>

#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
#define PIN_ALIGNOF(T) alignof(T)
#define PIN_ASSERT(c, m) static_assert(c, m)
#else
#define PIN_ALIGNOF(T) _Alignof(T)
#define PIN_ASSERT(c, m) _Static_assert(c, m)
#endif

/* Offset of a field of type T placed right after a field of type P at `prev`. */
#define PIN_ROUND(n, a) (((n) + (a)-1) / (a) * (a))
#define PIN_AFTER(prev, P, T) PIN_ROUND((size_t)(prev) + sizeof(P), PIN_ALIGNOF(T))

#define PIN(S, field, expected) PIN_ASSERT(offsetof(S, field) == (expected), #S "." #field " moved")
#define PIN_SIZE(S, expected) PIN_ASSERT(sizeof(S) == (expected), "sizeof(" #S ") changed")

#if defined(__LP64__) || defined(_LP64)
#define PIN_LP64(S, field, off) PIN_ASSERT(offsetof(S, field) == (off), #S "." #field " moved (LP64)")
#define PIN_LP64_SIZE(S, n) PIN_ASSERT(sizeof(S) == (n), "sizeof(" #S ") changed (LP64)")
#else
#define PIN_LP64(S, field, off)
#define PIN_LP64_SIZE(S, n)
#endif

typedef const char* cstr;
typedef const int64_t* cshape;
typedef void* ptr;
typedef void (*fnptr)(void);

/* ---------------------------------------------------------------------------
 * DLPack (DLPACK_VERSION 60): embedded by value in our structs.
 * ------------------------------------------------------------------------- */
PIN(DLDevice, device_type, 0);
PIN(DLDevice, device_id, PIN_AFTER(0, DLDeviceType, int32_t));
PIN_SIZE(DLDevice, 8);
PIN(DLDataType, code, 0);
PIN(DLDataType, bits, 1);
PIN(DLDataType, lanes, 2);
PIN_SIZE(DLDataType, 4);

#define T_data 0
#define T_device PIN_AFTER(T_data, ptr, DLDevice)
#define T_ndim PIN_AFTER(T_device, DLDevice, int32_t)
#define T_dtype PIN_AFTER(T_ndim, int32_t, DLDataType)
#define T_shape PIN_AFTER(T_dtype, DLDataType, ptr)
#define T_strides PIN_AFTER(T_shape, ptr, ptr)
#define T_byte_offset PIN_AFTER(T_strides, ptr, uint64_t)
PIN(DLTensor, data, T_data);
PIN(DLTensor, device, T_device);
PIN(DLTensor, ndim, T_ndim);
PIN(DLTensor, dtype, T_dtype);
PIN(DLTensor, shape, T_shape);
PIN(DLTensor, strides, T_strides);
PIN(DLTensor, byte_offset, T_byte_offset);
PIN_LP64(DLTensor, byte_offset, 40);
PIN_LP64_SIZE(DLTensor, 48);
PIN(DLManagedTensor, dl_tensor, 0);
PIN(DLManagedTensor, manager_ctx, PIN_AFTER(0, DLTensor, ptr));
PIN_LP64(DLManagedTensor, deleter, 56);
PIN_LP64_SIZE(DLManagedTensor, 64);

/* ---------------------------------------------------------------------------
 * Host API (aotrun.h), 1.0
 * ------------------------------------------------------------------------- */
#define PI_name PIN_AFTER(0, size_t, cstr)
#define PI_path PIN_AFTER(PI_name, cstr, cstr)
#define PI_format PIN_AFTER(PI_path, cstr, cstr)
#define PI_abi_version PIN_AFTER(PI_format, cstr, uint32_t)
#define PI_device PIN_AFTER(PI_abi_version, uint32_t, DLDevice)
#define PI_num_inputs PIN_AFTER(PI_device, DLDevice, size_t)
#define PI_num_outputs PIN_AFTER(PI_num_inputs, size_t, size_t)
#define PI_num_constants PIN_AFTER(PI_num_outputs, size_t, size_t)
#define PI_constant_bytes PIN_AFTER(PI_num_constants, size_t, uint64_t)
#define PI_num_symbols PIN_AFTER(PI_constant_bytes, uint64_t, size_t)
#define PI_hashes_verified PIN_AFTER(PI_num_symbols, size_t, int)
#define PI_open_ns PIN_AFTER(PI_hashes_verified, int, uint64_t)
#define PI_verify_ns PIN_AFTER(PI_open_ns, uint64_t, uint64_t)
#define PI_dlopen_ns PIN_AFTER(PI_verify_ns, uint64_t, uint64_t)
#define PI_weights_ns PIN_AFTER(PI_dlopen_ns, uint64_t, uint64_t)
#define PI_metadata_ns PIN_AFTER(PI_weights_ns, uint64_t, uint64_t)
PIN(aotrun_package_info, struct_size, 0);
PIN(aotrun_package_info, name, PI_name);
PIN(aotrun_package_info, path, PI_path);
PIN(aotrun_package_info, format, PI_format);
PIN(aotrun_package_info, abi_version, PI_abi_version);
PIN(aotrun_package_info, device, PI_device);
PIN(aotrun_package_info, num_inputs, PI_num_inputs);
PIN(aotrun_package_info, num_outputs, PI_num_outputs);
PIN(aotrun_package_info, num_constants, PI_num_constants);
PIN(aotrun_package_info, constant_bytes, PI_constant_bytes);
PIN(aotrun_package_info, num_symbols, PI_num_symbols);
PIN(aotrun_package_info, hashes_verified, PI_hashes_verified);
PIN(aotrun_package_info, open_ns, PI_open_ns);
PIN(aotrun_package_info, verify_ns, PI_verify_ns);
PIN(aotrun_package_info, dlopen_ns, PI_dlopen_ns);
PIN(aotrun_package_info, weights_ns, PI_weights_ns);
PIN(aotrun_package_info, metadata_ns, PI_metadata_ns);
PIN_SIZE(aotrun_package_info, PI_metadata_ns + sizeof(uint64_t));
PIN_LP64(aotrun_package_info, abi_version, 32);
PIN_LP64(aotrun_package_info, device, 36);
PIN_LP64(aotrun_package_info, num_inputs, 48);
PIN_LP64(aotrun_package_info, hashes_verified, 88);
PIN_LP64(aotrun_package_info, metadata_ns, 128);
PIN_LP64_SIZE(aotrun_package_info, 136);

#define TI_name PIN_AFTER(0, size_t, cstr)
#define TI_dtype PIN_AFTER(TI_name, cstr, DLDataType)
#define TI_ndim PIN_AFTER(TI_dtype, DLDataType, int32_t)
#define TI_shape PIN_AFTER(TI_ndim, int32_t, cshape)
PIN(aotrun_tensor_info, struct_size, 0);
PIN(aotrun_tensor_info, name, TI_name);
PIN(aotrun_tensor_info, dtype, TI_dtype);
PIN(aotrun_tensor_info, ndim, TI_ndim);
PIN(aotrun_tensor_info, shape, TI_shape);
PIN_SIZE(aotrun_tensor_info, TI_shape + sizeof(cshape));
PIN_LP64(aotrun_tensor_info, ndim, 20);
PIN_LP64_SIZE(aotrun_tensor_info, 32);

#define SI_name PIN_AFTER(0, size_t, cstr)
#define SI_required PIN_AFTER(SI_name, cstr, int)
#define SI_found PIN_AFTER(SI_required, int, int)
#define SI_since PIN_AFTER(SI_found, int, uint32_t)
PIN(aotrun_symbol_info, struct_size, 0);
PIN(aotrun_symbol_info, name, SI_name);
PIN(aotrun_symbol_info, required, SI_required);
PIN(aotrun_symbol_info, found, SI_found);
PIN(aotrun_symbol_info, since, SI_since);
PIN_SIZE(aotrun_symbol_info, PIN_ROUND(SI_since + sizeof(uint32_t), PIN_ALIGNOF(aotrun_symbol_info)));
PIN_LP64(aotrun_symbol_info, since, 24);
PIN_LP64_SIZE(aotrun_symbol_info, 32);

#define RS_requested_mode PIN_AFTER(0, size_t, aotrun_mode)
#define RS_effective_mode PIN_AFTER(RS_requested_mode, aotrun_mode, aotrun_mode)
#define RS_num_models PIN_AFTER(RS_effective_mode, aotrun_mode, int32_t)
#define RS_max_inflight PIN_AFTER(RS_num_models, int32_t, int32_t)
#define RS_fallback_reason PIN_AFTER(RS_max_inflight, int32_t, cstr)
#define RS_runs PIN_AFTER(RS_fallback_reason, cstr, uint64_t)
/* From runs on, consecutive uint64_t counters. */
#define RS_U64(i) (RS_runs + (size_t)(i) * sizeof(uint64_t))
PIN(aotrun_runner_stats, struct_size, 0);
PIN(aotrun_runner_stats, requested_mode, RS_requested_mode);
PIN(aotrun_runner_stats, effective_mode, RS_effective_mode);
PIN(aotrun_runner_stats, num_models, RS_num_models);
PIN(aotrun_runner_stats, max_inflight, RS_max_inflight);
PIN(aotrun_runner_stats, fallback_reason, RS_fallback_reason);
PIN(aotrun_runner_stats, runs, RS_U64(0));
PIN(aotrun_runner_stats, failures, RS_U64(1));
PIN(aotrun_runner_stats, fallback_runs, RS_U64(2));
PIN(aotrun_runner_stats, graph_captures, RS_U64(3));
PIN(aotrun_runner_stats, graph_replays, RS_U64(4));
PIN(aotrun_runner_stats, graph_warmups, RS_U64(5));
PIN(aotrun_runner_stats, graph_capture_ns, RS_U64(6));
PIN(aotrun_runner_stats, graph_pool_bytes, RS_U64(7));
PIN(aotrun_runner_stats, graphs_cached, RS_U64(8));
PIN(aotrun_runner_stats, eager_cache_full, RS_U64(9));
PIN(aotrun_runner_stats, eager_frozen, RS_U64(10));
PIN(aotrun_runner_stats, eager_capture_failed, RS_U64(11));
PIN(aotrun_runner_stats, eager_caller_capturing, RS_U64(12));
PIN(aotrun_runner_stats, inflight, RS_U64(13));
PIN(aotrun_runner_stats, peak_inflight, RS_U64(14));
PIN(aotrun_runner_stats, async_submitted, RS_U64(15));
PIN(aotrun_runner_stats, async_completed, RS_U64(16));
PIN(aotrun_runner_stats, async_failed, RS_U64(17));
PIN(aotrun_runner_stats, submit_blocked_ns, RS_U64(18));
PIN(aotrun_runner_stats, would_block, RS_U64(19));
PIN_LP64(aotrun_runner_stats, fallback_reason, 24);
PIN_LP64(aotrun_runner_stats, would_block, 184);
PIN_SIZE(aotrun_runner_stats, RS_U64(20));
PIN_LP64_SIZE(aotrun_runner_stats, 192);
#ifdef AOTRUN_API_VERSION_1_2
/* aotrun_constants_state (1.2) */
#define CS_active PIN_AFTER(0, size_t, uint64_t)
#define CS_has_inactive PIN_AFTER(CS_active, uint64_t, int)
#define CS_inactive PIN_AFTER(CS_has_inactive, int, uint64_t)
#define CS_updates PIN_AFTER(CS_inactive, uint64_t, uint64_t)
#define CS_swaps PIN_AFTER(CS_updates, uint64_t, uint64_t)
#define CS_recaptures PIN_AFTER(CS_swaps, uint64_t, uint64_t)
PIN(aotrun_constants_state, struct_size, 0);
PIN(aotrun_constants_state, active_generation, CS_active);
PIN(aotrun_constants_state, has_inactive, CS_has_inactive);
PIN(aotrun_constants_state, inactive_generation, CS_inactive);
PIN(aotrun_constants_state, updates, CS_updates);
PIN(aotrun_constants_state, swaps, CS_swaps);
PIN(aotrun_constants_state, graph_recaptures, CS_recaptures);
PIN_SIZE(aotrun_constants_state, CS_recaptures + sizeof(uint64_t));
PIN_LP64(aotrun_constants_state, inactive_generation, 24);
PIN_LP64_SIZE(aotrun_constants_state, 56);

/* aotrun_constant_info (1.2) */
#define CI_name PIN_AFTER(0, size_t, cstr)
#define CI_original_name PIN_AFTER(CI_name, cstr, cstr)
#define CI_dtype PIN_AFTER(CI_original_name, cstr, DLDataType)
#define CI_ndim PIN_AFTER(CI_dtype, DLDataType, int32_t)
#define CI_shape PIN_AFTER(CI_ndim, int32_t, cshape)
#define CI_nbytes PIN_AFTER(CI_shape, cshape, uint64_t)
#define CI_folded PIN_AFTER(CI_nbytes, uint64_t, int)
PIN(aotrun_constant_info, struct_size, 0);
PIN(aotrun_constant_info, name, CI_name);
PIN(aotrun_constant_info, original_name, CI_original_name);
PIN(aotrun_constant_info, dtype, CI_dtype);
PIN(aotrun_constant_info, ndim, CI_ndim);
PIN(aotrun_constant_info, shape, CI_shape);
PIN(aotrun_constant_info, nbytes, CI_nbytes);
PIN(aotrun_constant_info, folded, CI_folded);
PIN_SIZE(aotrun_constant_info, PIN_ROUND(CI_folded + sizeof(int), PIN_ALIGNOF(size_t)));
PIN_LP64(aotrun_constant_info, dtype, 24);
PIN_LP64(aotrun_constant_info, shape, 32);
PIN_LP64(aotrun_constant_info, folded, 48);
PIN_LP64_SIZE(aotrun_constant_info, 56);

/* aotrun_named_tensor (1.2) */
PIN(aotrun_named_tensor, name, 0);
PIN(aotrun_named_tensor, tensor, PIN_AFTER(0, cstr, DLTensor));
PIN_LP64_SIZE(aotrun_named_tensor, 56);
#endif

/* The dlopen function table: every slot, in order. Slots of a released
 * version never move; a new version appends after the previous one's last
 * slot (1.0: runner_run_on_cuda_stream). */
#define API_SLOT(i) (PIN_ROUND(sizeof(uint32_t), PIN_ALIGNOF(fnptr)) + (size_t)(i) * sizeof(fnptr))
PIN(aotrun_api, version, 0);
PIN(aotrun_api, version_number, API_SLOT(0));
PIN(aotrun_api, version_string, API_SLOT(1));
PIN(aotrun_api, status_code, API_SLOT(2));
PIN(aotrun_api, status_message, API_SLOT(3));
PIN(aotrun_api, status_free, API_SLOT(4));
PIN(aotrun_api, code_name, API_SLOT(5));
PIN(aotrun_api, set_log_callback, API_SLOT(6));
PIN(aotrun_api, set_log_level, API_SLOT(7));
PIN(aotrun_api, get_log_level, API_SLOT(8));
PIN(aotrun_api, package_options_create, API_SLOT(9));
PIN(aotrun_api, package_options_free, API_SLOT(10));
PIN(aotrun_api, package_options_set_verify_hashes, API_SLOT(11));
PIN(aotrun_api, package_open, API_SLOT(12));
PIN(aotrun_api, package_close, API_SLOT(13));
PIN(aotrun_api, mode_name, API_SLOT(14));
PIN(aotrun_api, package_get_info, API_SLOT(15));
PIN(aotrun_api, package_get_input, API_SLOT(16));
PIN(aotrun_api, package_get_output, API_SLOT(17));
PIN(aotrun_api, package_get_symbol, API_SLOT(18));
PIN(aotrun_api, package_mode_available, API_SLOT(19));
PIN(aotrun_api, runner_options_create, API_SLOT(20));
PIN(aotrun_api, runner_options_free, API_SLOT(21));
PIN(aotrun_api, runner_options_set_mode, API_SLOT(22));
PIN(aotrun_api, runner_options_set_num_models, API_SLOT(23));
PIN(aotrun_api, runner_options_set_strict, API_SLOT(24));
PIN(aotrun_api, runner_options_set_device, API_SLOT(25));
PIN(aotrun_api, runner_create, API_SLOT(26));
PIN(aotrun_api, runner_destroy, API_SLOT(27));
PIN(aotrun_api, runner_mode, API_SLOT(28));
PIN(aotrun_api, runner_get_output_shapes, API_SLOT(29));
PIN(aotrun_api, runner_run, API_SLOT(30));
PIN(aotrun_api, runner_run_alloc, API_SLOT(31));
PIN(aotrun_api, runner_get_stats, API_SLOT(32));
PIN(aotrun_api, runner_options_set_graph_warmup_runs, API_SLOT(33));
PIN(aotrun_api, runner_options_set_graph_cache_limit, API_SLOT(34));
PIN(aotrun_api, runner_options_set_graph_frozen, API_SLOT(35));
PIN(aotrun_api, runner_options_add_capture_shapes, API_SLOT(36));
PIN(aotrun_api, runner_options_set_max_inflight, API_SLOT(37));
PIN(aotrun_api, runner_evict_graphs, API_SLOT(38));
PIN(aotrun_api, runner_freeze_graphs, API_SLOT(39));
PIN(aotrun_api, runner_run_async, API_SLOT(40));
PIN(aotrun_api, runner_try_run_async, API_SLOT(41));
PIN(aotrun_api, runner_run_async_timeout, API_SLOT(42));
PIN(aotrun_api, runner_wait_all, API_SLOT(43));
PIN(aotrun_api, event_is_ready, API_SLOT(44));
PIN(aotrun_api, event_wait, API_SLOT(45));
PIN(aotrun_api, event_wait_timeout, API_SLOT(46));
PIN(aotrun_api, event_set_callback, API_SLOT(47));
PIN(aotrun_api, event_free, API_SLOT(48));
PIN(aotrun_api, stream_create, API_SLOT(49));
PIN(aotrun_api, stream_free, API_SLOT(50));
PIN(aotrun_api, stream_synchronize, API_SLOT(51));
PIN(aotrun_api, stream_begin_capture, API_SLOT(52));
PIN(aotrun_api, stream_end_capture, API_SLOT(53));
PIN(aotrun_api, stream_is_capturing, API_SLOT(54));
PIN(aotrun_api, graph_launch, API_SLOT(55));
PIN(aotrun_api, graph_num_nodes, API_SLOT(56));
PIN(aotrun_api, graph_free, API_SLOT(57));
PIN(aotrun_api, runner_run_on_stream, API_SLOT(58));
PIN(aotrun_api, package_options_set_expected_sha256, API_SLOT(59));
PIN(aotrun_api, package_options_set_allow_untrusted_files, API_SLOT(60));
PIN(aotrun_api, runner_run_on_cuda_stream, API_SLOT(61)); /* last slot of 1.0 */
#ifdef AOTRUN_API_VERSION_1_1
PIN(aotrun_api, package_options_set_pt2_model, API_SLOT(62));
PIN(aotrun_api, package_options_set_libtorch, API_SLOT(63)); /* last slot of 1.1 */
#endif
#ifdef AOTRUN_API_VERSION_1_2
PIN(aotrun_api, package_get_constant, API_SLOT(64));
PIN(aotrun_api, runner_update_constants, API_SLOT(65));
PIN(aotrun_api, runner_update_constants_from_file, API_SLOT(66));
PIN(aotrun_api, runner_swap_constants, API_SLOT(67));
PIN(aotrun_api, runner_free_inactive_constants, API_SLOT(68));
PIN(aotrun_api, runner_get_constants_state, API_SLOT(69)); /* last slot of 1.2 */
#endif
#ifdef AOTRUN_API_VERSION_1_3
PIN(aotrun_api, package_options_set_provider, API_SLOT(70));
PIN(aotrun_api, package_get_provider, API_SLOT(71));
PIN(aotrun_api, package_options_set_pt2_pad_batch, API_SLOT(72));
PIN(aotrun_api, package_get_input_model_name, API_SLOT(73));
PIN(aotrun_api, package_get_output_model_name, API_SLOT(74));
PIN(aotrun_api, package_options_set_pt2_above_compiled_max, API_SLOT(75));
PIN(aotrun_api, package_preview_provider, API_SLOT(76)); /* last slot of 1.3 */
PIN_SIZE(aotrun_api, API_SLOT(77));                      /* grows only by appending */
#elif defined(AOTRUN_API_VERSION_1_2)
PIN_SIZE(aotrun_api, API_SLOT(70));
#elif defined(AOTRUN_API_VERSION_1_1)
PIN_SIZE(aotrun_api, API_SLOT(64));
#else
PIN_SIZE(aotrun_api, API_SLOT(62));
#endif
PIN_LP64(aotrun_api, runner_run_on_cuda_stream, 496);

/* Enums travel as int. */
PIN_ASSERT(sizeof(aotrun_code) == sizeof(int), "aotrun_code is not int-sized");
PIN_ASSERT(sizeof(aotrun_mode) == sizeof(int), "aotrun_mode is not int-sized");
PIN_ASSERT(sizeof(aotrun_log_level) == sizeof(int), "aotrun_log_level is not int-sized");
PIN_ASSERT(sizeof(aotrun_stream_kind) == sizeof(int), "aotrun_stream_kind is not int-sized");
PIN_ASSERT(sizeof(aotrun_capture_mode) == sizeof(int), "aotrun_capture_mode is not int-sized");

/* ---------------------------------------------------------------------------
 * Package ABI (package_abi.h), 1.0 layouts (1.1 added no field)
 * ------------------------------------------------------------------------- */
#define H_host_ctx PIN_AFTER(0, size_t, ptr)
#define H_SLOT(i) (H_host_ctx + sizeof(ptr) + (size_t)(i) * sizeof(fnptr))
PIN(aotrun_pkg_host, struct_size, 0);
PIN(aotrun_pkg_host, host_ctx, H_host_ctx);
PIN(aotrun_pkg_host, log_enabled, H_SLOT(0));
PIN(aotrun_pkg_host, log, H_SLOT(1));
PIN(aotrun_pkg_host, alloc, H_SLOT(2));
PIN(aotrun_pkg_host, free, H_SLOT(3));
PIN(aotrun_pkg_host, launch, H_SLOT(4));
PIN(aotrun_pkg_host, event_create, H_SLOT(5));
PIN(aotrun_pkg_host, event_destroy, H_SLOT(6));
PIN(aotrun_pkg_host, event_record, H_SLOT(7));
PIN(aotrun_pkg_host, event_query, H_SLOT(8));
PIN(aotrun_pkg_host, event_synchronize, H_SLOT(9));
PIN(aotrun_pkg_host, stream_synchronize, H_SLOT(10));
PIN(aotrun_pkg_host, stream_is_capturing, H_SLOT(11));
PIN_SIZE(aotrun_pkg_host, H_SLOT(12));
PIN_LP64_SIZE(aotrun_pkg_host, 112);

PIN(aotrun_pkg_constant, name, 0);
PIN(aotrun_pkg_constant, tensor, PIN_AFTER(0, cstr, DLTensor));
PIN_LP64_SIZE(aotrun_pkg_constant, 56);

#define CA_num_models PIN_AFTER(0, size_t, int32_t)
#define CA_device PIN_AFTER(CA_num_models, int32_t, DLDevice)
#define CA_host PIN_AFTER(CA_device, DLDevice, ptr)
#define CA_constants PIN_AFTER(CA_host, ptr, ptr)
#define CA_num_constants PIN_AFTER(CA_constants, ptr, size_t)
#define CA_package_dir PIN_AFTER(CA_num_constants, size_t, cstr)
PIN(aotrun_pkg_create_args, struct_size, 0);
PIN(aotrun_pkg_create_args, num_models, CA_num_models);
PIN(aotrun_pkg_create_args, device, CA_device);
PIN(aotrun_pkg_create_args, host, CA_host);
PIN(aotrun_pkg_create_args, constants, CA_constants);
PIN(aotrun_pkg_create_args, num_constants, CA_num_constants);
PIN(aotrun_pkg_create_args, package_dir, CA_package_dir);
PIN_SIZE(aotrun_pkg_create_args, CA_package_dir + sizeof(cstr));
PIN_LP64(aotrun_pkg_create_args, device, 12);
PIN_LP64(aotrun_pkg_create_args, host, 24);
PIN_LP64_SIZE(aotrun_pkg_create_args, 56);

#define TS_name PIN_AFTER(0, size_t, cstr)
#define TS_dtype PIN_AFTER(TS_name, cstr, DLDataType)
#define TS_ndim PIN_AFTER(TS_dtype, DLDataType, int32_t)
#define TS_shape PIN_AFTER(TS_ndim, int32_t, cshape)
PIN(aotrun_pkg_tensor_spec, struct_size, 0);
PIN(aotrun_pkg_tensor_spec, name, TS_name);
PIN(aotrun_pkg_tensor_spec, dtype, TS_dtype);
PIN(aotrun_pkg_tensor_spec, ndim, TS_ndim);
PIN(aotrun_pkg_tensor_spec, shape, TS_shape);
PIN_SIZE(aotrun_pkg_tensor_spec, TS_shape + sizeof(cshape));
PIN_LP64_SIZE(aotrun_pkg_tensor_spec, 32);

#define SA_inputs PIN_AFTER(0, size_t, ptr)
#define SA_num_inputs PIN_AFTER(SA_inputs, ptr, size_t)
#define SA_output_shapes PIN_AFTER(SA_num_inputs, size_t, ptr)
#define SA_capacity PIN_AFTER(SA_output_shapes, ptr, size_t)
PIN(aotrun_pkg_shape_args, struct_size, 0);
PIN(aotrun_pkg_shape_args, inputs, SA_inputs);
PIN(aotrun_pkg_shape_args, num_inputs, SA_num_inputs);
PIN(aotrun_pkg_shape_args, output_shapes, SA_output_shapes);
PIN(aotrun_pkg_shape_args, output_shapes_capacity, SA_capacity);
PIN_SIZE(aotrun_pkg_shape_args, SA_capacity + sizeof(size_t));
PIN_LP64_SIZE(aotrun_pkg_shape_args, 40);

#define RA_inputs PIN_AFTER(0, size_t, ptr)
#define RA_num_inputs PIN_AFTER(RA_inputs, ptr, size_t)
#define RA_outputs PIN_AFTER(RA_num_inputs, size_t, ptr)
#define RA_num_outputs PIN_AFTER(RA_outputs, ptr, size_t)
#define RA_stream PIN_AFTER(RA_num_outputs, size_t, ptr)
PIN(aotrun_pkg_run_args, struct_size, 0);
PIN(aotrun_pkg_run_args, inputs, RA_inputs);
PIN(aotrun_pkg_run_args, num_inputs, RA_num_inputs);
PIN(aotrun_pkg_run_args, outputs, RA_outputs);
PIN(aotrun_pkg_run_args, num_outputs, RA_num_outputs);
PIN(aotrun_pkg_run_args, stream, RA_stream);
PIN_SIZE(aotrun_pkg_run_args, RA_stream + sizeof(ptr));
PIN_LP64_SIZE(aotrun_pkg_run_args, 48);

/* ---------------------------------------------------------------------------
 * Run-time report
 * ------------------------------------------------------------------------- */

static int g_failures;

static void expect_size(const char* what, size_t constant, size_t actual) {
  int ok = constant == actual;
  printf("  %-40s constant %3zu  sizeof %3zu  %s\n", what, constant, actual, ok ? "ok" : "MISMATCH");
  if (!ok) ++g_failures;
}

static void expect_int(const char* what, long long actual, long long expected) {
  if (actual == expected) return;
  printf("  %s is %lld, released as %lld  MISMATCH\n", what, actual, expected);
  ++g_failures;
}

static void expect_str(const char* what, const char* actual, const char* expected) {
  if (strcmp(actual, expected) == 0) return;
  printf("  %s is \"%s\", released as \"%s\"  MISMATCH\n", what, actual, expected);
  ++g_failures;
}

int main(void) {
#ifdef __cplusplus
  const char* lang = "C++";
#else
  const char* lang = "C";
#endif
  printf("abi_layout_test (%s, package ABI %d.%d, host API %d.%d)\n", lang, AOTRUN_PKG_ABI_MAJOR, AOTRUN_PKG_ABI_MINOR,
         AOTRUN_VERSION_MAJOR, AOTRUN_VERSION_MINOR);
  printf("struct sizes:\n");
  expect_size("AOTRUN_PACKAGE_INFO_STRUCT_SIZE_1_0", AOTRUN_PACKAGE_INFO_STRUCT_SIZE_1_0, sizeof(aotrun_package_info));
  expect_size("AOTRUN_TENSOR_INFO_STRUCT_SIZE_1_0", AOTRUN_TENSOR_INFO_STRUCT_SIZE_1_0, sizeof(aotrun_tensor_info));
  expect_size("AOTRUN_SYMBOL_INFO_STRUCT_SIZE_1_0", AOTRUN_SYMBOL_INFO_STRUCT_SIZE_1_0, sizeof(aotrun_symbol_info));
  expect_size("AOTRUN_RUNNER_STATS_STRUCT_SIZE_1_0", AOTRUN_RUNNER_STATS_STRUCT_SIZE_1_0, sizeof(aotrun_runner_stats));
#ifdef AOTRUN_API_VERSION_1_2
  expect_size("AOTRUN_CONSTANT_INFO_STRUCT_SIZE_1_2", AOTRUN_CONSTANT_INFO_STRUCT_SIZE_1_2,
              sizeof(aotrun_constant_info));
  expect_size("AOTRUN_CONSTANTS_STATE_STRUCT_SIZE_1_2", AOTRUN_CONSTANTS_STATE_STRUCT_SIZE_1_2,
              sizeof(aotrun_constants_state));
#endif
  expect_size("AOTRUN_PKG_HOST_STRUCT_SIZE_1_0", AOTRUN_PKG_HOST_STRUCT_SIZE_1_0, sizeof(aotrun_pkg_host));
  expect_size("AOTRUN_PKG_CREATE_ARGS_STRUCT_SIZE_1_0", AOTRUN_PKG_CREATE_ARGS_STRUCT_SIZE_1_0,
              sizeof(aotrun_pkg_create_args));
  expect_size("AOTRUN_PKG_TENSOR_SPEC_STRUCT_SIZE_1_0", AOTRUN_PKG_TENSOR_SPEC_STRUCT_SIZE_1_0,
              sizeof(aotrun_pkg_tensor_spec));
  expect_size("AOTRUN_PKG_SHAPE_ARGS_STRUCT_SIZE_1_0", AOTRUN_PKG_SHAPE_ARGS_STRUCT_SIZE_1_0,
              sizeof(aotrun_pkg_shape_args));
  expect_size("AOTRUN_PKG_RUN_ARGS_STRUCT_SIZE_1_0", AOTRUN_PKG_RUN_ARGS_STRUCT_SIZE_1_0, sizeof(aotrun_pkg_run_args));

  /* Values that are ABI as much as layouts are. */
  expect_int("AOTRUN_OK", AOTRUN_OK, 0);
  expect_int("AOTRUN_ERR_INVALID_ARGUMENT", AOTRUN_ERR_INVALID_ARGUMENT, 1);
  expect_int("AOTRUN_ERR_NOT_FOUND", AOTRUN_ERR_NOT_FOUND, 2);
  expect_int("AOTRUN_ERR_LOAD_FAILED", AOTRUN_ERR_LOAD_FAILED, 3);
  expect_int("AOTRUN_ERR_ABI_MISMATCH", AOTRUN_ERR_ABI_MISMATCH, 4);
  expect_int("AOTRUN_ERR_MISSING_SYMBOL", AOTRUN_ERR_MISSING_SYMBOL, 5);
  expect_int("AOTRUN_ERR_INTEGRITY", AOTRUN_ERR_INTEGRITY, 6);
  expect_int("AOTRUN_ERR_BAD_PACKAGE", AOTRUN_ERR_BAD_PACKAGE, 7);
  expect_int("AOTRUN_ERR_UNSUPPORTED", AOTRUN_ERR_UNSUPPORTED, 8);
  expect_int("AOTRUN_ERR_PACKAGE", AOTRUN_ERR_PACKAGE, 9);
  expect_int("AOTRUN_ERR_OUT_OF_MEMORY", AOTRUN_ERR_OUT_OF_MEMORY, 10);
  expect_int("AOTRUN_ERR_WOULD_BLOCK", AOTRUN_ERR_WOULD_BLOCK, 11);
  expect_int("AOTRUN_ERR_TIMEOUT", AOTRUN_ERR_TIMEOUT, 12);
  expect_int("AOTRUN_ERR_CAPTURE_UNSUPPORTED", AOTRUN_ERR_CAPTURE_UNSUPPORTED, 13);
  expect_int("AOTRUN_ERR_CAPTURE_INVALIDATED", AOTRUN_ERR_CAPTURE_INVALIDATED, 14);
  expect_int("AOTRUN_ERR_DEVICE", AOTRUN_ERR_DEVICE, 15);
  expect_int("AOTRUN_ERR_INTERNAL", AOTRUN_ERR_INTERNAL, 16);
  expect_int("AOTRUN_LOG_ERROR", AOTRUN_LOG_ERROR, 0);
  expect_int("AOTRUN_LOG_WARN", AOTRUN_LOG_WARN, 1);
  expect_int("AOTRUN_LOG_INFO", AOTRUN_LOG_INFO, 2);
  expect_int("AOTRUN_LOG_DEBUG", AOTRUN_LOG_DEBUG, 3);
  expect_int("AOTRUN_LOG_OFF", AOTRUN_LOG_OFF, -1);
  expect_int("AOTRUN_MODE_THREADED", AOTRUN_MODE_THREADED, 0);
  expect_int("AOTRUN_MODE_SINGLE_THREADED", AOTRUN_MODE_SINGLE_THREADED, 1);
  expect_int("AOTRUN_MODE_GRAPH", AOTRUN_MODE_GRAPH, 2);
  expect_int("AOTRUN_STREAM_INLINE", AOTRUN_STREAM_INLINE, 0);
  expect_int("AOTRUN_STREAM_WORKER", AOTRUN_STREAM_WORKER, 1);
  expect_int("AOTRUN_CAPTURE_GLOBAL", AOTRUN_CAPTURE_GLOBAL, 0);
  expect_int("AOTRUN_CAPTURE_THREAD_LOCAL", AOTRUN_CAPTURE_THREAD_LOCAL, 1);
  expect_int("AOTRUN_CAPTURE_RELAXED", AOTRUN_CAPTURE_RELAXED, 2);
  expect_int("AOTRUN_API_VERSION_1_0", AOTRUN_API_VERSION_1_0, 0x010000);
  expect_int("AOTRUN_PKG_ABI_MAJOR", AOTRUN_PKG_ABI_MAJOR, 1);
  expect_int("AOTRUN_PKG_MAKE_VERSION(1, 1)", AOTRUN_PKG_MAKE_VERSION(1, 1), 0x10001);
  expect_int("AOTRUN_PKG_OK", AOTRUN_PKG_OK, 0);
  expect_int("AOTRUN_PKG_ERR_INVALID_ARGUMENT", AOTRUN_PKG_ERR_INVALID_ARGUMENT, 1);
  expect_int("AOTRUN_PKG_ERR_OUT_OF_MEMORY", AOTRUN_PKG_ERR_OUT_OF_MEMORY, 2);
  expect_int("AOTRUN_PKG_ERR_RUNTIME", AOTRUN_PKG_ERR_RUNTIME, 3);
  expect_int("AOTRUN_PKG_ERR_UNSUPPORTED", AOTRUN_PKG_ERR_UNSUPPORTED, 4);
  expect_int("AOTRUN_PKG_ERR_INTERNAL", AOTRUN_PKG_ERR_INTERNAL, 5);
  expect_int("AOTRUN_PKG_NOT_READY", AOTRUN_PKG_NOT_READY, 600);
  expect_int("AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED", AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED, 900);
  expect_int("AOTRUN_PKG_ERR_CAPTURE_INVALIDATED", AOTRUN_PKG_ERR_CAPTURE_INVALIDATED, 901);
  expect_int("AOTRUN_PKG_LOG_ERROR", AOTRUN_PKG_LOG_ERROR, 0);
  expect_int("AOTRUN_PKG_LOG_DEBUG", AOTRUN_PKG_LOG_DEBUG, 3);

  /* Symbol names are the package contract. */
  expect_str("AOTRUN_PKG_SYM_ABI_VERSION", AOTRUN_PKG_SYM_ABI_VERSION, "aotrun_pkg_abi_version");
  expect_str("AOTRUN_PKG_SYM_GET_LAST_ERROR", AOTRUN_PKG_SYM_GET_LAST_ERROR, "aotrun_pkg_get_last_error");
  expect_str("AOTRUN_PKG_SYM_CONTAINER_CREATE", AOTRUN_PKG_SYM_CONTAINER_CREATE, "aotrun_pkg_container_create");
  expect_str("AOTRUN_PKG_SYM_CONTAINER_DESTROY", AOTRUN_PKG_SYM_CONTAINER_DESTROY, "aotrun_pkg_container_destroy");
  expect_str("AOTRUN_PKG_SYM_GET_NUM_INPUTS", AOTRUN_PKG_SYM_GET_NUM_INPUTS, "aotrun_pkg_container_get_num_inputs");
  expect_str("AOTRUN_PKG_SYM_GET_NUM_OUTPUTS", AOTRUN_PKG_SYM_GET_NUM_OUTPUTS, "aotrun_pkg_container_get_num_outputs");
  expect_str("AOTRUN_PKG_SYM_GET_INPUT_SPEC", AOTRUN_PKG_SYM_GET_INPUT_SPEC, "aotrun_pkg_container_get_input_spec");
  expect_str("AOTRUN_PKG_SYM_GET_OUTPUT_SPEC", AOTRUN_PKG_SYM_GET_OUTPUT_SPEC, "aotrun_pkg_container_get_output_spec");
  expect_str("AOTRUN_PKG_SYM_GET_OUTPUT_SHAPES", AOTRUN_PKG_SYM_GET_OUTPUT_SHAPES,
             "aotrun_pkg_container_get_output_shapes");
  expect_str("AOTRUN_PKG_SYM_RUN", AOTRUN_PKG_SYM_RUN, "aotrun_pkg_container_run");
#if AOTRUN_PKG_ABI_MINOR >= 1
  expect_int("AOTRUN_PKG_ABI_VERSION (>= 1.1)", AOTRUN_PKG_ABI_VERSION >= AOTRUN_PKG_MAKE_VERSION(1, 1), 1);
  expect_str("AOTRUN_PKG_SYM_RUN_SINGLE_THREADED", AOTRUN_PKG_SYM_RUN_SINGLE_THREADED,
             "aotrun_pkg_container_run_single_threaded");
#endif

  printf("%s\n", g_failures ? "FAILED" : "all layouts, values and names as released");
  return g_failures ? 1 : 0;
}

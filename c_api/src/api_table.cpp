// aotrun_get_api: the append-only function table for dlopen users.
#include <aotrun/aotrun.h>

namespace {

aotrun_api make_table() {
  aotrun_api t{};
  t.version = AOTRUN_API_VERSION;
  t.version_number = &aotrun_version;
  t.version_string = &aotrun_version_string;
  t.status_code = &aotrun_status_code;
  t.status_message = &aotrun_status_message;
  t.status_free = &aotrun_status_free;
  t.code_name = &aotrun_code_name;
  t.set_log_callback = &aotrun_set_log_callback;
  t.set_log_level = &aotrun_set_log_level;
  t.get_log_level = &aotrun_get_log_level;
  t.package_options_create = &aotrun_package_options_create;
  t.package_options_free = &aotrun_package_options_free;
  t.package_options_set_verify_hashes = &aotrun_package_options_set_verify_hashes;
  t.package_open = &aotrun_package_open;
  t.package_close = &aotrun_package_close;
  t.mode_name = &aotrun_mode_name;
  t.package_get_info = &aotrun_package_get_info;
  t.package_get_input = &aotrun_package_get_input;
  t.package_get_output = &aotrun_package_get_output;
  t.package_get_symbol = &aotrun_package_get_symbol;
  t.package_mode_available = &aotrun_package_mode_available;
  t.runner_options_create = &aotrun_runner_options_create;
  t.runner_options_free = &aotrun_runner_options_free;
  t.runner_options_set_mode = &aotrun_runner_options_set_mode;
  t.runner_options_set_num_models = &aotrun_runner_options_set_num_models;
  t.runner_options_set_strict = &aotrun_runner_options_set_strict;
  t.runner_options_set_device = &aotrun_runner_options_set_device;
  t.runner_create = &aotrun_runner_create;
  t.runner_destroy = &aotrun_runner_destroy;
  t.runner_mode = &aotrun_runner_mode;
  t.runner_get_output_shapes = &aotrun_runner_get_output_shapes;
  t.runner_run = &aotrun_runner_run;
  t.runner_run_alloc = &aotrun_runner_run_alloc;
  t.runner_get_stats = &aotrun_runner_get_stats;
  t.runner_options_set_graph_warmup_runs = &aotrun_runner_options_set_graph_warmup_runs;
  t.runner_options_set_graph_cache_limit = &aotrun_runner_options_set_graph_cache_limit;
  t.runner_options_set_graph_frozen = &aotrun_runner_options_set_graph_frozen;
  t.runner_options_add_capture_shapes = &aotrun_runner_options_add_capture_shapes;
  t.runner_options_set_max_inflight = &aotrun_runner_options_set_max_inflight;
  t.runner_evict_graphs = &aotrun_runner_evict_graphs;
  t.runner_freeze_graphs = &aotrun_runner_freeze_graphs;
  t.runner_run_async = &aotrun_runner_run_async;
  t.runner_try_run_async = &aotrun_runner_try_run_async;
  t.runner_run_async_timeout = &aotrun_runner_run_async_timeout;
  t.runner_wait_all = &aotrun_runner_wait_all;
  t.event_is_ready = &aotrun_event_is_ready;
  t.event_wait = &aotrun_event_wait;
  t.event_wait_timeout = &aotrun_event_wait_timeout;
  t.event_set_callback = &aotrun_event_set_callback;
  t.event_free = &aotrun_event_free;
  t.stream_create = &aotrun_stream_create;
  t.stream_free = &aotrun_stream_free;
  t.stream_synchronize = &aotrun_stream_synchronize;
  t.stream_begin_capture = &aotrun_stream_begin_capture;
  t.stream_end_capture = &aotrun_stream_end_capture;
  t.stream_is_capturing = &aotrun_stream_is_capturing;
  t.graph_launch = &aotrun_graph_launch;
  t.graph_num_nodes = &aotrun_graph_num_nodes;
  t.graph_free = &aotrun_graph_free;
  t.runner_run_on_stream = &aotrun_runner_run_on_stream;
  t.package_options_set_expected_sha256 = &aotrun_package_options_set_expected_sha256;
  t.package_options_set_allow_untrusted_files = &aotrun_package_options_set_allow_untrusted_files;
  t.runner_run_on_cuda_stream = &aotrun_runner_run_on_cuda_stream;
  // 1.1
  t.package_options_set_pt2_model = &aotrun_package_options_set_pt2_model;
  t.package_options_set_libtorch = &aotrun_package_options_set_libtorch;
  // 1.2
  t.package_get_constant = &aotrun_package_get_constant;
  t.runner_update_constants = &aotrun_runner_update_constants;
  t.runner_update_constants_from_file = &aotrun_runner_update_constants_from_file;
  t.runner_swap_constants = &aotrun_runner_swap_constants;
  t.runner_free_inactive_constants = &aotrun_runner_free_inactive_constants;
  t.runner_get_constants_state = &aotrun_runner_get_constants_state;
  // 1.3
  t.package_options_set_provider = &aotrun_package_options_set_provider;
  t.package_get_provider = &aotrun_package_get_provider;
  t.package_options_set_pt2_pad_batch = &aotrun_package_options_set_pt2_pad_batch;
  t.package_get_input_model_name = &aotrun_package_get_input_model_name;
  t.package_get_output_model_name = &aotrun_package_get_output_model_name;
  t.package_options_set_pt2_above_compiled_max = &aotrun_package_options_set_pt2_above_compiled_max;
  t.package_preview_provider = &aotrun_package_preview_provider;
  return t;
}

const aotrun_api g_table = make_table();

}  // namespace

extern "C" const aotrun_api* aotrun_get_api(uint32_t version) {
  // Same major, and not newer than this library: older clients get the same
  // table, whose leading slots are theirs.
  if ((version >> 16) != AOTRUN_VERSION_MAJOR || version > AOTRUN_API_VERSION) return nullptr;
  return &g_table;
}

// A model library may be unloaded (dlclose) once nothing of it is alive
// (aoti_library.hpp); the libraries it pulled in must not go with it. A
// dependency may run threads that outlive any model call (libgomp's worker
// pool idles in libgomp's code between parallel regions) or hold state that
// other libraries point into, so every library the model names in
// DT_NEEDED is made RTLD_NODELETE right after the model is loaded: it stays
// for the life of the process, loaded once however many models need it.
#pragma once

namespace aotrun::pt2 {

// `handle`: a dlopen handle of the model. Best effort (a name the loader
// cannot find again is skipped: it was not loaded by this handle); never
// throws.
void pin_dependencies(void* handle) noexcept;

}  // namespace aotrun::pt2

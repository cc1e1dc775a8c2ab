// A stand-in for an AOTInductor model library, for the checks made before
// dlopen (cpp/package/pt2/provider/link_check.cpp): it calls one libtorch shim function every
// libtorch has and one that none has, and needs libstdc++ (std::terminate,
// version GLIBCXX_3.4). Never loaded: only its tables are read.
extern "C" int aoti_torch_delete_tensor_object(void*);
extern "C" int aoti_torch_from_a_future_release(void*);

#include <exception>

extern "C" int aotrun_link_probe(void* p) {
  if (p == nullptr) std::terminate();
  return aoti_torch_delete_tensor_object(p) + aoti_torch_from_a_future_release(p);
}

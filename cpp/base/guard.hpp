// The one place that turns exceptions into statuses. Every barrier (the C
// API's guarded(), calls into package code, the .pt2 bridge's entry points,
// worker threads and completion tasks) catches with catch (...) and asks
// caught() what it caught, so the classification is written once; each
// barrier only words the result in its own vocabulary.
//
// Calls into package code: the package ABI forbids exceptions, but a C++
// package not built with the SDK may still throw, from an entry point, a
// launched function or a context destructor. Every call into package code goes
// through guard_package_call, so a throw of any type becomes a PACKAGE error
// naming the package and the entry point, never INTERNAL (reserved for
// aotrun's own bugs) and never std::terminate (worker threads and destructors
// are noexcept).
#pragma once

#include <aotrun/package_abi.h>
#include <cxxabi.h>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <typeinfo>
#include <utility>

#include "base/error.hpp"
#include "base/log.hpp"

namespace aotrun {
namespace detail {

inline std::string demangled(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string s = (status == 0 && d != nullptr) ? d : name;
  std::free(d);
  return s;
}

// What the exception being handled is, for messages: "threw T: what()".
// Call only from inside a catch block. May throw std::bad_alloc.
inline std::string describe_thrown() {
  try {
    throw;
  } catch (const std::exception& e) {
    return "threw " + demangled(typeid(e).name()) + ": " + e.what();
  } catch (...) {
    const std::type_info* t = abi::__cxa_current_exception_type();
    return std::string("threw an exception that is not a std::exception") +
           (t != nullptr ? " (" + demangled(t->name()) + ")" : std::string());
  }
}

}  // namespace detail

// The exception being handled, sorted: aotrun's Error (with its code), out of
// memory, any other std::exception, anything else. `what` is what() of the
// first three ("" when there is no memory to copy it). Call only from inside
// a catch block.
struct Caught {
  enum class Kind { Error, OutOfMemory, Exception, Other };
  Kind kind = Kind::Other;
  Code code = Code::Internal;
  std::string what;
};

inline Caught caught() noexcept {
  Caught c;
  const char* what = nullptr;
  try {
    throw;
  } catch (const Error& e) {
    c.kind = Caught::Kind::Error;
    c.code = e.code();
    what = e.what();
  } catch (const std::bad_alloc& e) {
    c.kind = Caught::Kind::OutOfMemory;
    c.code = Code::OutOfMemory;
    what = e.what();
  } catch (const std::exception& e) {
    c.kind = Caught::Kind::Exception;
    what = e.what();
  } catch (...) {
  }
  try {
    if (what != nullptr) c.what = what;
  } catch (...) {
  }
  return c;
}

// The PACKAGE status for the exception being handled. Call only from inside
// a catch block. Without memory for the message the code still tells.
inline Status package_threw(const std::string& package, const char* entry) noexcept {
  Status st;
  st.code = Code::Package;
  try {
    st.message = "package '" + package + "': " + entry + " " + detail::describe_thrown();
  } catch (...) {
    st.message.clear();
  }
  return st;
}

// Runs `f`, a call into package code returning the package's int32_t status.
// Ok with *rc set when it returned; the PACKAGE status when it threw.
template <class F>
Status guard_package_call(const std::string& package, const char* entry, F&& f, int32_t* rc) noexcept {
  try {
    *rc = std::forward<F>(f)();
    return Status::Ok();
  } catch (...) {
    return package_threw(package, entry);
  }
}

// The same for code that reports with Error: returns the package's status,
// throws Error(Package) when the package threw.
template <class F>
int32_t package_call(const std::string& package, const char* entry, F&& f) {
  int32_t rc = 0;
  Status st = guard_package_call(package, entry, std::forward<F>(f), &rc);
  if (!st.ok()) throw Error(st.code, st.message);
  return rc;
}

// The package's message for its last failure on this thread (its
// get_last_error, itself guarded), never empty.
std::string package_last_error(aotrun_pkg_get_last_error_fn get_last_error);

// For a failure nobody can be told about (a destructor, a graph's release):
// logs it as an error. Never throws.
inline void log_unreported(const Status& st, const char* consequence) noexcept {
  try {
    log(LogLevel::Error, st.message + " (" + consequence + ")");
  } catch (...) {
  }
}

// The status for an exception escaping aotrun's own code where nothing may
// propagate (worker threads, completion tasks): Error keeps its code,
// bad_alloc is OUT_OF_MEMORY, anything else is INTERNAL (an aotrun bug: a
// package's throw was already turned into PACKAGE at its call). Call only
// from inside a catch block.
inline Status current_exception_status(const char* where) noexcept {
  const Caught c = caught();
  Status st;
  st.code = c.code;
  try {
    switch (c.kind) {
      case Caught::Kind::Error: st.message = c.what; break;
      case Caught::Kind::OutOfMemory: st.message = std::string(where) + ": out of memory"; break;
      default:
        st.message = std::string("internal error in ") + where + ": unexpected exception, " + detail::describe_thrown();
    }
  } catch (...) {
  }
  return st;
}

}  // namespace aotrun

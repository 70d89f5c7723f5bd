// The oneDNN engine and stream every CPU primitive runs on, and a cache of built primitives.
//
// Building a oneDNN primitive (JIT-compiling its kernel) costs far more than running it on a
// small batch, so each kernel file keys the primitives it builds by shape and options and
// builds each one once; the steady state of a training loop builds nothing.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

namespace imerge::cpu {

dnnl::engine& dnnlEngine();
dnnl::stream& dnnlStream();

// A cache from a text key ("conv_fwd 16x3x28x28 ...") to anything a kernel wants to keep:
// primitives, their descriptors, reordered weights' layouts.
template <typename Entry>
class PrimitiveCache {
 public:
  template <typename Build>
  Entry& getOrBuild(const std::string& key, Build&& build) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = entries_.find(key);
    if (found == entries_.end()) {
      found = entries_.emplace(key, std::make_unique<Entry>(build())).first;
    }
    return *found->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<Entry>> entries_;
};

}  // namespace imerge::cpu

#include "core/cpu/dnnl_context.h"

namespace imerge::cpu {

dnnl::engine& dnnlEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& dnnlStream() {
  static dnnl::stream stream(dnnlEngine());
  return stream;
}

}  // namespace imerge::cpu

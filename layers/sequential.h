// Sequential: children applied in order, named "0", "1", ... as in PyTorch.
#pragma once

#include <initializer_list>

#include "layers/module.h"

namespace imerge::layers {

class Sequential : public Module {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);

  // Appends a child; returns it for further configuration.
  template <typename Child>
  std::shared_ptr<Child> add(std::shared_ptr<Child> module) {
    return registerModule(std::to_string(children().size()), std::move(module));
  }
  size_t size() const { return children().size(); }

  Variable forward(const Variable& input) override;
  std::string describe() const override;
};

}  // namespace imerge::layers
